import CMissiveSandbox
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One running plugin worker, from the host's side: its process, its socket and the pipe its standard error
/// goes to. The owner of the three: ``stop()`` kills the process, waits for it and closes both descriptors.
///
/// Not thread-safe: an ``IsolatedPlugin`` uses one under its lock.
final class WorkerProcess {
    /// Why a worker stopped answering, in words for a report.
    struct Failure: Error {
        /// What happened, without anything the worker wrote: it goes into the answer of a message, which a server
        /// shows its members.
        let reason: String
        /// The signal that ended the worker, when one did (`SIGKILL` for a worker killed as hung).
        let signal: Int32?
        /// `; it wrote: ...`, the last lines of the worker's standard error, or empty: for the host's log and for a
        /// refusal at load, which its operator reads.
        var output: String = ""
    }

    let pid: pid_t
    private let socket: Int32
    private let errors: Int32
    /// What was read and not parsed yet.
    private var input: [UInt8] = []
    private var inputStart = 0
    /// The last bytes the worker wrote to standard error.
    private var errorTail: [UInt8] = []
    /// Where each read from the socket lands, made once.
    private var chunk = [UInt8](repeating: 0, count: 64 << 10)
    private var exited = false

    /// How long a receive looks for data before it sleeps (``PluginIsolation/spinMicroseconds``).
    private let spinMicroseconds: Int

    private init(pid: pid_t, socket: Int32, errors: Int32, spinMicroseconds: Int) {
        (self.pid, self.socket, self.errors) = (pid, socket, errors)
        self.spinMicroseconds = spinMicroseconds
    }

    deinit {
        stop()
    }

    /// Starts `command` (the worker executable and its first arguments) for the plugin `file`, with `arguments`
    /// after the file, behind the walls `confinement` asks for: with namespaces, in a view that holds the executable,
    /// the libraries, `file` and `dataFiles` (absolute paths the plugin declared).
    static func start(
        command: [String], file: String, arguments: [String], spinMicroseconds: Int, confinement: PluginIsolation.Confinement = .none,
        dataFiles: [String] = []
    ) throws(MissiveError) -> WorkerProcess {
        guard let named = command.first else { throw MissiveError(.loadFailed, "the plugin worker command is empty", file: file) }
        let executable = Self.absolute(named)
        let plugin = Self.absolute(file)
        var confine = false
        switch confinement {
        case .none: break
        case .namespaces:
            if let refusal = PluginIsolation.namespaceRefusal {
                throw MissiveError(.loadFailed, PluginIsolation.refusalAdvice(refusal), file: file)
            }
            confine = true
        case .namespacesWhenAvailable:
            confine = PluginIsolation.namespaceRefusal == nil
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw MissiveError(.loadFailed, "cannot make a socket for the plugin worker: \(String(cString: strerror(errno)))", file: file)
        }
        var pipe: [Int32] = [-1, -1]
        let piped = missive_sandbox_pipe(&pipe)
        guard piped == 0 else {
            let reason = String(cString: strerror(piped))
            close(pair[0])
            close(pair[1])
            throw MissiveError(.loadFailed, "cannot make a pipe for the plugin worker: \(reason)", file: file)
        }
        // The worker's standard error never blocks it: what the host has not read yet when the pipe is full is lost.
        _ = fcntl(pipe[1], F_SETFL, fcntl(pipe[1], F_GETFL) | O_NONBLOCK)
        // A confined worker reports what its plugin looked for outside its view while loading.
        let argv = [executable] + command.dropFirst() + [plugin] + arguments + (confine ? ["--audit"] : [])
        var pid: pid_t = 0
        var status: Int32
        var where_ = ""
        if confine {
            let view = WorkerView.make(executable: executable, plugin: plugin, dataFiles: dataFiles.map(Self.absolute))
            var failure = missive_sandbox_failure()
            status = view.withCSteps { steps in
                withCStrings(argv) { missive_sandbox_spawn_confined(executable, $0, pair[1], pipe[1], steps.baseAddress, steps.count, &pid, &failure) }
            }
            if status != 0 { where_ = WorkerView.describe(failure, steps: view.steps) }
        } else {
            status = withCStrings(argv) { missive_sandbox_spawn(executable, $0, pair[1], pipe[1], &pid) }
            if status != 0 { where_ = String(cString: strerror(status)) }
        }
        close(pair[1])
        close(pipe[1])
        guard status == 0 else {
            close(pair[0])
            close(pipe[0])
            throw MissiveError(.loadFailed, "cannot start the plugin worker \(executable): \(where_)", file: file)
        }
        // The socket blocks, for at most a slice of a deadline at a time: a round trip is one send and one receive,
        // with no poll in between.
        var slice = timeval(tv_sec: 0, tv_usec: suseconds_t(WorkerDeadline.sliceMilliseconds * 1000))
        _ = setsockopt(pair[0], SOL_SOCKET, SO_RCVTIMEO, &slice, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(pair[0], SOL_SOCKET, SO_SNDTIMEO, &slice, socklen_t(MemoryLayout<timeval>.size))
        _ = fcntl(pipe[0], F_SETFL, fcntl(pipe[0], F_GETFL) | O_NONBLOCK)
        return WorkerProcess(pid: pid, socket: pair[0], errors: pipe[0], spinMicroseconds: spinMicroseconds)
    }

    /// `path` made absolute against the working folder, so that it names the same file inside the view.
    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let folder = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (folder == "/" ? "" : folder) + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }

