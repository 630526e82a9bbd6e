import Foundation
import Missive
#if canImport(Glibc)
import Glibc
#endif

/// Runs a child process with a time limit, keeping the end of its output for crash reports.
///
/// The child reports its result through a file, not its output, so a plugin that prints (or prints
/// without a newline) cannot corrupt it, and a plugin that floods its output costs the parent only the last
/// few kilobytes. The child starts in a process group of its own, so that a timeout, or the end of the
/// check, also kills whatever processes the plugin started.
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
        /// The end of what the child wrote to its standard output and error.
        var outputTail: Data

        /// The last non-empty line of output, shortened, for crash reports.
        var lastOutputLine: String? {
            let line = String(decoding: outputTail, as: UTF8.self).split(whereSeparator: \.isNewline).last { !$0.allSatisfy(\.isWhitespace) }
            return line.map { String($0.prefix(200)) }
        }

        /// The last ``reportedLines`` non-empty lines of the last ``reportedBytes`` of output, each cleaned
        /// onto one line (``TextHygiene/line(_:)``: no escape sequence or control character reaches a terminal
        /// or a report), without trailing spaces, and cut to 300 characters.
        var reportedOutput: [String] {
            let text = String(decoding: outputTail.suffix(ChildProcess.reportedBytes), as: UTF8.self)
            let lines = text.split(whereSeparator: \.isNewline).map { line in
                var cleaned = TextHygiene.line(String(line))
                while cleaned.last?.isWhitespace == true { cleaned.removeLast() }
                return cleaned
            }.filter { !$0.isEmpty }
            return lines.suffix(ChildProcess.reportedLines).map { $0.count > 300 ? String($0.prefix(299)) + "…" : $0 }
        }
    }

    /// How much of the child's output is kept.
    static let outputTailSize = 4096
    /// How much of the kept output a crash report shows: at most this many bytes from its end, and of them at
    /// most ``reportedLines`` lines.
    static let reportedBytes = 2048
    /// The most lines of output a crash report shows.
    static let reportedLines = 20

    /// Runs `executable` in a new process group, waits at most `timeout` seconds, then kills the group with
    /// `SIGKILL`. The group is killed after a normal exit too, so nothing the plugin started outlives its
    /// check. Exit is detected with `waitpid`, not by the output closing, which a forked grandchild could
    /// hold open.
    static func run(executable: String, arguments: [String], environment extra: [String: String] = [:], timeout: Double) throws -> Result {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw ChildProcessError("pipe failed: errno \(errno)") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)

        // The Swift runtime's backtracer would spend time on every crash and bury the plugin's last words.
        var environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }

        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(writeEnd)
        guard spawned == 0 else { throw ChildProcessError("cannot start \(executable): errno \(spawned)") }

        var tail = Tail(limit: outputTailSize)
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        var status: Int32 = 0
        var termination: Termination?
        var buffer = [UInt8](repeating: 0, count: 65536)
        while termination == nil {
            // Read what output there is, for at most 10 ms, so that a full pipe never blocks the child.
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 10) > 0, poller.revents & Int16(POLLIN) != 0 {
                let count = read(readEnd, &buffer, buffer.count)
                if count > 0 { tail.append(Data(buffer[0..<count])) }
            }
            if waitpid(pid, &status, WNOHANG) == pid {
                termination = exitStatus(status).map(Termination.signal) ?? .exit((status >> 8) & 0xFF)
            } else if ContinuousClock.now >= deadline {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                termination = .timedOut
            }
        }
        kill(-pid, SIGKILL)
        return Result(termination: termination!, outputTail: tail.data)
    }

    /// The signal that ended a process, from its `waitpid` status, or `nil` when it exited.
    private static func exitStatus(_ status: Int32) -> Int32? {
        let signal = status & 0x7F
        return signal != 0 && signal != 0x7F ? signal : nil
    }

    /// `SIGSEGV (signal 11)` and the like.
    static func signalName(_ number: Int32) -> String {
        let names: [Int32: String] = [
            SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL",
            SIGTRAP: "SIGTRAP", SIGTERM: "SIGTERM", SIGSYS: "SIGSYS",
        ]
        return "\(names[number] ?? "signal") (signal \(number))"
    }

    /// Prepares the current process to run one check as a child: its address space limited as
    /// `MISSIVE_CHECK_MEMORY_LIMIT_MB` says (4096 MB by default; 0 for no limit).
    ///
    /// Under a sanitizer there is no limit: its shadow memory takes terabytes of address space, and the
    /// runtime dies (`Failed to mmap`, `internal allocator is out of memory`) as soon as it maps more.
    static func becomeCheckChild() {
        let megabytes = ProcessInfo.processInfo.environment["MISSIVE_CHECK_MEMORY_LIMIT_MB"].flatMap(UInt64.init) ?? 4096
        guard megabytes > 0, Sanitizer.current == nil else { return }
        var limit = rlimit(rlim_cur: rlim_t(megabytes << 20), rlim_max: rlim_t(megabytes << 20))
        _ = setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
    }

    /// The last `limit` bytes written.
    private struct Tail {
        let limit: Int
        private(set) var data = Data()

        init(limit: Int) { self.limit = limit }

        mutating func append(_ chunk: Data) {
            data.append(chunk)
            if data.count > limit { data = data.suffix(limit) }
        }
    }
}

/// A child process could not be started.
struct ChildProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
