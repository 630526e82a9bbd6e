import CMissivePlugin
import Foundation
import Missive

/// Levels 1–3, 6, 8 and 9: the `missive.view.v1` extension (missive_plugin.h, "The view extension").
///
/// The checks concern only the types whose plugin offers the extension; the others are not looked at, and a
/// plugin none of whose types offers it skips every view check. A status type is never drawn, so one that
/// offers a view fails `view.status`, and the checks of what views give leave it out.
enum ViewChecks {
    /// Median time of one call of a view function above which `view.budget` warns.
    static let budgetMilliseconds = 1.0
    /// Rounds of `view.threads`, which its 8 threads start together: in each, every thread decodes and views
    /// every example, and views one shared handle per example, ``threadPasses`` times.
    static let threadRounds = 250
    /// Passes over the examples each thread makes in each round of `view.threads`.
    static let threadPasses = 8
    /// Seeded mutations of the examples `view.mutations` tries, shared among the types that are drawn.
    static let mutationCount = 2_000

    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "view.extension", level: 1,
                         summary: "Where a type offers \(MISSIVE_VIEW_EXTENSION), its struct is usable: struct_size covers the view function, "
                            + "which is not NULL.",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let offering = types.filter(\.offersView)
                guard !offering.isEmpty else { return .skipped(noExtension) }
                let problems = offering.compactMap { type in type.viewExtensionProblem.map { "\(type.objectName): \($0)" } }
                return outcome(expected: "a \(MISSIVE_VIEW_EXTENSION) struct with its view function", problems: problems)
            }
        },
        ConformanceCheck(id: "view.status", level: 2,
                         summary: "No status type offers \(MISSIVE_VIEW_EXTENSION): status messages are never drawn.",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let offering = types.filter(\.offersView)
                guard !offering.isEmpty else { return .skipped(noExtension) }
                let problems = offering.filter { $0.persistenceValue == Persistence.status.rawValue }.map {
                    "\($0.objectName) has persistence 16 (status) and offers \(MISSIVE_VIEW_EXTENSION)"
                }
                return outcome(expected: "no view for status types", problems: problems)
            }
        },
        ConformanceCheck(id: "view.renders", level: 2,
                         summary: "For every example the view function returns MISSIVE_OK with a document that reads to an element, "
                            + "or MISSIVE_ABSENT.",
                         requires: ["examples.decode", "view.extension"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                var silent: [String] = []
                for type in try drawnTypes(types) {
                    var drawnExamples = 0
                    for (example, content) in try type.decodedExamples() {
                        let output = ViewOutput(content)
                        switch output.status {
                        case MISSIVE_OK:
                            drawnExamples += 1
                            if let problem = readingProblem(output.bytes) {
                                problems.append("\(type.objectName) \(preview(example, limit: 40)): \(problem)")
                            }
                        case MISSIVE_ABSENT: continue
                        default: problems.append("\(type.objectName) \(preview(example, limit: 40)): \(content.failure(of: "view", status: output.status))")
                        }
                    }
                    if drawnExamples == 0 { silent.append(type.objectName) }
                }
                if problems.isEmpty && !silent.isEmpty {
                    let verbs = silent.count == 1 ? "offers a view but gives" : "offer a view but give"
                    return .warning("\(silent.joined(separator: ", ")) \(verbs) MISSIVE_ABSENT for every example, so the view checks "
                        + "see no view; add an example that has one")
                }
                return outcome(expected: "MISSIVE_OK with a readable document, or MISSIVE_ABSENT", problems: problems)
            }
        },
        ConformanceCheck(id: "view.valid", level: 3,
                         summary: "Every example's view keeps the rules of \(MISSIVE_VIEW_EXTENSION): known kinds (or a fallback), "
                            + "http(s) URLs, sizes, fractions, action ids, members of the right kind, the limits, and text that needs no "
                            + "cleaning (no escape sequence, control character or bidi control; line breaks only in text elements).",
                         requires: ["view.renders"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in try drawnTypes(types) {
                    for (example, content) in try type.decodedExamples() {
                        let output = ViewOutput(content)
                        guard output.status == MISSIVE_OK else { continue }
                        for problem in ViewDocument.read(output.bytes).violations + ViewTextRepairs.find(in: output.bytes) {
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): \(problem.path): \(problem.message)")
                        }
                    }
                }
                return outcome(expected: "views that break no rule", problems: problems)
            }
        },
        ConformanceCheck(id: "view.actions", level: 3,
                         summary: "Every button in every example's view names a message action that the type declares and the host loads.",
                         requires: ["view.renders"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let drawn = try drawnTypes(types)
                var declared: [String: Set<String>] = [:]
                if case .success(let metadata) = context.metadata, case .success(let probe) = context.probe {
                    for action in probe.judgeActions(metadata: metadata).actions where action.info.kind == .message {
                        declared[action.info.objectName, default: []].insert(action.info.id)
                    }
                }
                var problems: [String] = []
                for type in drawn {
                    let ids = declared[type.objectName] ?? []
                    for (example, content) in try type.decodedExamples() {
                        let output = ViewOutput(content)
                        guard output.status == MISSIVE_OK, let element = ViewDocument.read(output.bytes).element else { continue }
                        for button in buttons(in: element, path: "root") where !ids.contains(button.action) {
                            let known = ids.isEmpty ? "it declares no message action" : "its message actions are \(ids.sorted().joined(separator: ", "))"
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): the button \(button.title.debugDescription) (\(button.path)) "
                                + "names the action '\(button.action)', which the type does not declare (\(known))")
                        }
                    }
                }
                return outcome(expected: "buttons that name the type's own message actions", problems: problems)
            }
        },
        ConformanceCheck(id: "view.deterministic", level: 3,
                         summary: "A message's view is the same bytes when asked twice, and when its example is decoded again.",
                         requires: ["view.renders"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in try drawnTypes(types) {
                    for (example, content) in try type.decodedExamples() {
                        let first = ViewOutput(content), second = ViewOutput(content)
                        if first != second {
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): asked twice, \(first.contrast(with: second, "the first time", "the second"))")
                            continue
                        }
                        guard case .success(let again) = type.decode(bytes: example) else {
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): decoding it again failed")
                            continue
                        }
                        let third = ViewOutput(again)
                        if third != first {
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): \(first.contrast(with: third, "as first decoded", "decoded again"))")
                        }
                    }
                }
                return outcome(expected: "the same view bytes every time", problems: problems)
            }
        },
        ConformanceCheck(id: "view.threads", level: 6,
                         summary: "8 threads at once, for \(threadRounds) rounds started together of \(threadPasses) passes, view every example "
                            + "(freshly decoded, and one shared handle each) and get the single-threaded bytes.",
                         requires: ["view.deterministic"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let drawn = try drawnTypes(types)
                let work = drawn.flatMap { type in type.examples.map { (type, $0) } }
                let baseline = work.map { item in (try? item.0.decode(bytes: item.1).get()).map(ViewOutput.init) }
                let shared = work.map { item in try? item.0.decode(bytes: item.1).get() }
                let differences = Locked(Differences())
                // Fewer rounds for a slow plugin: the check stops when its time budget is spent.
                let deadline = RepetitionDeadline()
                ResourceChecks.runInRounds(threads: 8, rounds: threadRounds, deadline: deadline) { thread, round in
                    // Several passes a round: the threads' calls overlap for most of the round, not only after the barrier.
                    for index in (0..<threadPasses).flatMap({ _ in ResourceChecks.order(work.count, thread: thread, round: round) }) {
                        let item = work[index]
                        guard let expected = baseline[index] else { continue }
                        if case .success(let content) = item.0.decode(bytes: item.1) {
                            let seen = ViewOutput(content)
                            if seen != expected {
                                differences.withLock {
                                    $0.note(thread: thread, "\(item.0.objectName) \(preview(item.1, limit: 40)): \(expected.contrast(with: seen, "on one thread", "on this one"))")
                                }
                            }
                        }
                        if let content = shared[index] {
                            let seen = ViewOutput(content)
                            if seen != expected {
                                differences.withLock {
                                    $0.note(thread: thread, "a shared \(item.0.objectName) handle: \(expected.contrast(with: seen, "on one thread", "on this one"))")
                                }
                            }
                        }
                    }
                }
                return differences.withLock { $0.outcome(expected: "the single-threaded view on every thread") }
            }
        },
        ConformanceCheck(id: "view.budget", level: 8,
                         summary: "The view function takes under \(CheckOutcome.format(budgetMilliseconds)) ms per message (median). Warns only.",
                         requires: ["view.renders"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var slow: [String] = []
                for type in try drawnTypes(types) {
                    for (example, content) in try type.decodedExamples() {
                        for _ in 0..<10 { _ = content.rawView() }
                        var samples: [Double] = []
                        for _ in 0..<101 {
                            let start = ContinuousClock.now
                            _ = content.rawView()
                            samples.append(ResourceChecks.milliseconds(ContinuousClock.now - start))
                        }
                        let median = samples.sorted()[samples.count / 2]
                        if median > budgetMilliseconds {
                            slow.append("\(type.objectName): \(CheckOutcome.format(median)) ms for \(preview(example, limit: 32))")
                        }
                    }
                }
                return slow.isEmpty
                    ? .passed : .warning("over the \(CheckOutcome.format(budgetMilliseconds)) ms budget: \(slow.joined(separator: "; "))")
            }
        },
        ConformanceCheck(id: "view.mutations", level: 9,
                         summary: "\(mutationCount) seeded mutations of the examples: "
                            + "the view of each one that decodes never crashes, and a MISSIVE_OK view reads.",
                         requires: ["view.renders"]) { context in
            context.withTypesOnSmallStack { (types) throws(CheckFailure) in
                let drawn = try drawnTypes(types)
                var generator = context.generator(for: "view.mutations")
                var problems: [String] = []
                let deadline = RepetitionDeadline()
                var tried = 0, total = 0
                for type in drawn {
                    let mutations = Mutation.make(type, count: mutationCount / drawn.count, using: &generator)
                    total += mutations.count
                    for mutation in mutations where !deadline.isPast {
                        tried += 1
                        mutation.note(type)
                        guard case .success(let content) = type.decode(bytes: mutation.bytes) else { continue }
                        let output = ViewOutput(content)
                        guard output.status == MISSIVE_OK, let problem = readingProblem(output.bytes) else { continue }
                        problems.append("\(type.objectName) decoded \(preview(mutation.bytes, limit: 48)); its view: \(problem)")
                    }
                }
                InputTrail.clear()
                return deadline.outcome(
                    expected: "a readable view (or none) for every mutation that decodes", problems: problems, tried: tried, of: total, inputs: "mutations")
            }
        },
    ]

    /// Every button of a (sanitized) tree, with its path in the tree, title and action id, in document order.
    static func buttons(in element: ViewElement, path: String) -> [(path: String, title: String, action: String)] {
        switch element {
        case .button(let button): return [(path, button.title, button.action)]
        case .stack(let stack):
            return stack.children.enumerated().flatMap { index, child in buttons(in: child, path: "\(path).children[\(index)]") }
        default: return []
        }
    }

    /// Why the view checks do not apply to a plugin none of whose types offers the extension.
    private static let noExtension = "no type offers \(MISSIVE_VIEW_EXTENSION)"

    /// The types whose messages are drawn with the view they describe: the ones with a usable extension, status
    /// types left out (`view.status` reports them). Skips the check when there is none.
    static func drawnTypes(_ types: [PluginType]) throws(CheckFailure) -> [PluginType] {
        let drawn = types.filter { $0.describesView && $0.persistenceValue != Persistence.status.rawValue }
        guard drawn.isEmpty else { return drawn }
        let offering = types.filter(\.offersView)
        if offering.isEmpty { throw CheckFailure(.skipped(noExtension)) }
        if offering.allSatisfy({ $0.viewExtensionProblem != nil }) {
            throw CheckFailure(.skipped("no type offers a usable \(MISSIVE_VIEW_EXTENSION) (see view.extension)"))
        }
        throw CheckFailure(.skipped("only status types offer \(MISSIVE_VIEW_EXTENSION), and they are never drawn (see view.status)"))
    }

    /// Why a document a view function gave with MISSIVE_OK cannot be drawn, or `nil`: it is not JSON, is too
    /// large, or reads to nothing.
    static func readingProblem(_ bytes: [UInt8]) -> String? {
        let reading = ViewDocument.read(bytes)
        guard reading.element == nil else { return nil }
        let why = reading.problems.first.map { "\($0)" } ?? "every element in it is empty"
        return "the document \(preview(bytes, limit: 60)) gives nothing to draw (\(why))"
    }

    /// What a view function gave for one message, as compared between calls and threads.
    struct ViewOutput: Hashable, Sendable, CustomStringConvertible {
        /// The status it returned.
        let status: Int32
        /// Everything it wrote (for a failure, the reason too).
        let bytes: [UInt8]

        /// Calls the view function of `content`'s type; a type without one gives `MISSIVE_ABSENT`.
        init(_ content: PluginContent) {
            let raw = content.rawView()
            status = raw?.status ?? MISSIVE_ABSENT
            bytes = raw?.bytes ?? []
        }

        /// The document, or the status and what was written with it.
        var description: String {
            status == MISSIVE_OK ? preview(bytes, limit: 60) : "status \(status)" + (bytes.isEmpty ? "" : " with \(preview(bytes, limit: 60))")
        }

        /// How `other` differs from this output, in words, naming this one `label` and the other `otherLabel`:
        /// the statuses when they differ, else both documents from a little before the first byte that differs
        /// (`the view had …"number 1\"}]}" the first time and …"number 2\"}]}" the second`).
        func contrast(with other: ViewOutput, _ label: String, _ otherLabel: String) -> String {
            guard status == other.status else { return "the view was \(self) \(label) and \(other) \(otherLabel)" }
            let common = zip(bytes, other.bytes).prefix { $0 == $1 }.count
            let start = max(0, common - 24)
            func excerpt(_ bytes: [UInt8]) -> String { (start > 0 ? "…" : "") + preview(Array(bytes[start...]), limit: 60) }
            return "the view had \(excerpt(bytes)) \(label) and \(excerpt(other.bytes)) \(otherLabel)"
        }
    }

    /// The differences threads saw: the first one of each of a few threads in full, and how many in all.
    struct Differences: Sendable {
        private(set) var count = 0
        private(set) var first: [String] = []
        private var threads: Set<Int> = []

        /// Notes one difference seen on `thread`.
        mutating func note(thread: Int, _ difference: String) {
            count += 1
            if first.count < 3, threads.insert(thread).inserted { first.append("thread \(thread): \(difference)") }
        }

        /// `passed`, or `failed` with the first differences and the count.
        func outcome(expected: String) -> CheckOutcome {
            guard count > 0 else { return .passed }
            return .failed(expected: expected, seen: first.joined(separator: "; ") + (count > first.count ? "; \(count) differences in all" : ""))
        }
    }
}

extension PluginType {
    /// Whether the type's `get_extension` gives a `missive.view.v1` struct, usable or not.
    var offersView: Bool { describesView || viewExtensionProblem != nil }
}
