import Foundation
@_spi(Benchmarks) import Missive

/// Levels 1, 2, 4, 5 and 6: the `missive.actions.v1` extension (missive_plugin.h, "The actions extension").
///
/// The checks concern the actions a plugin declares; a plugin that declares none skips them. They run the
/// actions the way a host does, through ``MessageRegistry/perform(_:on:arguments:)`` and
/// ``MessageRegistry/compose(action:arguments:conversationID:senderID:id:sentAt:parentID:viaContainer:)``, on a
/// registry of the built-in types and the plugin.
enum ActionChecks {
    /// Rounds of `actions.threads`: each of its 8 threads runs every example call this many times.
    static let threadRounds = 20

    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "actions.metadata", level: 1,
                         summary: "Every action appears alike in the metadata and the missive.actions.v1 extension: kind, type, title, icon, "
                            + "priority, yields, signature, symbol.",
                         requires: ["metadata.agrees"]) { context in
            context.withJudgedActions { judged in
                let problems = judged.rejections.filter { $0.code == .metadataMismatch }.map(describe)
                return outcome(expected: "the same actions in the metadata and the extension", problems: problems)
            }
        },
        ConformanceCheck(id: "actions.declared", level: 1,
                         summary: "Every action loads: its extension entry is well formed, its signature parses and uses only the grammar's types, "
                            + "its id, title and icon follow the rules, a message action names one of the plugin's types, and its function is found "
                            + "(every symbol resolves).",
                         requires: ["metadata.agrees"]) { context in
            context.withJudgedActions { judged in
                let problems = judged.rejections.filter { $0.code != .metadataMismatch }.map(describe)
                return outcome(expected: "every declared action to load", problems: problems)
            }
        },
        ConformanceCheck(id: "actions.examples", level: 2,
                         summary: "Each action runs with every example argument list it declares (a message action on every example of its type) "
                            + "and gives content its type accepts, which round-trips, or an http(s) URL.",
                         requires: ["actions.metadata", "actions.declared", "examples.decode"]) { context in
            context.withActionRegistry { registry in
                var problems: [String] = []
                for action in registry.composerActions + registry.messageActions where action.plugin.path == context.path {
                    let loaded: LoadedAction
                    do throws(MissiveError) {
                        loaded = try registry.loadedAction(action)
                    } catch {
                        problems.append("\(action.id): \(error.message)")
                        continue
                    }
                    if let problem = loaded.examplesProblem {
                        problems.append("\(action.id): \(problem)")
                        continue
                    }
                    if loaded.examples.isEmpty {
                        problems.append("\(action.id) declares no example arguments, so it cannot be run; give some in its examples")
                        continue
                    }
                    for call in calls(of: loaded, registry: registry) {
                        switch call.run(registry) {
                        case .success(let outcome):
                            if let problem = roundTripProblem(outcome, registry: registry) { problems.append("\(call): \(problem)") }
                        case .failure(let error):
                            problems.append("\(call): [\(error.code)] \(error.message)")
                        }
                    }
                }
                return outcome(expected: "every example call to succeed with a valid result", problems: problems)
            }
        },
        ConformanceCheck(id: "actions.refusals", level: 4,
                         summary: "Wrong arguments never reach the plugin: for every signature, a wrong count, every wrong JSON kind, integers out of "
                            + "range, numbers that are not finite, NULs, invalid UTF-8 and lone surrogates are refused, naming the parameter; a libffi "
                            + "closure in front of each function counts no call until a valid one.",
                         requires: ["actions.metadata", "actions.declared", "examples.decode"]) { context in
            refusals(context, validate: ActionArgumentChecker.values)
        },
        ConformanceCheck(id: "actions.strings", level: 5,
                         summary: "Empty, long (up to the 1 MiB limit) and odd strings (controls, bidi overrides, escapes, noncharacters, emoji "
                            + "sequences) and extreme numbers never crash an action, and what it accepts gives a valid result.",
                         requires: ["actions.examples"]) { context in
            context.withActionRegistry { registry in
                var problems: [String] = []
                for action in registry.composerActions + registry.messageActions where action.plugin.path == context.path {
                    guard let loaded = try? registry.loadedAction(action) else { continue }
                    let base = loaded.examples.first ?? defaults(for: action.signature)
                    let messages = messageExamples(of: loaded, registry: registry).prefix(1)
                    for (position, parameter) in action.parameters.enumerated() {
                        for odd in oddValues(for: parameter.type) {
                            var arguments = base
                            arguments[position] = odd
                            let call = ExampleCall(action: action, message: messages.first, arguments: arguments)
                            if case .failure(let error) = call.run(registry), error.code == .invalidResult {
                                problems.append("\(call.description(limit: 60)): \(error.message)")
                            }
                        }
                    }
                }
                return outcome(expected: "no crash, and a valid result whenever an action succeeds", problems: problems)
            }
        },
        ConformanceCheck(id: "actions.threads", level: 6,
                         summary: "8 threads at once, for \(threadRounds) rounds, run every example call (one shared message each) and get the "
                            + "single-threaded results.",
                         requires: ["actions.examples"]) { context in
            context.withActionRegistry { registry in
                let work = (registry.composerActions + registry.messageActions).filter { $0.plugin.path == context.path }.flatMap { action in
                    (try? registry.loadedAction(action)).map { calls(of: $0, registry: registry) } ?? []
                }
                guard !work.isEmpty else { return .skipped("no example call to run") }
                let baseline = work.map { $0.result(registry) }
                let differences = Locked(ViewChecks.Differences())
                // Fewer rounds for a slow plugin: the check stops when its time budget is spent.
                let deadline = RepetitionDeadline()
                ResourceChecks.runInRounds(threads: 8, rounds: threadRounds, deadline: deadline) { thread, round in
                    for index in ResourceChecks.order(work.count, thread: thread, round: round) {
                        let call = work[index]
                        let seen = call.result(registry)
                        if seen != baseline[index] {
                            differences.withLock { $0.note(thread: thread, "\(call): \(baseline[index]) on one thread, \(seen) on this one") }
                        }
                    }
                }
                return differences.withLock { $0.outcome(expected: "the single-threaded result on every thread") }
            }
        },
    ]

    /// `fixture:x: action 'vote': reason`.
    private static func describe(_ error: MissiveError) -> String {
        [error.objectName, error.action.map { "action '\($0)'" }, error.message].compactMap { $0 }.joined(separator: ": ")
    }

    // MARK: Example calls

    /// One call of an action: on a message (for a message action) with arguments.
    struct ExampleCall: Sendable, CustomStringConvertible {
        let action: ActionDeclaration
        let message: Message?
        let arguments: [ActionArgument]

        /// What the call gave: a message or a URL, or the error.
        func run(_ registry: MessageRegistry) -> Result<ActionResult, MissiveError> {
            Result { () throws(MissiveError) in
                if let message { return try registry.perform(action.id, on: message, arguments: arguments) }
                return .edited(try registry.compose(action: action.id, arguments: arguments, conversationID: "check", senderID: "check", id: "check", sentAt: 0))
            }
        }

        /// The result in one comparable line.
        func result(_ registry: MessageRegistry) -> String {
            switch run(registry) {
            case .success(.edited(let message)): "content " + String(decoding: message.envelope.content, as: UTF8.self)
            case .success(.url(let url)): "url " + url
            case .failure(let error): "error [\(error.code)] \(error.message)"
            }
        }

        var description: String { description(limit: 120) }

        /// `vote on demo:poll example {"question":…} with [0,"alice"]`, arguments cut to `limit` bytes.
        func description(limit: Int) -> String {
            let list = Array(ActionArgument.jsonArray(arguments).utf8)
            let on = message.map { " on \(action.objectName) example \(preview($0.envelope.content, limit: 40))" } ?? ""
            return "\(action.id)\(on) with \(preview(list, limit: limit))"
        }
    }

    /// Every example call of an action: each argument list, on each example of its type for a message action.
    static func calls(of action: LoadedAction, registry: MessageRegistry) -> [ExampleCall] {
        guard action.info.kind == .message else { return action.examples.map { ExampleCall(action: action.info, message: nil, arguments: $0) } }
        return messageExamples(of: action, registry: registry).flatMap { message in
            action.examples.map { ExampleCall(action: action.info, message: message, arguments: $0) }
        }
    }

    /// The examples of a message action's type, decoded through the registry.
    private static func messageExamples(of action: LoadedAction, registry: MessageRegistry) -> [Message] {
        guard let type = action.type else { return [] }
        return type.examples.map { example in
            registry.decode(Envelope(id: "check", conversationID: "check", senderID: "check", sentAt: 0, objectName: type.objectName, content: example))
        }.filter(\.isKnown)
    }

    /// Why a result does not round-trip through its type, or `nil`: its type's encoding decodes again to the
    /// same encoding.
    private static func roundTripProblem(_ result: ActionResult, registry: MessageRegistry) -> String? {
        guard case .edited(let message) = result else { return nil }
        do {
            let first = try message.content.typeEncodedContent()
            let again = registry.decode(Envelope(id: "check", conversationID: "check", senderID: "check", sentAt: 0, objectName: message.content.objectName,
                                                 content: first))
            guard again.isKnown else { return "its result's encoding \(preview(first, limit: 60)) does not decode: \(again.unknown?.reason.description ?? "")" }
            let second = try again.content.typeEncodedContent()
            return first == second ? nil : "its result does not round-trip: \(preview(first, limit: 60)) became \(preview(second, limit: 60))"
        } catch {
            return "its result cannot be encoded: \(error.message)"
        }
    }

    // MARK: Wrong and odd arguments

    /// A valid argument of each type, where an action declares no example.
    static func defaults(for signature: ActionSignature) -> [ActionArgument] {
        signature.valueParameters.map { parameter in
            switch parameter.type {
            case .int32, .int64: 0
            case .double: 0.5
            case .bool: false
            default: ""
            }
        }
    }

    /// Arguments no parameter of `type` takes, each with what the refusal must say.
    static func wrongValues(for type: ActionSignature.ParameterType) -> [ActionArgument] {
        let json: [String]
        switch type {
        case .int32: json = ["2147483648", "-2147483649", "1.5", "1e2", #""1""#, "null", "true", "[]", "{}"]
        case .int64: json = ["9223372036854775808", "-9223372036854775809", "-1.0", #""1""#, "null", "false", "[1]"]
        case .double: json = ["1e999", "-1e999", #""1.0""#, "null", "true", "{}"]
        case .bool: json = ["0", "1", #""true""#, "null", "[]"]
        case .string: json = [#""a\u0000b""#, #""\ud800""#, #""\udc00x""#, "1", "null", #"["a"]"#, "abc", #""a" "b""#]
        case .message, .sink: json = []
        }
        var values = json.map { ActionArgument.json(Array($0.utf8)) }
        if type == .string {
            values.append(.json([0x22, 0xFF, 0xFE, 0x22]))
            values.append(.json([0x22, 0xED, 0xA0, 0x80, 0x22]))
            values.append(.string(String(repeating: "x", count: ActionSignature.maxStringBytes + 1)))
        }
        if type == .double { values += [.number(.nan), .number(-.infinity)] }
        return values
    }

    /// Arguments an action must survive.
    static func oddValues(for type: ActionSignature.ParameterType) -> [ActionArgument] {
        switch type {
        case .int32: return [.integer(Int64(Int32.min)), .integer(Int64(Int32.max)), 0, -1]
        case .int64: return [.integer(.min), .integer(.max), 0, -1]
        case .double:
            return [0, .number(-0.0), .number(.greatestFiniteMagnitude), .number(-.greatestFiniteMagnitude), .number(.leastNonzeroMagnitude),
                    .number(-.leastNonzeroMagnitude), 123_456_789.123]
        case .bool: return [true, false]
        case .string:
            return [
                "", " ", .string(String(repeating: "x", count: 64 << 10)), .string(String(repeating: "é", count: ActionSignature.maxStringBytes / 2)),
                "\u{1}\u{1F}\u{7F}\u{85}\u{9F}", "\u{1B}[2J\u{1B}]0;title\u{7}", "\u{202E}gnp.exe\u{202C}", "\u{FEFF}\u{200B}\u{2028}\u{2029}",
                "\"\\/\u{8}\u{C}\n\r\t", "e\u{301}\u{308}\u{20DD}", "👩‍👩‍👧‍👦🏳️‍🌈", "\u{FFFF}\u{FFFE}\u{10FFFF}", "%s%n%x%%", #"{"a":[1,"b"]}"#,
                "'; DROP TABLE messages; --", "中文 العربية עברית",
            ]
        case .message, .sink: return []
        }
    }

    /// `actions.refusals`, with the argument check it holds hosts to: ``ActionArgumentChecker/values(_:for:)``,
    /// or another for the check's own tests.
    static func refusals(_ context: CheckContext, validate: @escaping ([ActionArgument], ActionDeclaration) throws(MissiveError) -> [ActionValue]) -> CheckOutcome {
        context.withActionRegistry { registry in
            var problems: [String] = []
            for action in registry.composerActions + registry.messageActions where action.plugin.path == context.path {
                guard let loaded = try? registry.loadedAction(action) else { continue }
                let (counting, counter): (ActionFunction, ActionCallCounter)
                do throws(ActionFunction.PreparationError) {
                    (counting, counter) = try loaded.function.counting()
                } catch {
                    problems.append("\(action.id): \(error.description)")
                    continue
                }
                let message = messageExamples(of: loaded, registry: registry).first
                if action.kind == .message && message == nil { continue }
                func call(_ values: [ActionValue]) {
                    if let content = message?.content as? PluginContent {
                        _ = content.run(loaded, through: counting, values)
                    } else {
                        _ = loaded.compose(through: counting, values)
                    }
                }
                let base = loaded.examples.first ?? defaults(for: action.signature)
                var lists: [(arguments: [ActionArgument], parameter: String?)] = [(base + [0], nil)]
                if let last = action.parameters.last { lists.append((Array(base.dropLast()), last.name)) }
                for (position, parameter) in action.parameters.enumerated() {
                    for wrong in wrongValues(for: parameter.type) {
                        var arguments = base
                        arguments[position] = wrong
                        lists.append((arguments, parameter.name))
                    }
                }
                var found: [String] = []
                for (arguments, parameter) in lists {
                    let shown = preview(Array(ActionArgument.jsonArray(arguments).utf8), limit: 60)
                    do throws(MissiveError) {
                        call(try validate(arguments, action))
                        found.append("\(action.id) accepted \(shown)")
                    } catch {
                        if error.code != .invalidArgument || error.parameter != parameter || error.action != action.id {
                            found.append("\(action.id) refused \(shown) without naming the parameter \(parameter ?? "(none)"): [\(error.code)] \(error.message)")
                        }
                    }
                }
                // The count first: it is what the check is about.
                if counter.calls > 0 { found.insert("\(action.id) was called \(counter.calls) times with arguments it should never see", at: 0) }
                problems += found
                // A valid call goes through the closure: it counts, so the zero above means something.
                if let values = try? ActionArgumentChecker.values(base, for: action) {
                    let before = counter.calls
                    call(values)
                    if counter.calls != before + 1 { problems.append("\(action.id): a valid call was not counted") }
                }
            }
            return outcome(expected: "every wrong argument refused before the call", problems: problems)
        }
    }
}

extension CheckContext {
    /// Runs `body` with the plugin's actions judged as the loader judges them; skips the check when the
    /// plugin declares none.
    func withJudgedActions(_ body: ((actions: [LoadedAction], rejections: [MissiveError])) -> CheckOutcome) -> CheckOutcome {
        guard case .success(let metadata) = metadata, case .success(let probe) = probe else { return .skipped("metadata or descriptor unavailable") }
        if metadata.actions.isEmpty && probe.actions.isEmpty { return .skipped("the plugin declares no action") }
        return body(probe.judgeActions(metadata: metadata))
    }

    /// Runs `body` with a registry of the built-in types and the plugin, as a host builds one; skips the check
    /// when the plugin declares no action, or cannot be loaded.
    func withActionRegistry(_ body: (MessageRegistry) -> CheckOutcome) -> CheckOutcome {
        switch actionRegistry {
        case .failure(let outcome): return outcome.outcome
        case .success(let registry): return body(registry)
        }
    }
}
