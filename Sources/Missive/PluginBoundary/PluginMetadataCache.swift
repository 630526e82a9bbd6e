import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What identifies one version of a file: its device, inode, size and modification time.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64, inode: UInt64, size: Int64, seconds: Int64, nanoseconds: Int64

    /// The identity of the regular file at `path` (following links), or `nil` when it is not one.
    static func of(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileIdentity(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec))
    }
}

/// A cache of plugin metadata, so that startup need not open and parse every plugin file, as GStreamer's
/// registry cache does.
///
/// An entry is used only when the file's path, device, inode, size and modification time are all unchanged.
/// The cache never vouches for a plugin: after loading, the descriptor is still compared with the metadata,
/// so a stale or tampered cache can only make a plugin be refused, never make it load under false metadata.
/// An unreadable or malformed cache file is ignored and rewritten. Writes are atomic (a temporary file,
/// then `rename`).
///
/// The file is line-based, tab-separated text, with `\\`, `\t` and `\n` escaped:
/// ```
/// missive-plugin-metadata-cache	4
/// P	path	device	inode	size	mtime-seconds	mtime-nanoseconds	name	version	vendor	abi	abi-minor	swift (empty for none)
/// C	objectName	key	keyKind
/// T	objectName	businessID (empty for none)	persistence	media (0 or 1)	container (empty for none)
/// A	kind	objectName	id	title	icon	priority	yields	signature	symbol (empty for none)
/// S	passed or failed	sha256 of the file	Missive version that scanned it	reason (empty when passed)	timeout in seconds (a hung scan only)
/// ```
/// Each `P` line is followed by its plugin's `C`, `T`, `A` and `S` lines. The `S` line is the
/// ``PluginScanner``'s verdict. A cache of another format version is ignored and rewritten.
public final class PluginMetadataCache: Sendable {
    /// The file the cache is kept in.
    public let file: String

    private struct Entry: Sendable {
        var identity: FileIdentity
        var metadata: PluginMetadata
        var used: Bool
        var scan: ScanRecord?
    }

    /// What the plugin scanner found for one version of a file.
    struct ScanRecord: Sendable, Equatable {
        /// Whether the file passed.
        var passed: Bool
        /// The SHA-256 of the file's content, in hexadecimal.
        var contentHash: String
        /// The Missive version that scanned it; another version scans again.
        var hostVersion: String
        /// Why it failed; empty when it passed.
        var reason: String
        /// For a scan that ran past its timeout, that timeout in seconds: a scan with a longer one tries again.
        var hungAfter: Double? = nil
    }

    /// A plugin file the scanner blacklisted.
    public struct BlacklistedFile: Sendable, Hashable {
        /// The file.
        public let path: String
        /// Why: how its scan crashed, exited or hung.
        public let reason: String
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        var loaded = false
        var changed = false
        var hits = 0
        var misses = 0
        /// Scan failures of entries replaced because their file changed, by path: a file whose content is
        /// the same stays blacklisted.
        var replacedFailures: [String: ScanRecord] = [:]
    }

    private static let header = "missive-plugin-metadata-cache\t5"
    /// Entries for files not seen by a discovery are kept only while the cache holds fewer than this many.
    private static let capacity = 2_000
    private let state = Locked(State())

    /// A cache kept in `file`.
    public init(file: String) {
        self.file = file
    }