    /// Runs `body` with `strings` as a NULL-terminated array of C strings.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return (copies + [nil]).withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    private var endStatus: Int32?

    /// Sends `bytes`, waiting at most `deadline` for room on the socket.
    func send(_ bytes: [UInt8], deadline: inout WorkerDeadline) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in Glibc.send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                offset += written
                continue
            }
            if written < 0 && errno == EINTR { continue }
            guard written < 0, errno == EAGAIN || errno == EWOULDBLOCK else { throw ended("closed its socket") }
            // A slice passed without room: the worker reads no more.
            try check(&deadline)
        }
    }

    /// The next frame: its kind, request id and a reader of its body. Waits at most as `deadline` allows. A frame
    /// whose length is over `limit` is refused as soon as its length is read, before the host holds its bytes.
    func receive(deadline: inout WorkerDeadline, limit: Int = WorkerWire.maximumFrame) throws(Failure) -> (kind: UInt8, id: UInt64, reader: WireReader) {
        while true {
            if let frame = try nextFrame(limit: limit) {
                if frame.kind == WorkerWire.signalledKind {
                    // The worker sent itself a fatal signal, which the first process of a PID namespace relays.
                    var reader = frame.reader
                    let signal = (try? reader.integer(Int32.self)) ?? 0
                    kill(pid, SIGKILL)
                    _ = reap()
                    throw Failure(reason: "its worker crashed with \(PluginQuarantine.signalName(signal))", signal: signal, output: errorQuote())
                }
                return frame
            }
            // A frame that comes a few bytes at a time is held to the same deadline as one that does not come.
            if deadline.isPastFirstSlice { try check(&deadline) }
            try fill(&deadline, limit: limit)
        }
    }

    /// A whole frame from what was read, if there is one.
    private func nextFrame(limit: Int) throws(Failure) -> (kind: UInt8, id: UInt64, reader: WireReader)? {
        // What was read is all parsed: start again at the front (the last frame's reader is gone by now, so the buffer
        // is not copied).
        if inputStart > 0 && inputStart == input.count {
            input.removeAll(keepingCapacity: true)
            inputStart = 0
        }
        guard let length = pendingLength() else { return nil }
        let available = input.count - inputStart
        guard length >= 9, length <= min(limit, WorkerWire.maximumFrame) else {
            if length >= 9, length <= WorkerWire.maximumFrame {
                throw garbage("it began an answer of \(length) bytes, where one may have at most \(limit)")
            }
            throw garbage("it sent a frame of \(length) bytes")
        }
        guard available >= 4 + length else { return nil }
        let start = inputStart + 4
        inputStart += 4 + length
        var header = WireReader(input, from: start, to: start + 9)
        let kind = (try? header.byte()) ?? 0
        let id = (try? header.integer(UInt64.self)) ?? 0
        return (kind, id, WireReader(input, from: start + 9, to: start + length))
    }

    /// Reads what the socket holds, waiting for it a slice at a time as `deadline` allows. Stops once the frame
    /// being read is whole, or its length is over `limit`: a worker that writes without end never makes the host
    /// read more than one frame's worth, and the caller then parses or refuses it.
    private func fill(_ deadline: inout WorkerDeadline, limit: Int) throws(Failure) {
        if inputStart > 0 && inputStart > input.count / 2 {
            input.removeFirst(inputStart)
            inputStart = 0
        }
        var flags: Int32 = 0
        while true {
            let count = chunk.withUnsafeMutableBytes {
                flags == 0 ? SocketSpin.receive(socket, $0, spinMicroseconds: spinMicroseconds) : recv(socket, $0.baseAddress, $0.count, flags)
            }
            if count > 0 {
                input.append(contentsOf: chunk[0..<count])
                if frameIsReadOrRefused(limit: limit) { return }
                // Whatever else is there already, without waiting.
                flags = Int32(MSG_DONTWAIT)
                continue
            }
            if count < 0 && errno == EINTR { continue }
            // What this call read is parsed first, even when the worker ended right after writing it (a last frame,
            // then its exit): the next call finds the end.
            if flags != 0 && count <= 0 { return }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // A slice passed with nothing: is the worker still within its deadline?
                try check(&deadline)
                continue
            }
            throw ended("closed its socket")
        }
    }

    /// Whether the frame at the front of what was read is whole, or announces a length that ``nextFrame(limit:)``
    /// refuses.
    private func frameIsReadOrRefused(limit: Int) -> Bool {
        guard let length = pendingLength() else { return false }
        return length < 9 || length > min(limit, WorkerWire.maximumFrame) || input.count - inputStart >= 4 + length
    }

    /// The length of the frame at the front of what was read, once its four bytes are there.
    private func pendingLength() -> Int? {
        guard input.count - inputStart >= 4 else { return nil }
        var length = 0
        for index in (0..<4).reversed() { length = length << 8 | Int(input[inputStart + index]) }
        return length
    }

    /// Throws, killing the worker, when it is past its deadline; reads its standard error meanwhile.
    private func check(_ deadline: inout WorkerDeadline) throws(Failure) {
        drainErrors()
        guard let hung = deadline.expired(pid: pid) else { return }
        kill(pid, SIGKILL)
        _ = reap()
        exited = true
        throw Failure(reason: hung, signal: SIGKILL, output: errorQuote())
    }

    /// Reads what the worker wrote to standard error, keeping the last kilobyte.
    private func drainErrors() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            errorTail.append(contentsOf: chunk[0..<count])
            if errorTail.count > 1024 { errorTail.removeFirst(errorTail.count - 1024) }
        }
    }

    /// `; it wrote: ...`, the last lines of the worker's standard error, or nothing.
    private func errorQuote() -> String {
        drainErrors()
        let lines = String(decoding: errorTail, as: UTF8.self).split(whereSeparator: \.isNewline).suffix(3)
        let text = TextHygiene.line(lines.joined(separator: " | "))
        return text.isEmpty ? "" : "; it wrote: \(text)"
    }

    /// The failure of a worker that closed its socket: how the process ended, once it has.
    private func ended(_ what: String) -> Failure {
        let status = reap()
        if let status, status & 0x7f != 0 {
            let signal = status & 0x7f
            return Failure(reason: "its worker crashed with \(PluginQuarantine.signalName(signal))", signal: signal, output: errorQuote())
        }
        if let status {
            let code = (status >> 8) & 0xff
            // 70 is what the crash guard ends a process with when a plugin calls exit() inside a call.
            let why = code == 70 ? " (the plugin called exit() during a call)" : ""
            return Failure(reason: "its worker exited with status \(code)\(why)", signal: nil, output: errorQuote())
        }
        return Failure(reason: "its worker \(what)", signal: nil, output: errorQuote())
    }

    /// How the process ended, when it already has (a thread of the plugin's own crashed it between calls, or
    /// something killed it); `nil` while it runs. One `waitpid` that does not wait; an ended process is reaped.
    func endedBetweenCalls() -> Failure? {
        if !exited {
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, WNOHANG) } while result < 0 && errno == EINTR
            guard result == pid else { return nil }
            exited = true
            endStatus = status
        }
        return ended("ended between calls")
    }

    /// A worker that sent what the protocol does not allow: killed, and reported.
    func garbage(_ what: String) -> Failure {
        kill(pid, SIGKILL)
        _ = reap()
        return Failure(reason: "its worker broke the protocol: \(what)", signal: nil, output: errorQuote())
    }

    /// Waits for the process to end (at most about a second, then kills it) and gives its wait status.
    private func reap() -> Int32? {
        if exited { return endStatus }
        var status: Int32 = 0
        for attempt in 0..<200 {
            let result = waitpid(pid, &status, attempt < 199 ? WNOHANG : 0)
            if result == pid {
                exited = true
                endStatus = status
                return status
            }
            if result < 0 && errno != EINTR { return nil }
            if attempt == 100 { kill(pid, SIGKILL) }
            usleep(5_000)
        }
        return nil
    }

    /// Kills the worker, waits for it and closes its descriptors. Safe to call more than once.
    func stop() {
        if socket >= 0, !closed {
            closed = true
            close(socket)
            close(errors)
            if !exited {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                exited = true
            }
        }
    }

    private var closed = false

    /// The worker's resident memory and its proportional share (shared pages divided among the processes that map
    /// them), in bytes, from `/proc/PID/smaps_rollup`; `nil` when it cannot be read.
    var memory: (resident: Int, proportional: Int)? {
        guard let bytes = FileBytes.readToEnd("/proc/\(pid)/smaps_rollup", limit: 4096) else { return nil }
        var resident: Int?, proportional: Int?
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
            if fields[0] == "Rss:" { resident = kilobytes * 1024 }
            if fields[0] == "Pss:" { proportional = kilobytes * 1024 }
        }
        guard let resident, let proportional else { return nil }
        return (resident, proportional)
    }
}

