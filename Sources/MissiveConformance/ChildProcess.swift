import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a child process with a time limit and collects its output.
enum ChildProcess {
    /// How a child ended.
    enum Termination: Sendable, Hashable {
        case exit(Int32)
        case signal(Int32)
        case timedOut
    }

    /// What a child did.
    struct Result: Sendable {
        var termination: Termination
        var stdout: Data
        var stderr: Data

        /// The last non-empty line of standard error, shortened, for crash reports.
        var lastErrorLine: String? {
            let line = String(decoding: stderr, as: UTF8.self).split(separator: "\n").last { !$0.allSatisfy(\.isWhitespace) }
            return line.map { String($0.prefix(200)) }
        }
    }

    /// Runs `executable` and waits at most `timeout` seconds before killing it with `SIGKILL`.
    static func run(executable: String, arguments: [String], timeout: Double) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // The Swift runtime's backtracer would spend time on every crash and bury the plugin's last words.
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()

        // Drain both pipes while the child runs, so that a chatty plugin cannot block on a full pipe.
        let outputs = Outputs()
        let readers = DispatchGroup()
        DispatchQueue.global().async(group: readers) { outputs.setStdout(out.fileHandleForReading.readDataToEndOfFile()) }
        DispatchQueue.global().async(group: readers) { outputs.setStderr(err.fileHandleForReading.readDataToEndOfFile()) }

        var timedOut = false
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
            finished.wait()
        }
        readers.wait()
        let termination: Termination =
            timedOut ? .timedOut
            : process.terminationReason == .uncaughtSignal ? .signal(process.terminationStatus) : .exit(process.terminationStatus)
        return Result(termination: termination, stdout: outputs.stdout, stderr: outputs.stderr)
    }

    /// `SIGSEGV (signal 11)` and the like.
    static func signalName(_ number: Int32) -> String {
        let names: [Int32: String] = [
            SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL",
            SIGTRAP: "SIGTRAP", SIGTERM: "SIGTERM", SIGSYS: "SIGSYS",
        ]
        return "\(names[number] ?? "signal") (signal \(number))"
    }

    /// Limits this process's address space as `MISSIVE_CHECK_MEMORY_LIMIT_MB` says (4096 MB by default).
    static func limitAddressSpace() {
        let megabytes = ProcessInfo.processInfo.environment["MISSIVE_CHECK_MEMORY_LIMIT_MB"].flatMap(UInt64.init) ?? 4096
        guard megabytes > 0 else { return }
        var limit = rlimit(rlim_cur: rlim_t(megabytes << 20), rlim_max: rlim_t(megabytes << 20))
        _ = setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
    }

    /// Output collected by the reader threads.
    private final class Outputs: @unchecked Sendable {
        private let lock = NSLock()
        private var out = Data(), err = Data()
        var stdout: Data { lock.withLock { out } }
        var stderr: Data { lock.withLock { err } }
        func setStdout(_ data: Data) { lock.withLock { out = data } }
        func setStderr(_ data: Data) { lock.withLock { err = data } }
    }
}
