import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The plugins that crashed a host, and the journal that records them.
///
/// Plugins run in the host's process, so a plugin that crashes takes the host down. What a host can do is
/// not to run it again: once a quarantine is armed (``MessageRegistry/Builder/discoverPlugins(searchPath:metadataCache:loading:protection:logger:)``
/// does so when its ``PluginProtection`` has one), a fatal signal (`SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGFPE`,
/// `SIGABRT`, `SIGSYS`) that arrives while a thread runs plugin code appends one line to the journal, naming
/// the plugin file, the type, the operation and the signal. The handler uses only `write(2)` on a file opened
/// beforehand, so it is safe in a signal handler, and then hands the signal to the handler installed before
/// it, so the process still dies as it would have (with the Swift runtime's or a sanitizer's report).
///
/// On the next start, a plugin with a record for its current file (same path, device, inode, size and
/// modification time) is **quarantined**: it is not loaded, discovery reports it with the reason, and its types
/// stay registered from the metadata, so their messages decode to ``UnknownMessage``s that keep every byte and
/// carry the reason. The quarantine ends when the file changes (a new build or version) or when an operator
/// clears it (``clear(_:)``, `missive quarantine clear`).
///
/// The journal is text, one crash per line, tab-separated, with `\\`, `\t` and `\n` escaped in the path:
/// ```
/// crash	path	device	inode	size	mtime-seconds	mtime-nanoseconds	objectName (- for none)	operation	signal	unix-time
/// ```
/// A fault on a thread that runs no plugin call (a thread the plugin started) is recorded with the operation
/// `thread`, when its address lies in a plugin's loaded segments or a return address in its stack does; a
/// call of `exit` inside a plugin call is recorded with `exit` in the signal field, and the process then ends
/// with status 70 instead of the status the plugin gave.
public final class PluginQuarantine: Sendable {
    /// The journal file.
    public let file: String

    /// A quarantine whose journal is `file`. A relative path is made absolute here, against the working
    /// directory of now, before any plugin code runs (a plugin may change the directory; see
    /// ``MissiveError/Code/changedProcessState``).
    public init(file: String) {
        self.file = file.hasPrefix("/") || file.isEmpty ? file : FileManager.default.currentDirectoryPath + "/" + file
    }