/// How long a host waits for a worker's next frame: a CPU-time budget, checked against the worker's own CPU time, and
/// a wall-clock limit for a worker that waits without using the processor.
struct WorkerDeadline {
    let cpuSeconds: Double
    let wallSeconds: Double
    private let start: ContinuousClock.Instant
    private var cpuAtStart: Double?

    /// A deadline from now. For a call, `cpuSeconds` counts the processor time the worker uses from now on. For a
    /// worker's load (`countingAllProcessorTime`), all the time it used since it started counts: discovery starts
    /// every worker at once, then waits for each in turn, and a plugin that spun while the host waited for the
    /// others is stopped at the first check instead of being given its budget again. The clock starts when the host
    /// waits either way, since on a busy machine the workers that load at once share it.
    init(cpuSeconds: Double, wallSeconds: Double, countingAllProcessorTime: Bool = false) {
        self.cpuSeconds = cpuSeconds
        self.wallSeconds = wallSeconds
        start = ContinuousClock.now
        if countingAllProcessorTime { cpuAtStart = 0 }
    }

    /// How long one wait on the socket lasts, in milliseconds: the CPU time is looked at after each.
    static let sliceMilliseconds = 50

    /// Whether a slice has passed since the wait began: from then on, partial reads are checked against the deadline.
    var isPastFirstSlice: Bool { ContinuousClock.now - start >= .milliseconds(Self.sliceMilliseconds) }

