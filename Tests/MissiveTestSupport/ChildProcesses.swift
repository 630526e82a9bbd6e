import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Missive
import Testing

/// Running programs from the tests: the `missive` executable as a user runs it, `psql`, `swift build`, a browser.
///
/// Swift's cooperative pool has one thread per core, and it does not grow when one of them blocks. A test that
/// waited for a child on it would hold that thread from every other test of the run, and a test that measures how
/// soon something happens (a notification, a refused connection) would measure the queue instead. So the tests
/// wait for children with `await`: each child is waited for on a thread of its own, and at most
/// ``childSlots`` children run at once (a count of the machine's cores), so that a parallel test run neither
/// starves nor floods the machine. A free slot goes to the test that asked for its first child earliest, so that
/// tests finish one after another, as they start, rather than all together at the end of the run, each past its
/// time limit.
extension Fixtures {
    /// What a run of a program did.
    package struct Run: Sendable {
        /// The exit status, or the signal's number when ``signaled``.
        package var status: Int32
        /// What the program printed on standard output.
        package var stdout: String
        /// What the program printed on standard error.
        package var stderr: String
        /// Whether the run was stopped at its time limit.
        package var timedOut = false
        /// Whether a signal ended the program (then ``status`` is the signal's number).
        package var signaled = false
        /// How long the program ran, from its start to its end (without the wait for a slot).
        package var duration: Duration = .zero
    }

    /// How many children the tests run at once: one more than the machine has cores, since a child spends part
    /// of its life starting up and waiting for files.
    package static let childSlots = ProcessInfo.processInfo.activeProcessorCount + 1

    /// The slots ``run(_:_:input:directory:environment:inherit:timeout:priority:)`` takes one of for each child.
    private static let slots = ChildSlots(count: childSlots)

    /// Runs the built `missive` executable, as a user would, without `MISSIVE_PLUGIN_PATH`.
    package static func missive(_ arguments: String..., input: String? = nil, environment extra: [String: String] = [:]) async throws -> Run {
        try await missive(arguments, input: input, environment: extra)
    }

    /// Runs the built `missive` executable with an array of arguments, optionally in another folder.
    ///
    /// Each run gets a crash journal of its own (`MISSIVE_QUARANTINE`), so that a plugin one test crashes
    /// on purpose is never quarantined for another; tests of the quarantine pass one in `environment`.
    package static func missive(
        _ arguments: [String], input: String? = nil, environment extra: [String: String] = [:], directory: String? = nil
    ) async throws -> Run {
        let journal = Fixtures.scratchPath("crashes")
        defer { try? FileManager.default.removeItem(atPath: journal) }
        return try await run(
            buildDirectory + "/missive", arguments, input: input, directory: directory,
            environment: missiveEnvironment(journal: journal).merging(extra) { _, new in new }, inherit: false)
    }

    /// ``missive(_:input:environment:directory:)``, blocking the calling thread until the run ends: only for a
    /// `static let` made once, which cannot wait with `await`.
    package static func missiveBlocking(_ arguments: String...) throws -> Run {
        let journal = Fixtures.scratchPath("crashes")
        defer { try? FileManager.default.removeItem(atPath: journal) }
        return try runBlocking(buildDirectory + "/missive", arguments, environment: missiveEnvironment(journal: journal), inherit: false)
    }