    /// The quarantine the `missive` command uses: `MISSIVE_QUARANTINE` if set (`off` disables it), else
    /// `$XDG_STATE_HOME/missive/plugin-crashes`, else `~/.local/state/missive/plugin-crashes`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginQuarantine? {
        if let setting = environment["MISSIVE_QUARANTINE"], !setting.isEmpty {
            return setting == "off" ? nil : PluginQuarantine(file: setting)
        }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return PluginQuarantine(file: state + "/missive/plugin-crashes") }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return PluginQuarantine(file: home + "/.local/state/missive/plugin-crashes")
    }

    /// One crash the journal records.
    public struct Crash: Sendable, Hashable, CustomStringConvertible {
        /// The plugin file.
        public let path: String
        /// The type whose function was running, if the crash was in one.
        public let objectName: String?
        /// What the plugin was running: `load` (its initialisers), `entry`, `decode`, `release`, `encode`,
        /// `digest`, `push`, `words`, `media`, `view`, `action` or `texts`; or `thread` for a fault outside
        /// any call (a thread the plugin started), attributed to the plugin by the faulting address.
        public let operation: String
        /// The signal's number; 0 when the plugin called `exit` during a call (the journal's `exit`).
        public let signal: Int32
        /// When it happened.
        public let date: Date
        /// The file as it was when it crashed.
        let identity: FileIdentity?

        /// Whether the plugin file is still the one that crashed, so that the crash quarantines it.
        public var isCurrent: Bool { identity != nil && FileIdentity.of(path)?.withoutChangeTime == identity }

        /// `SIGSEGV (signal 11) during decode of fixture:crash at 2026-11-24T15:00:00Z`.
        public var description: String {
            let during = objectName.map { "\(operation) of \($0)" } ?? operation
            return "\(PluginQuarantine.signalName(signal)) during \(during) at \(date.formatted(.iso8601))"
        }
    }

    /// Every crash the journal records, oldest first; none when there is no journal. Lines that cannot be
    /// read are skipped.
    public func crashes() -> [Crash] {
        guard let data = FileManager.default.contentsOfFile(atPath: file) else { return [] }
        return [UInt8](data).split(separator: 0x0A).compactMap(Self.parse)
    }

    /// The crash that quarantines the plugin file at `path` as it is now, if any (the latest, when several do).
    public func crash(quarantining path: String) -> Crash? {
        crash(quarantining: path, identity: FileIdentity.of(path), in: crashes())
    }

    func crash(quarantining path: String, identity: FileIdentity?, in crashes: [Crash]) -> Crash? {
        guard let identity else { return nil }
        // The journal records no status-change time.
        let recorded = identity.withoutChangeTime
        return crashes.last { $0.path == path && $0.identity == recorded }
    }

    /// Removes the records of the plugin files `paths` (every record when `nil`), so that they load again,
    /// and returns what it removed. A path is compared as given and resolved, so a link to a plugin clears it.
    ///
    /// The journal is rewritten in place, so that hosts running now, which hold it open for appending, keep
    /// writing to it.
    public func clear(_ paths: [String]? = nil) throws(MissiveError) -> [Crash] {
        guard let data = FileManager.default.contentsOfFile(atPath: file) else { return [] }
        let names = paths.map { Set($0 + $0.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }) }
        var kept: [UInt8] = []
        var removed: [Crash] = []
        for line in [UInt8](data).split(separator: 0x0A) {
            if let crash = Self.parse(line), names?.contains(crash.path) ?? true {
                removed.append(crash)
            } else {
                kept += line + [0x0A]
            }
        }
        guard !removed.isEmpty else { return [] }
        let descriptor = open(file, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw MissiveError(.ioFailure, "cannot rewrite the quarantine journal: \(String(cString: strerror(errno)))", file: file) }
        defer { close(descriptor) }
        let written = kept.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == kept.count, ftruncate(descriptor, off_t(kept.count)) == 0 else {
            throw MissiveError(.ioFailure, "cannot rewrite the quarantine journal: \(String(cString: strerror(errno)))", file: file)
        }
        return removed
    }

    /// The journals this process has open, by file; the signal handler writes to the last one armed.
    private static let journals = Locked<[String: Int32]>([:])

    /// Opens the journal for appending (creating it and its folder) and installs the signal handler, once
    /// per process and file. Returns the crashes recorded so far.
    func arm() throws(MissiveError) -> [Crash] {
        let descriptor: Int32 = try Self.journals.withLock { (journals: inout [String: Int32]) throws(MissiveError) -> Int32 in
            if let open = journals[file] { return open }
            try? FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let descriptor = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw MissiveError(.ioFailure, "cannot open the quarantine journal: \(String(cString: strerror(errno)))", file: file)
            }
            journals[file] = descriptor
            return descriptor
        }
        if let error = CrashGuard.install(journal: descriptor) {
            throw MissiveError(.ioFailure, "cannot install the crash handler: \(String(cString: strerror(error)))", file: file)
        }
        return crashes()
    }

    /// The prefix of the operation of a record written by ``append(path:identity:objectName:operation:signal:date:)``:
    /// an isolated plugin's worker failed, not the host.
    static let isolatedPrefix = "isolated-"

    /// Appends the record of a crash that did not end this process: an isolated plugin whose worker failed too
    /// often (``PluginIsolation/crashLimit``). `signal` 0 is written as `exit`. A journal that cannot be written is
    /// passed over: the plugin is out of service in this process all the same.
    func append(path: String, identity: FileIdentity?, objectName: String?, operation: String, signal: Int32, date: Date) {
        let line = Self.record(path: path, identity: identity, objectName: objectName)
            + "\t\(operation)\t\(signal == 0 ? "exit" : String(signal))\t\(Int64(date.timeIntervalSince1970))\n"
        try? FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let descriptor = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        _ = FileBytes.writeAll(line.utf8, to: descriptor)
        close(descriptor)
    }

    /// The journal record of a plugin file (or one of its types), up to the operation.
    static func record(path: String, identity: FileIdentity?, objectName: String?) -> String {
        recordPrefix(path: path, identity: identity) + JournalText.escape(objectName ?? "-")
    }

    /// The part of a record that every record of one file shares: up to its type's objectName, tab included.
    static func recordPrefix(path: String, identity: FileIdentity?) -> String {
        var bytes = Array("crash\t".utf8)
        bytes.reserveCapacity(path.utf8.count + 120)
        bytes += JournalText.escape(path).utf8
        guard let identity else { return String(decoding: bytes + "\t-\t-\t-\t-\t-\t".utf8, as: UTF8.self) }
        // Digits written directly: string interpolation of five integers cost more than the rest of a site.
        func append<T: BinaryInteger>(_ value: T) {
            bytes.append(0x09)
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = value.magnitude
            let start = bytes.count
            repeat {
                bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            bytes[start...].reverse()
        }
        append(identity.device)
        append(identity.inode)
        append(identity.size)
        append(identity.seconds)
        append(identity.nanoseconds)
        bytes.append(0x09)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func parse(_ line: ArraySlice<UInt8>) -> Crash? {
        let fields = line.split(separator: 0x09, omittingEmptySubsequences: false).map(JournalText.unescape)
        guard fields.count == 11, fields[0] == "crash", let signal = fields[9] == "exit" ? 0 : Int32(fields[9]), let time = Int64(fields[10]) else {
            return nil
        }
        var identity: FileIdentity?
        if let device = UInt64(fields[2]), let inode = UInt64(fields[3]), let size = Int64(fields[4]), let seconds = Int64(fields[5]),
           let nanoseconds = Int64(fields[6])
        {
            identity = FileIdentity(device: device, inode: inode, size: size, seconds: seconds, nanoseconds: nanoseconds)
        }
        return Crash(path: fields[1], objectName: fields[7] == "-" ? nil : fields[7], operation: fields[8], signal: signal,
                     date: Date(timeIntervalSince1970: TimeInterval(time)), identity: identity)
    }

    /// `SIGSEGV (signal 11)`; `exit()` for 0, a call of `exit` during a plugin call.
    static func signalName(_ signal: Int32) -> String {
        if signal == 0 { return "exit()" }
        let names: [Int32: String] = [SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGABRT: "SIGABRT", SIGSYS: "SIGSYS",
                                      SIGKILL: "SIGKILL", SIGTERM: "SIGTERM"]
        return names[signal].map { "\($0) (signal \(signal))" } ?? "signal \(signal)"
    }
}

/// The escaping of the metadata cache and the quarantine journal: `\\`, `\t` and `\n`.
enum JournalText {
    static func escape(_ text: String) -> String {
        // By bytes: the three are ASCII, and going by Characters would break graphemes on every path.
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A }) else { return text }
        return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func unescape(_ field: ArraySlice<UInt8>) -> String {
        guard field.contains(UInt8(ascii: "\\")) else { return String(decoding: field, as: UTF8.self) }
        var out: [UInt8] = []
        var escaping = false
        for byte in field {
            if escaping {
                out.append(byte == UInt8(ascii: "t") ? 0x09 : byte == UInt8(ascii: "n") ? 0x0A : byte)
                escaping = false
            } else if byte == UInt8(ascii: "\\") {
                escaping = true
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