    /// Why the worker counts as hung, or `nil` while it may go on.
    mutating func expired(pid: pid_t) -> String? {
        let elapsed = ContinuousClock.now - start
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpu = Self.cpuSeconds(of: pid)
        guard let cpuAtStart else {
            cpuAtStart = cpu ?? 0
            return nil
        }
        // The first sample of a call is taken 50 ms in: count that time as used, the most it can have been.
        let used = (cpu ?? cpuAtStart) - cpuAtStart + 0.05
        if used >= cpuSeconds {
            return "its worker hung: it used \(Self.describe(used)) of processor time on one call, past the limit of \(Self.describe(cpuSeconds)), and was killed"
        }
        if wall >= wallSeconds {
            return "its worker hung: no answer in \(Self.describe(wall)) (it used \(Self.describe(used)) of processor time), and was killed"
        }
        return nil
    }

    private static func describe(_ seconds: Double) -> String {
        seconds >= 10 ? "\(Int(seconds.rounded())) s" : String(format: "%.2f s", seconds)
    }

    /// The user and system time of a process, from `/proc/PID/stat`.
    static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let bytes = FileBytes.readToEnd("/proc/\(pid)/stat", limit: 4096) else { return nil }
        // The command name is in parentheses and may hold spaces: the fields after its closing one are counted.
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        // utime and stime are fields 14 and 15, the 12th and 13th after the name.
        guard fields.count > 12, let user = Int(String(decoding: fields[11], as: UTF8.self)),
            let system = Int(String(decoding: fields[12], as: UTF8.self))
        else { return nil }
        return Double(user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// A receive that looks for data without sleeping for a while first.
enum SocketSpin {
    /// Receives into `buffer` from `socket`: without waiting, again and again for `spinMicroseconds`, then waiting as
    /// the socket does. What `recv` returns.
    static func receive(_ socket: Int32, _ buffer: UnsafeMutableRawBufferPointer, spinMicroseconds: Int) -> Int {
        if spinMicroseconds > 0 {
            let end = ContinuousClock.now + .microseconds(spinMicroseconds)
            repeat {
                let count = recv(socket, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                if count >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { return count }
            } while ContinuousClock.now < end
        }
        return recv(socket, buffer.baseAddress, buffer.count, 0)
    }
}
