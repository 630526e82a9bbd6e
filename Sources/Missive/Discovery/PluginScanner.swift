import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tries plugin files in a child process before a host loads them, as GStreamer's plugin scanner does.
///
/// For each plugin file that is new or changed since it was last scanned, discovery runs the scanner's
/// command with the file: the child loads the plugin (its initialisers, its entry, the descriptor checks)
/// and decodes each example of each type, taking its digest, push text, words and encoding. A file whose
/// child crashes, exits early or runs past the timeout is **blacklisted**: it is never loaded into the host,
/// discovery reports it with the reason, and its types stay registered from the metadata, so their messages
/// decode to ``UnknownMessage``s that carry the reason. The verdict is kept in the ``PluginMetadataCache``
/// with the file's identity and the SHA-256 of its content, so that files that passed are not scanned again
/// and a blacklisted file stays blacklisted until its content changes (touching it is not enough).
///
/// A refusal (a wrong ABI, a descriptor that disagrees with its metadata) is not a crash: the file passes the
/// scan and the host's own loader refuses it with the reason, as it would without a scanner.
///
/// The child is the scanner command: `missive` runs itself (`missive scan-plugin`); a host built on the
/// library ships the `missive-plugin-scanner` executable beside its own, or calls
/// ``runScan(arguments:)`` from its own executable. The child reports through a file its parent names, so
/// nothing a plugin prints can forge a verdict.
public struct PluginScanner: Sendable {
    /// The command to run: an executable and its first arguments. The plugin file and the result file
    /// are appended.
    public var command: [String]
    /// How long one file may take, in seconds, before its child is killed and the file blacklisted.
    public var timeout: Double
    /// How many children run at once.
    public var concurrency: Int

    /// A scanner that runs `command`.
    public init(command: [String], timeout: Double = 10, concurrency: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.command = command
        self.timeout = timeout
        self.concurrency = max(1, concurrency)
    }

    /// The name of the scanner executable for hosts built on the library.
    public static let executableName = "missive-plugin-scanner"

