import CMissiveHeap
import CMissivePlugin
import Dispatch
import Foundation
import Missive

/// Levels 6–10: memory, threads and speed.
enum ResourceChecks {
    /// Calls measured in each window of the memory checks (a call is one decode, with the calls on the
    /// message it gives), when the time allows; a fifth as many warm up first.
    static let memoryWindowCalls = 2_500
    /// Windows the memory checks measure; memory is reported as not released when the heap grew in every one.
    static let memoryWindows = 4
    /// Heap growth per call, in each window, above which memory is reported as not released. One 64-byte
    /// block leaked every 100 decodes is an 80-byte chunk in glibc: 0.8 bytes per call, three times this.
    static let leakBytesPerCall = 0.25
    /// The least growth of a window that counts, whatever its number of calls: what a window of very few
    /// calls (of a slow plugin) must grow by, so that the allocator's own bookkeeping is not taken for a leak.
    static let leakFloorBytes = 64
    /// Load time above which `speed.load` warns.
    static let loadBudgetMilliseconds = 50.0
    /// Median decode + digest time per example above which `speed.decode` warns.
    static let decodeBudgetMicroseconds = 50.0
    /// The values put in place of a member's value by `memory.errors`: one of each JSON kind; a member gets
    /// every one of another kind than its own.
    static let otherKinds: [(kind: String, value: String)] = [
        ("string", #""missive""#), ("number", "-1.5"), ("boolean", "true"), ("null", "null"), ("array", "[]"), ("object", "{}"),
    ]

    /// The environment variable through which an isolated run tells its child the time limit, in seconds.
    static let timeoutVariable = "MISSIVE_CHECK_TIMEOUT"

    /// How long a check that repeats work (the memory and thread checks) may spend repeating it: a quarter of
    /// the time limit (30 s unless the parent says otherwise), at most 8 s. A slow plugin then gets fewer
    /// repetitions, not a timeout.
    static var repetitionBudget: Duration {
        let timeout = ProcessInfo.processInfo.environment[timeoutVariable].flatMap(Double.init) ?? 30
        return .milliseconds(Int64(min(8, timeout / 4) * 1_000))
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "memory.release", level: 6,
                         summary: "No heap growth over repeated decode/encode/digest/words/push/media/view calls on the examples, and "
                            + "the example calls of the plugin's actions: handles and buffers are released.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let decoded = try types.map { type throws(CheckFailure) in (type, try type.decodedExamples().map(\.example)) }
                let actions = exampleActionCalls(context)
                InputTrail.note("the examples, decoded, viewed and used over and over, and the example action calls")
                return heapGrowth(callsPerCycle: decoded.reduce(0) { $0 + $1.1.count } + (actions?.calls.count ?? 0)) {
                    for (type, examples) in decoded {
                        for example in examples {
                            guard case .success(let content) = type.decode(bytes: example) else { continue }
                            _ = content.rawEncode()
                            _ = content.rawDigest()
                            _ = content.rawSearchableWords()
                            _ = content.rawPushContent()
                            _ = content.media
                            _ = content.rawView()
                        }
                    }
                    if let actions {
                        for call in actions.calls { _ = call.run(actions.registry) }
                    }
                }
            }
        },
        ConformanceCheck(id: "memory.errors", level: 7,
                         summary: "No heap growth over repeated decodes of content that does not parse, and of JSON invalid for the type "
                            + "(each example with a member removed or given a value of another kind): the error path frees what it allocates.",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let broken: [[UInt8]] = [Array("{\"broken\":".utf8), Array("[1,2".utf8), [0xFF]]
                let inputs = types.map { type in (type, broken + type.examples.flatMap(invalidContents)) }
                InputTrail.note("unparseable content and the examples made invalid, decoded over and over")
                return heapGrowth(callsPerCycle: inputs.reduce(0) { $0 + $1.1.count }) {
                    for (type, inputs) in inputs {
                        for input in inputs { _ = type.decode(bytes: input) }
                    }
                }
            }
        },
        peakCheck,
        ConformanceCheck(id: "threads.consistent", level: 6,
                         summary: "Decoding the same examples from 8 threads at once gives identical results.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                try concurrentProblems(types, threads: 8, rounds: 100, including: [])
            }
        },
        ConformanceCheck(id: "threads.stress", level: 10,
                         summary: "8 threads decoding examples and garbage for 500 rounds agree and never crash.",
                         requires: ["threads.consistent"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var generator = context.generator(for: "threads.stress")
                let garbage = (0..<16).map { _ in (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) } }
                return try concurrentProblems(types, threads: 8, rounds: 500, including: garbage)
            }
        },
        ConformanceCheck(id: "speed.load", level: 8,
                         summary: "Loading (metadata, dlopen, entry) takes under \(Int(loadBudgetMilliseconds)) ms. Warns only.",
                         requires: ["load.entry"]) { context in
            guard context.freshProcess else { return .skipped("needs a fresh process (not --in-process): the plugin may already be loaded") }
            let start = ContinuousClock.now
            _ = try? PluginMetadata.read(fromFile: context.path)
            guard case .success = context.probe else { return .skipped("the plugin could not be opened") }
            let elapsed = milliseconds(ContinuousClock.now - start)
            return elapsed > loadBudgetMilliseconds
                ? .warning("loading took \(CheckOutcome.format(elapsed)) ms; the budget is \(Int(loadBudgetMilliseconds)) ms") : .passed
        },
        ConformanceCheck(id: "speed.decode", level: 8,
                         summary: "Decoding an example and taking its digest takes under \(Int(decodeBudgetMicroseconds)) µs (median). Warns only.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var slow: [String] = []
                let deadline = RepetitionDeadline()
                let examples = types.reduce(0) { $0 + $1.examples.count }
                for type in types {
                    for example in type.examples {
                        // 301 samples, or fewer for a slow plugin: each example gets its share of the time budget.
                        let share = ContinuousClock.now + deadline.budget / max(examples, 1)
                        var samples: [Double] = []
                        for _ in 0..<301 where samples.count < 5 || ContinuousClock.now < share {
                            let start = ContinuousClock.now
                            if case .success(let content) = type.decode(bytes: example) { _ = content.rawDigest() }
                            samples.append(milliseconds(ContinuousClock.now - start) * 1_000)
                        }
                        let median = samples.sorted()[samples.count / 2]
                        if median > decodeBudgetMicroseconds {
                            slow.append("\(type.objectName): \(CheckOutcome.format(median)) µs for \(preview(example, limit: 32))")
                        }
                    }
                }
                return slow.isEmpty ? .passed : .warning("over the \(Int(decodeBudgetMicroseconds)) µs budget: \(slow.joined(separator: "; "))")
            }
        },
    ]

    /// The registry of `actions.examples` and every example call of the plugin's actions, or `nil` when it
    /// declares none or cannot be loaded.
    static func exampleActionCalls(_ context: CheckContext) -> (registry: MessageRegistry, calls: [ActionChecks.ExampleCall])? {
        guard case .success(let registry) = context.actionRegistry else { return nil }
        let calls = (registry.composerActions + registry.messageActions).filter { $0.plugin.path == context.path }.flatMap { action in
            (try? registry.loadedAction(action)).map { ActionChecks.calls(of: $0, registry: registry) } ?? []
        }
        return calls.isEmpty ? nil : (registry, calls)
    }

    /// A duration in milliseconds.
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    /// JSON that parses but is not what the type expects, made from an example: the example without each of
    /// its top-level members in turn, and with each member's value replaced by a value of every other JSON
    /// kind. Some of it may still decode (an optional member removed); it is there for the error paths.
    static func invalidContents(_ example: [UInt8]) -> [[UInt8]] {
        guard let members = ContentMembers(example) else { return [] }
        var contents: [[UInt8]] = []
        for member in members.members {
            contents.append(ContentChecks.removing(member.key, from: example))
            let own = kind(of: example[member.valueRange.lowerBound])
            for other in otherKinds where other.kind != own {
                contents.append(Array(example[..<member.valueRange.lowerBound]) + Array(other.value.utf8) + Array(example[member.valueRange.upperBound...]))
            }
        }
        return contents
    }

    /// The JSON kind of a value from its first byte, as ``otherKinds`` names them.
    private static func kind(of first: UInt8) -> String {
        switch first {
        case UInt8(ascii: "\""): "string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "boolean"
        case UInt8(ascii: "n"): "null"
        case UInt8(ascii: "["): "array"
        case UInt8(ascii: "{"): "object"
        default: "number"
        }
    }

    /// Runs `cycle` (which makes `callsPerCycle` calls) over and over, and fails when the heap in use grew in
    /// every one of ``memoryWindows`` windows by more than ``leakBytesPerCall`` per call (and at least
    /// ``leakFloorBytes``).
    ///
    /// A warm-up of a fifth of a window comes first, so that caches and lazily made state are in place. The
    /// windows hold ``memoryWindowCalls`` calls each when the ``repetitionBudget`` allows, and fewer for a
    /// slow plugin. Growth in every window is what a leak gives, however slow; noise and one-off
    /// allocations grow the heap in some windows, not all.
    private static func heapGrowth(callsPerCycle: Int, _ cycle: () -> Void) -> CheckOutcome {
        guard missive_heap_supported() != 0 else { return .skipped("no heap counter sees this process's malloc (another allocator or a sanitizer replaced it)") }
        let calls = max(callsPerCycle, 1)
        let budget = repetitionBudget
        let start = ContinuousClock.now
        let warmUp = (memoryWindowCalls / 5 + calls - 1) / calls
        var warmed = 0
        repeat {
            cycle()
            warmed += 1
        } while warmed < warmUp && ContinuousClock.now - start < budget / 5
        let perCycle = max((ContinuousClock.now - start) / warmed, .nanoseconds(1))
        let affordable = Int((budget - (ContinuousClock.now - start)) / (perCycle * memoryWindows))
        let wanted = (memoryWindowCalls + calls - 1) / calls
        let cycles = max(1, min(wanted, affordable))
        var growth: [Int] = []
        for _ in 0..<memoryWindows {
            let before = heapInUse()
            for _ in 0..<cycles { cycle() }
            growth.append(heapInUse() - before)
        }
        let windowCalls = cycles * calls
        let threshold = max(Double(leakFloorBytes), leakBytesPerCall * Double(windowCalls))
        guard growth.allSatisfy({ Double($0) > threshold }) else {
            guard cycles < wanted else { return .passed }
            return .warning("no growth, in windows of \(windowCalls) calls instead of \(wanted * calls): the plugin is slow, and the check "
                + "measures for about \(CheckOutcome.format(seconds(budget))) s")
        }
        let perCall = Double(growth.reduce(0, +)) / Double(windowCalls * memoryWindows)
        return .failed(
            expected: "no heap growth (at most \(CheckOutcome.format(leakBytesPerCall)) bytes per call in some window)",
            seen: "the heap grew in each of \(memoryWindows) windows of \(windowCalls) calls, by \(growth.map(String.init).joined(separator: ", ")) bytes: "
                + "\(CheckOutcome.format(perCall)) bytes per call")
    }

    /// Bytes of heap in use, from the C allocator.
    private static func heapInUse() -> Int { Int(missive_heap_in_use()) }

    /// What a thread observes for one input: the encoding, digest and words, or the error.
    private struct Observation: Hashable, Sendable {
        var encoded: [UInt8]?
        var digest: [UInt8]?
        var words: [[UInt8]]?
        var error: String?
    }

    private static func observe(_ type: PluginType, _ input: [UInt8]) -> Observation {
        switch type.decode(bytes: input) {
        case .failure(let error): return Observation(error: error.message)
        case .success(let content): return observe(content)
        }
    }

    private static func observe(_ content: PluginContent) -> Observation {
        Observation(encoded: content.rawEncode().bytes, digest: content.rawDigest().bytes, words: content.rawSearchableWords()?.pieces)
    }

    /// Decodes on `threads` real threads at once (not capped at the number of cores), then reads one shared
    /// handle per input from all of them, as the ABI allows; every result must equal the single-threaded one.
    /// The threads run `rounds` rounds together (``runInRounds(threads:rounds:deadline:_:)``), or fewer when
    /// the ``repetitionBudget`` runs out first, each taking the inputs in its own order.
    private static func concurrentProblems(_ types: [PluginType], threads: Int, rounds: Int, including extra: [[UInt8]]) throws(CheckFailure) -> CheckOutcome {
        let work = types.flatMap { type in (type.examples + extra).map { (type, $0) } }
        let baseline = work.map { observe($0.0, $0.1) }
        let shared = work.map { item in (try? item.0.decode(bytes: item.1).get()) }
        let differences = Locked<[String]>([])
        let deadline = RepetitionDeadline()
        let roundsDone = Locked(0)
        runInRounds(threads: threads, rounds: rounds, deadline: deadline) { thread, round in
            if thread == 0 { roundsDone.withLock { $0 = round + 1 } }
            for index in order(work.count, thread: thread, round: round) {
                let item = work[index]
                if observe(item.0, item.1) != baseline[index] {
                    differences.withLock { $0.append("thread \(thread): decoding \(item.0.objectName) \(preview(item.1, limit: 40)) gave a different result") }
                }
                if let content = shared[index], observe(content) != baseline[index] {
                    differences.withLock { $0.append("thread \(thread): a shared \(item.0.objectName) handle answered differently") }
                }
            }
        }
        return deadline.outcome(
            expected: "identical results on every thread", problems: differences.withLock { $0 }, tried: roundsDone.withLock { $0 }, of: rounds,
            inputs: "rounds on some thread")
    }

    /// Runs `body(thread, round)` on `threads` threads, for at most `rounds` rounds, each round started by all
    /// the threads together: a barrier holds each thread until every one has finished the round before, so
    /// that the threads' calls overlap in every round (with 8 threads on 2 cores, a thread that ran ahead
    /// would otherwise make its calls alone). The last thread to reach the barrier ends the run when the
    /// `deadline` is past; every thread then stops at the same round.
    static func runInRounds(threads: Int, rounds: Int, deadline: RepetitionDeadline, _ body: @escaping @Sendable (_ thread: Int, _ round: Int) -> Void) {
        let barrier = RoundBarrier(count: threads)
        runOnThreads(threads) { thread in
            var round = 0
            while round < rounds, barrier.arrive(keepGoing: { !deadline.isPast }) {
                body(thread, round)
                round += 1
            }
        }
    }

    /// The order in which `thread` takes `count` inputs in `round`: rotated by the thread and the round, so
    /// that threads running at the same time work on different inputs (a race on state that calls share
    /// shows only when they do), and each input meets each other one.
    static func order(_ count: Int, thread: Int, round: Int) -> [Int] {
        guard count > 0 else { return [] }
        return (0..<count).map { ($0 + thread + round) % count }
    }

    /// Runs `body` on `count` threads that start together.
    static func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            let thread = Thread {
                start.wait()
                body(index)
                done.leave()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        for _ in 0..<count { start.signal() }
        done.wait()
    }
}

/// A barrier for threads that work in rounds (``ResourceChecks/runInRounds(threads:rounds:deadline:_:)``).
final class RoundBarrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var waiting = 0
    private var generation = 0
    private var going = true

    /// A barrier for `count` threads.
    init(count: Int) { self.count = count }

    /// Waits until all the threads have arrived; the last one asks `keepGoing` whether another round runs, and
    /// every thread gets its answer.
    func arrive(keepGoing: () -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let arrival = generation
        waiting += 1
        if waiting == count {
            waiting = 0
            going = keepGoing()
            generation += 1
            condition.broadcast()
        } else {
            while arrival == generation { condition.wait() }
        }
        return going
    }
}