    /// The cache the `missive` command uses: `MISSIVE_METADATA_CACHE` if set (`off` disables it), else
    /// `$XDG_CACHE_HOME/missive/plugin-metadata-v1`, else `~/.cache/missive/plugin-metadata-v1`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginMetadataCache? {
        if let setting = environment["MISSIVE_METADATA_CACHE"], !setting.isEmpty {
            return setting == "off" ? nil : PluginMetadataCache(file: setting)
        }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return PluginMetadataCache(file: cache + "/missive/plugin-metadata-v1") }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return PluginMetadataCache(file: home + "/.cache/missive/plugin-metadata-v1")
    }

    /// How many lookups were answered from the cache, and how many had to read the file.
    public var statistics: (hits: Int, misses: Int) {
        state.withLock { ($0.hits, $0.misses) }
    }

    /// The metadata of the plugin at `path`, from the cache when the file is unchanged, else read from the
    /// file and remembered; and whether it came from the cache.
    func lookUp(_ path: String, identity: FileIdentity) throws(MissiveError) -> (metadata: PluginMetadata, fromCache: Bool) {
        let cached: PluginMetadata? = state.withLock { state in
            loadIfNeeded(&state)
            guard let entry = state.entries[path], entry.identity == identity else { return nil }
            state.entries[path]?.used = true
            state.hits += 1
            return entry.metadata
        }
        if let cached { return (cached, true) }
        let metadata = try PluginMetadata.read(fromFile: path)
        state.withLock { state in
            if let failure = state.entries[path]?.scan, !failure.passed { state.replacedFailures[path] = failure }
            state.entries[path] = Entry(identity: identity, metadata: metadata, used: true)
            state.changed = true
            state.misses += 1
        }
        return (metadata, false)
    }

    private func loadIfNeeded(_ state: inout State) {
        guard !state.loaded else { return }
        state.entries = Self.read(file) ?? [:]
        state.loaded = true
    }

    /// The scanner's verdict on the file at `path` as it is now (`identity`), by this version of Missive.
    func scanRecord(_ path: String, identity: FileIdentity) -> ScanRecord? {
        state.withLock { state in
            loadIfNeeded(&state)
            guard let entry = state.entries[path], entry.identity == identity, let scan = entry.scan, scan.hostVersion == MissiveVersion.string else {
                return nil
            }
            return scan
        }
    }

    /// The failed scan of an earlier version of the file at `path`, if it had one.
    func earlierFailure(_ path: String) -> ScanRecord? {
        state.withLock { $0.replacedFailures[path] }
    }

    /// Remembers the scanner's verdict on the file at `path` as it is now.
    func record(_ scan: ScanRecord, for path: String, identity: FileIdentity) {
        state.withLock { state in
            loadIfNeeded(&state)
            guard state.entries[path]?.identity == identity else { return }
            state.entries[path]?.scan = scan
            state.replacedFailures[path] = nil
            state.changed = true
        }
    }

    /// The files the scanner blacklisted, by path; an entry whose file changed since is still listed, as
    /// its next scan decides.
    public func blacklisted() -> [BlacklistedFile] {
        state.withLock { state in
            loadIfNeeded(&state)
            return state.entries.compactMap { path, entry in
                guard let scan = entry.scan, !scan.passed else { return nil }
                return BlacklistedFile(path: path, reason: scan.reason)
            }.sorted { $0.path < $1.path }
        }
    }

    /// Forgets the scanner's verdicts on `paths` (every file when `nil`), so that they are scanned again at
    /// the next start, and saves the cache; returns the blacklisted files it released.
    public func clearScans(_ paths: [String]? = nil) -> [BlacklistedFile] {
        let names = paths.map { Set($0 + $0.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }) }
        let released: [BlacklistedFile] = state.withLock { state in
            loadIfNeeded(&state)
            var released: [BlacklistedFile] = []
            for (path, entry) in state.entries where names?.contains(path) ?? true {
                guard let scan = entry.scan else { continue }
                if !scan.passed { released.append(BlacklistedFile(path: path, reason: scan.reason)) }
                state.entries[path]?.scan = nil
                state.changed = true
            }
            return released.sorted { $0.path < $1.path }
        }
        save()
        return released
    }

    /// Writes the cache back if it changed, dropping entries this discovery did not use once it is full.
    /// A cache that cannot be written is not an error: the next startup reads the files again.
    func save() {
        let text: String? = state.withLock { state in
            guard state.changed else { return nil }
            if state.entries.count > Self.capacity { state.entries = state.entries.filter(\.value.used) }
            state.changed = false
            var lines = [Self.header]
            for (path, entry) in state.entries.sorted(by: { $0.key < $1.key }) {
                let id = entry.identity, metadata = entry.metadata
                lines.append(["P", path, "\(id.device)", "\(id.inode)", "\(id.size)", "\(id.seconds)", "\(id.nanoseconds)",
                              metadata.name, metadata.version, metadata.vendor, "\(metadata.abiMajor)", "\(metadata.abiMinor)",
                              metadata.swiftVersion ?? ""].map(Self.escape).joined(separator: "\t"))
                for container in metadata.containers {
                    lines.append(["C", container.objectName, container.key, container.keyKind.rawValue].map(Self.escape).joined(separator: "\t"))
                }
                for type in metadata.types {
                    lines.append(["T", type.objectName, type.businessID ?? "", "\(type.persistenceValue)", type.isMedia ? "1" : "0", type.container ?? ""]
                        .map(Self.escape).joined(separator: "\t"))
                }
                for action in metadata.actions {
                    lines.append(["A", action.kind.rawValue, action.objectName, action.id, action.title, action.icon, "\(action.priority)",
                                  action.yields.rawValue, action.signature, action.symbol ?? ""].map(Self.escape).joined(separator: "\t"))
                }
                if let scan = entry.scan {
                    lines.append(["S", scan.passed ? "passed" : "failed", scan.contentHash, scan.hostVersion, scan.reason, scan.hungAfter.map { "\($0)" } ?? ""]
                        .map(Self.escape).joined(separator: "\t"))
                }
            }
            return lines.joined(separator: "\n") + "\n"
        }
        guard let text else { return }
        let folder = (file as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = file + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) else { return }
        if rename(temporary, file) != 0 { unlink(temporary) }
    }

    /// The entries of a cache file, or `nil` when it is missing or malformed. Works on bytes: splitting a
    /// `String` goes by grapheme clusters, which made this the slowest part of a cached startup.
    private static func read(_ file: String) -> [String: Entry]? {
        guard let data = FileManager.default.contentsOfFile(atPath: file) else { return nil }
        let bytes = [UInt8](data)
        let lines = bytes.split(separator: 0x0A)
        guard let first = lines.first, first.elementsEqual(header.utf8) else { return nil }
        var entries: [String: Entry] = [:]
        var current: (path: String, identity: FileIdentity, metadata: PluginMetadata, scan: ScanRecord?)?
        func finish() {
            if let current { entries[current.path] = Entry(identity: current.identity, metadata: current.metadata, used: false, scan: current.scan) }
        }
        for line in lines.dropFirst() {
            let fields = line.split(separator: 0x09, omittingEmptySubsequences: false)
            switch fields[0].count == 1 ? fields[0].first : nil {
            case UInt8(ascii: "P"):
                guard fields.count == 13, let device = UInt64(text(fields[2])), let inode = UInt64(text(fields[3])),
                      let size = Int64(text(fields[4])), let seconds = Int64(text(fields[5])),
                      let nanoseconds = Int64(text(fields[6])), let abi = Int(text(fields[10])), let abiMinor = Int(text(fields[11]))
                else { return nil }
                finish()
                let swift = text(fields[12])
                current = (text(fields[1]), FileIdentity(device: device, inode: inode, size: size, seconds: seconds, nanoseconds: nanoseconds),
                           PluginMetadata(name: text(fields[7]), version: text(fields[8]), vendor: text(fields[9]), abiMajor: abi,
                                          abiMinor: abiMinor, swiftVersion: swift.isEmpty ? nil : swift, types: []), nil)
            case UInt8(ascii: "C"):
                guard fields.count == 4, current != nil, let kind = MessageContainer.KeyKind(rawValue: text(fields[3])) else { return nil }
                current!.metadata.containers.append(MessageContainer(objectName: text(fields[1]), key: text(fields[2]), keyKind: kind))
            case UInt8(ascii: "T"):
                guard fields.count == 6, current != nil, let persistence = UInt32(text(fields[3])) else { return nil }
                let businessID = text(fields[2]), container = text(fields[5])
                current!.metadata.types.append(
                    PluginMetadata.TypeEntry(objectName: text(fields[1]), businessID: businessID.isEmpty ? nil : businessID,
                                             container: container.isEmpty ? nil : container,
                                             persistenceValue: persistence, isMedia: fields[4].elementsEqual([UInt8(ascii: "1")])))
            case UInt8(ascii: "A"):
                guard fields.count == 10, current != nil, let kind = ActionKind(rawValue: text(fields[1])), let priority = Int32(text(fields[6])),
                      let yields = ActionYield(rawValue: text(fields[7]))
                else { return nil }
                let symbol = text(fields[9])
                current!.metadata.actions.append(
                    PluginMetadata.ActionEntry(kind: kind, objectName: text(fields[2]), id: text(fields[3]), title: text(fields[4]), icon: text(fields[5]),
                                               priority: priority, yields: yields, signature: text(fields[8]), symbol: symbol.isEmpty ? nil : symbol))
            case UInt8(ascii: "S"):
                guard fields.count == 6, current != nil else { return nil }
                let verdict = text(fields[1])
                guard verdict == "passed" || verdict == "failed" else { return nil }
                current!.scan = ScanRecord(passed: verdict == "passed", contentHash: text(fields[2]), hostVersion: text(fields[3]), reason: text(fields[4]),
                                           hungAfter: Double(text(fields[5])))
            default:
                return nil
            }
        }
        finish()
        return entries
    }

    /// A field's text, unescaped.
    private static func text(_ field: ArraySlice<UInt8>) -> String { JournalText.unescape(field) }

    private static func escape(_ text: String) -> String { JournalText.escape(text) }
}