    /// The environment of a `missive` run: this process's without `MISSIVE_PLUGIN_PATH`, with the tests' metadata
    /// cache and the crash journal `journal`.
    package static func missiveEnvironment(journal: String) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { $0.key != PluginSearchPath.environmentVariable }
            .merging(["MISSIVE_METADATA_CACHE": cliMetadataCache, "MISSIVE_QUARANTINE": journal]) { _, new in new }
    }

    /// Runs a program and collects what it prints, waiting for it off Swift's cooperative pool and within the
    /// limit of ``childSlots`` children at once.
    ///
    /// The environment is this process's with `environment` added, or with `inherit: false` exactly `environment`.
    /// With a `timeout`, a program still running then is stopped, and the run says so. `priority` says whether
    /// the run waits for a slot (see ``Priority``).
    package static func run(
        _ executable: String, _ arguments: [String], input: String? = nil, directory: String? = nil,
        environment: [String: String] = [:], inherit: Bool = true, timeout: Duration? = nil, priority: Priority = .normal
    ) async throws -> Run {
        // Under the idle scheduling class, which a program's children inherit: `swift build` puts its compilers back
        // to niceness 0, so `nice` would not keep a build from taking the other tests' processor time.
        let (program, programArguments) = priority == .background ? ("/usr/bin/chrt", ["--idle", "0", executable] + arguments) : (executable, arguments)
        let limited = priority == .normal
        if limited { await slots.acquire(for: Test.current?.id) }
        let result: Result<Run, any Error>
        do {
            result = .success(try await offThePool {
                try runBlocking(program, programArguments, input: input, directory: directory, environment: environment, inherit: inherit, timeout: timeout)
            })
        } catch {
            result = .failure(error)
        }
        if limited { await slots.release() }
        return try result.get()
    }

    /// Whether a run waits for one of the ``childSlots``.
    package enum Priority: Sendable {
        /// It waits for a slot, as most runs do.
        case normal
        /// It starts at once, outside the limit: for the few runs of a test with a tight time limit that does
        /// nothing else in children (a headless browser), which would otherwise wait behind every test of the run.
        case immediate
        /// It starts at once, outside the limit, in the idle scheduling class (`chrt --idle`), it and its children:
        /// for long, heavy runs (a `swift build` of an example package) that should take only the processor time the
        /// other tests leave, and hold no slot for minutes.
        case background
    }

    /// Runs a program and collects what it prints, blocking the calling thread until it ends.
    ///
    /// Only for places that cannot wait with `await` (a `static let` made once); tests use
    /// ``run(_:_:input:directory:environment:inherit:timeout:priority:)``.
    package static func runBlocking(
        _ executable: String, _ arguments: [String], input: String? = nil, directory: String? = nil,
        environment: [String: String] = [:], inherit: Bool = true, timeout: Duration? = nil
    ) throws -> Run {
        let process = Process()
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = inherit ? ProcessInfo.processInfo.environment.merging(environment) { _, new in new } : environment
        // Output goes to files, not pipes: a child that fills one pipe while the other is read would block.
        let outputs = Fixtures.scratchPath("run")
        _ = FileManager.default.createFile(atPath: outputs + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: outputs + ".err", contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: outputs + ".out")
            try? FileManager.default.removeItem(atPath: outputs + ".err")
        }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outputs + ".out"))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: outputs + ".err"))
        let inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inPipe
        let started = ContinuousClock.now
        try process.run()
        try out.close()
        try err.close()
        if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try inPipe.fileHandleForWriting.close()
        var timedOut = false
        if let timeout {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning {
                if ContinuousClock.now >= deadline {
                    timedOut = true
                    process.terminate()
                    break
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        process.waitUntilExit()
        let stdout = FileManager.default.contentsOfFile(atPath: outputs + ".out") ?? Data()
        let stderr = FileManager.default.contentsOfFile(atPath: outputs + ".err") ?? Data()
        return Run(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self),
            timedOut: timedOut, signaled: process.terminationReason == .uncaughtSignal, duration: ContinuousClock.now - started)
    }

    /// Runs blocking work (waiting for a child process, a `psql`) on a thread of its own, off Swift's cooperative
    /// pool: that pool has one thread per core, and work blocked on it would hold it from every other test of the run.
    package static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// Runs test code that blocks (it waits for an isolated plugin's worker, or starts one) in the test's own task,
    /// but on a thread of its own rather than one of the cooperative pool's: unlike ``offThePool(_:)``, the body may
    /// use `#expect` and `#require`, whose results belong to the task's test. Such code starts child processes, so
    /// it takes one of the ``childSlots`` first, as a run of a program does.
    package static func blocking<T>(_ body: () throws -> T) async throws -> T {
        await slots.acquire(for: Test.current?.id)
        let result: Result<T, any Error>
        do {
            result = .success(try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try body() })
        } catch {
            result = .failure(error)
        }
        await slots.release()
        return try result.get()
    }
}

/// A task executor that runs each job it is given on a new thread: the code between two suspension points of a task
/// that prefers it, which for blocking test code is the whole of it.
private final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        Thread { job.runSynchronously(on: ThreadPerJobExecutor.shared.asUnownedTaskExecutor()) }.start()
    }
}

/// A counting semaphore for async code: at most `count` holders at once; the others wait without holding a
/// thread, and a slot given back goes to the waiter whose test asked first.
private actor ChildSlots {
    /// The slots not taken.
    private var free: Int
    /// The callers waiting for a slot, with the rank of their test.
    private var waiting: [(rank: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// The rank of each test that asked for a slot: the order of their first requests.
    private var ranks: [Test.ID: Int] = [:]
    /// The rank of the next test to ask for the first time.
    private var nextRank = 0

    init(count: Int) { free = max(1, count) }

    /// Takes a slot for the test `test` (or for a caller outside any test), waiting for one when all are taken.
    func acquire(for test: Test.ID?) async {
        let rank: Int
        if let test, let known = ranks[test] {
            rank = known
        } else {
            rank = nextRank
            nextRank += 1
            if let test { ranks[test] = rank }
        }
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append((rank, $0)) }
    }

    /// Gives a slot back: to the waiter of the earliest test when there is one.
    func release() {
        guard let first = waiting.indices.min(by: { waiting[$0].rank < waiting[$1].rank }) else {
            free += 1
            return
        }
        waiting.remove(at: first).continuation.resume()
    }
}

extension Fixtures {
    /// `session.data(for:)` in a task of its own, which a test's cancellation (its time limit) does not reach:
    /// cancelling a request in flight can deadlock FoundationNetworking on Linux, a lock taken in two orders by the
    /// cancel and by the completion, and the thread of the 2-thread pool it holds would stall every other test.
    package static func load(_ request: URLRequest, session: URLSession = .shared) async throws -> (Data, URLResponse) {
        try await Task.detached { try await session.data(for: request) }.value
    }
}