    /// The scanner a host built on the library uses: `MISSIVE_PLUGIN_SCANNER` if set (`off` disables it),
    /// else ``executableName`` beside the running executable, else none. `MISSIVE_SCAN_TIMEOUT` sets the
    /// timeout in seconds.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginScanner? {
        let timeout = standardTimeout(environment: environment)
        if let setting = environment["MISSIVE_PLUGIN_SCANNER"], !setting.isEmpty {
            return setting == "off" ? nil : PluginScanner(command: [setting], timeout: timeout)
        }
        guard let folder = PluginSearchPath.executableDirectory() else { return nil }
        let beside = folder + "/" + executableName
        return FileManager.default.isExecutableFile(atPath: beside) ? PluginScanner(command: [beside], timeout: timeout) : nil
    }

    /// `MISSIVE_SCAN_TIMEOUT` in seconds when it is a positive number, else 10.
    public static func standardTimeout(environment: [String: String] = ProcessInfo.processInfo.environment) -> Double {
        environment["MISSIVE_SCAN_TIMEOUT"].flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil } ?? 10
    }

    /// What scanning one file found.
    enum Verdict: Sendable, Equatable {
        /// The plugin loaded (or was refused cleanly) and handled its examples.
        case passed
        /// The child crashed or exited early: the reason.
        case failed(String)
        /// The child ran past the timeout, in seconds: the reason. A later scan with a longer timeout tries again.
        case hung(String, timeout: Double)
        /// The scanner itself could not run, which says nothing about the plugin: the reason.
        case unavailable(String)
    }

    /// Scans `files`, several at once, and gives each one's verdict in the same order.
    func scan(_ files: [String]) -> [Verdict] {
        guard !files.isEmpty else { return [] }
        let verdicts = Locked([Verdict](repeating: .unavailable("not scanned"), count: files.count))
        let next = Locked(0)
        let workers = min(concurrency, files.count)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let index: Int = next.withLock { value in
                    defer { value += 1 }
                    return value
                }
                guard index < files.count else { return }
                let verdict = scan(files[index])
                verdicts.withLock { $0[index] = verdict }
            }
        }
        return verdicts.withLock { $0 }
    }

    /// Scans one file in a child process.
    func scan(_ file: String) -> Verdict {
        guard let executable = command.first else { return .unavailable("the scanner command is empty") }
        let folder = FileManager.default.temporaryDirectory.path + "/missive-scan-\(getpid())-\(UUID().uuidString)"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            return .unavailable("cannot create a folder for the scan: \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let resultFile = folder + "/result", errorFile = folder + "/stderr"
        guard FileManager.default.createFile(atPath: resultFile, contents: nil), FileManager.default.createFile(atPath: errorFile, contents: nil) else {
            return .unavailable("cannot create the scan's files in \(folder)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(command.dropFirst()) + [file, resultFile]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        guard let errors = FileHandle(forWritingAtPath: errorFile) else { return .unavailable("cannot create the scan's error file") }
        process.standardError = errors
        var environment = ProcessInfo.processInfo.environment
        // The child must not arm a quarantine or scan again; it reports through the result file.
        environment["MISSIVE_QUARANTINE"] = "off"
        // The Swift runtime's backtrace would bury the plugin's own last words and take a second to write.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            try? errors.close()
            return .unavailable("cannot run the scanner \(executable): \(error.localizedDescription)")
        }
        try? errors.close()
        var hung = false
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            hung = true
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
        }
        let report = ScanReport(String(decoding: FileManager.default.contentsOfFile(atPath: resultFile) ?? Data(), as: UTF8.self))
        let stderrTail = Self.tail(of: errorFile)
        guard report.started else {
            return .unavailable("the scanner \(executable) did not start a scan (exit status \(process.terminationStatus))\(stderrTail.map { ": \($0)" } ?? "")")
        }
        let stage = report.stage.map { " during \($0)" } ?? ""
        let output = stderrTail.map { "; it wrote: \($0)" } ?? ""
        if hung {
            return .hung("hung\(stage): the scan did not finish in \(Self.seconds(timeout))", timeout: timeout)
        }
        if process.terminationReason == .uncaughtSignal {
            return .failed("crashed with \(PluginQuarantine.signalName(process.terminationStatus))\(stage)\(output)")
        }
        if !report.finished {
            return .failed("exited with status \(process.terminationStatus)\(stage), before the scan finished\(output)")
        }
        return .passed
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// The last line or two of what the child wrote to standard error, made printable; `nil` when it wrote nothing.
    private static func tail(of file: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: file) else { return nil }
        defer { try? handle.close() }
        let end = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: end > 1024 ? end - 1024 : 0)
        let bytes = (try? handle.readToEnd()) ?? Data()
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).suffix(3)
        let text = TextHygiene.line(lines.joined(separator: " | "))
        return text.isEmpty ? nil : text
    }

    /// What a child wrote to its result file.
    private struct ScanReport {
        var started = false, finished = false
        var stage: String?

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                if line == "scan 1" { started = true }
                if line.hasPrefix("stage\t") { stage = String(line.dropFirst(6)) }
                if line == "passed" || line.hasPrefix("refused\t") { finished = true }
            }
        }
    }

    /// The child's side: scans the plugin file `arguments[0]` and writes the verdict to the result file
    /// `arguments[1]`. Returns the exit status: 0 when the scan ran (whatever it found), 2 for a usage error.
    ///
    /// Call it from a host's own executable when it passes that executable as the scanner command.
    public static func runScan(arguments: [String]) -> Int32 {
        guard arguments.count == 2 else {
            _ = FileBytes.writeAll("usage: \(executableName) PLUGIN-FILE RESULT-FILE\n".utf8, to: STDERR_FILENO)
            return 2
        }
        let (file, resultFile) = (arguments[0], arguments[1])
        CrashGuard.endWithParent()
        let result = open(resultFile, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard result >= 0 else {
            _ = FileBytes.writeAll("\(executableName): cannot write \(resultFile)\n".utf8, to: STDERR_FILENO)
            return 2
        }
        // Each line is written before the step it names runs, so that a crash leaves the last one behind. A
        // write that fails (a plugin closed the descriptor) leaves the report unfinished, which the host reads
        // as a scan that did not finish.
        func write(_ line: String) { _ = FileBytes.writeAll((line + "\n").utf8, to: result) }
        write("scan 1")
        let plugin: LoadedPlugin
        do {
            write("stage\tload (the library's initialisers)")
            try PluginLoader.openLibrary(file)
            write("stage\tentry")
            plugin = try PluginLoader.load(file)
        } catch {
            write("refused\t\(error.code)\t\(TextHygiene.line(error.message))")
            return 0
        }
        for type in plugin.types {
            for (index, example) in type.examples.enumerated() {
                let name = "\(type.objectName) example \(index)"
                write("stage\tdecode of \(name)")
                guard case .success(let content) = example.withUnsafeBufferPointer({ type.decode($0, received: example) }) else { continue }
                write("stage\tdigest of \(name)")
                _ = content.digest
                write("stage\tpush text of \(name)")
                _ = content.pushContent
                write("stage\twords of \(name)")
                _ = content.searchableWords
                write("stage\tencode of \(name)")
                _ = try? content.typeEncodedContent()
                write("stage\trelease of \(name)")
            }
        }
        write("passed")
        return 0
    }
}
