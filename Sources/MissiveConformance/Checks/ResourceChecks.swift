import CMissiveHeap
import CMissivePlugin
import Dispatch
import Foundation
import Missive

/// Levels 6–10: memory, threads and speed.
enum ResourceChecks {
    /// Cycles measured by the memory checks, after a warm-up of a tenth as many.
    static let memoryCycles = 5_000
    /// Heap growth per cycle above which memory is reported as not released. A leaked allocation of any
    /// size costs at least 32 bytes of heap in glibc, so this cannot miss one leak per cycle.
    static let leakBytesPerCycle = 16.0
    /// Load time above which `speed.load` warns.
    static let loadBudgetMilliseconds = 50.0
    /// Median decode + digest time per example above which `speed.decode` warns.
    static let decodeBudgetMicroseconds = 50.0

    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "memory.release", level: 6,
                         summary: "No heap growth over \(memoryCycles) decode/encode/digest/words cycles: handles and buffers are released.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let decoded = try types.map { type throws(CheckFailure) in (type, try type.decodedExamples().map(\.example)) }
                return heapGrowth(expected: "no heap growth") {
                    for (type, examples) in decoded {
                        for example in examples {
                            guard case .success(let content) = type.decode(bytes: example) else { continue }
                            _ = content.rawEncode()
                            _ = content.rawDigest()
                            _ = content.rawSearchableWords()
                            _ = content.rawPushContent()
                            _ = content.media
                        }
                    }
                }
            }
        },
        ConformanceCheck(id: "memory.errors", level: 7,
                         summary: "No heap growth over \(memoryCycles) refused decodes: the error path frees what it allocates.",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let inputs: [[UInt8]] = [Array("{\"broken\":".utf8), Array("[1,2".utf8), [0xFF]]
                return heapGrowth(expected: "no heap growth") {
                    for type in types {
                        for input in inputs { _ = type.decode(bytes: input) }
                    }
                }
            }
        },
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
                for type in types {
                    for example in type.examples {
                        var samples: [Double] = []
                        for _ in 0..<301 {
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

    /// A duration in milliseconds.
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    /// Runs `cycle` `memoryCycles` times after a warm-up and fails when the heap in use grows by more than
    /// ``leakBytesPerCycle`` per cycle. A growth is measured twice before it is reported, so one
    /// allocator hiccup is not a failure.
    private static func heapGrowth(expected: String, _ cycle: () -> Void) -> CheckOutcome {
        guard missive_heap_supported() != 0 else { return .skipped("no heap counter sees this process's malloc (another allocator or a sanitizer replaced it)") }
        for _ in 0..<(memoryCycles / 10) { cycle() }
        var perCycle = 0.0
        for _ in 0..<2 {
            let before = heapInUse()
            for _ in 0..<memoryCycles { cycle() }
            perCycle = Double(heapInUse() - before) / Double(memoryCycles)
            if perCycle <= leakBytesPerCycle { return .passed }
        }
        return .failed(expected: expected, seen: "the heap grew by \(CheckOutcome.format(perCycle)) bytes per cycle over \(memoryCycles) cycles")
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
    private static func concurrentProblems(_ types: [PluginType], threads: Int, rounds: Int, including extra: [[UInt8]]) throws(CheckFailure) -> CheckOutcome {
        let work = types.flatMap { type in (type.examples + extra).map { (type, $0) } }
        let baseline = work.map { observe($0.0, $0.1) }
        let shared = work.map { item in (try? item.0.decode(bytes: item.1).get()) }
        let differences = Locked<[String]>([])
        runOnThreads(threads) { thread in
            for _ in 0..<rounds {
                for (index, item) in work.enumerated() {
                    if observe(item.0, item.1) != baseline[index] {
                        differences.withLock { $0.append("thread \(thread): decoding \(item.0.objectName) \(preview(item.1, limit: 40)) gave a different result") }
                    }
                    if let content = shared[index], observe(content) != baseline[index] {
                        differences.withLock { $0.append("thread \(thread): a shared \(item.0.objectName) handle answered differently") }
                    }
                }
            }
        }
        return outcome(expected: "identical results on every thread", problems: differences.withLock { $0 })
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
