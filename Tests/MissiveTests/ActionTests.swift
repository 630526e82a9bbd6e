import Dispatch
import Foundation
@_spi(Benchmarks) import Missive
import MissiveTestSupport
import Testing

/// Actions (`missive.actions.v1`): declared by real plugins, checked by the loader, called through libffi.
@Suite struct ActionTests {
    /// A registry of the samples and ActionTypes, each from a private copy, so that call counts are this
    /// test's own.
    static func registry(_ products: [String] = Fixtures.samplePlugins + ["ActionTypes"], loading: PluginLoading = .eager) throws -> DiscoveryResult {
        MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(products)), loading: loading)
    }

    /// A message of ActionTypes' type.
    static func fixtureMessage(_ registry: MessageRegistry, content: String = #"{"fixture":true}"#) -> Message {
        registry.decode(Fixtures.envelope("fixture:actions", content))
    }

    /// The content an ActionTypes action wrote, parsed.
    static func written(_ result: ActionResult) throws -> [String: Any] {
        guard case .edited(let message) = result else {
            Issue.record("expected new content, got \(result)")
            return [:]
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(message.envelope.content)) as? [String: Any])
    }

    /// How many calls ActionTypes' actions have had.
    static func calls(_ registry: MessageRegistry) throws -> Int {
        let message = try registry.compose(action: "fixture.calls", conversationID: "c", senderID: "s", id: "n", sentAt: 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(message.envelope.content)) as? [String: Any])
        return try #require(json["calls"] as? Int)
    }

    @Test func theSamplesDeclareTheirActionsAndTheHostListsThemInMenuOrder() throws {
        let result = try Self.registry(Fixtures.samplePlugins)
        #expect(result.rejections.isEmpty, "\(result.rejections)")
        let registry = result.registry
        #expect(registry.composerActions.map(\.id) == ["demo.poll.create", "demo.rating.create"])
        let poll = try #require(registry.composerActions.first)
        #expect(poll.title == "Poll" && poll.icon == "chart.bar" && poll.priority == 50 && poll.objectName == "demo:poll")
        #expect(poll.signature.description == "int32(string question, string options, sink out)")
        #expect(poll.parameters.map(\.name) == ["question", "options"])
        let rate = registry.composerActions[1]
        #expect(rate.plugin.name == "CRating" && rate.signature.description == "int32(int32 score, string comment, sink out)")
        #expect(registry.actions(forType: "demo:poll").map(\.id) == ["vote"])
        #expect(registry.actions(forType: "demo:link").map { "\($0.id) \($0.yields)" } == ["open url"])
        #expect(registry.actions(forType: "demo:rating").isEmpty)
        let unknown = registry.decode(Fixtures.envelope("acme:unknown", "{}"))
        #expect(registry.actions(for: unknown).isEmpty)
    }

    @Test func everyParameterTypeIsMarshalledExactlyThroughLibffi() throws {
        let registry = try Self.registry(["ActionTypes"]).registry
        let message = Self.fixtureMessage(registry)
        func value(_ action: String, _ argument: ActionArgument, key: String) throws -> Any? {
            try Self.written(try registry.perform(action, on: message, arguments: [argument]))[key]
        }
        #expect(try value("int32", .json(Array("-2147483648".utf8)), key: "int32") as? Int == -2_147_483_648)
        #expect(try value("int32", 2_147_483_647, key: "int32") as? Int == 2_147_483_647)
        #expect(try value("int64", .json(Array("-9223372036854775808".utf8)), key: "int64") as? Int == Int.min)
        #expect(try value("int64", 9_223_372_036_854_775_807, key: "int64") as? Int == Int.max)
        for number in [0.1, -2.5e300, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, 3] {
            #expect(try value("double", .number(number), key: "double") as? Double == number, "\(number)")
        }
        // Negative zero keeps its sign (JSONSerialization would read "-0" back as the integer 0).
        guard case .edited(let negativeZero) = try registry.perform("double", on: message, arguments: [.number(-0.0)]) else { return }
        #expect(negativeZero.envelope.content.text.contains(#""double":-0,"#))
        #expect(try value("double", 7, key: "double") as? Double == 7)
        #expect(try value("bool", true, key: "bool") as? Bool == true)
        #expect(try value("bool", false, key: "bool") as? Bool == false)
        for text in ["", "héllo \"wörld\" ✓", "emoji 👩‍👩‍👧 and 中文", String(repeating: "x", count: 100_000), "tab\tnew\nline"] {
            let written = try Self.written(try registry.perform("string", on: message, arguments: [.string(text)]))
            #expect(written["string"] as? String == text)
            #expect(written["length"] as? Int == text.utf8.count)
        }
        // The message handle between two values: parameters go in the signature's order.
        let around = try Self.written(try registry.perform("around", on: message, arguments: [-7, "after"]))
        #expect(around["before"] as? Int == -7 && around["after"] as? String == "after")

        // 16 values: more integers and more doubles than there are registers for them.
        let mixed = try registry.compose(
            action: "fixture.mixed",
            arguments: [1, 2.5, 3, true, "e", 6.5, 7.5, 8.5, .integer(Int64.max), false, "k", 12.5, 13.5, 14.5, 15.5, 16.5],
            conversationID: "c", senderID: "s")
        let values = try #require((try JSONSerialization.jsonObject(with: Data(mixed.envelope.content)) as? [String: Any])?["mixed"] as? [Any])
        #expect(values.count == 16)
        #expect(values[0] as? Int == 1 && values[2] as? Int == 3 && values[8] as? Int == Int.max)
        #expect(values[3] as? Bool == true && values[9] as? Bool == false)
        #expect(values[4] as? String == "e" && values[10] as? String == "k")
        #expect([1, 5, 6, 7, 11, 12, 13, 14, 15].map { values[$0] as? Double } == [2.5, 6.5, 7.5, 8.5, 12.5, 13.5, 14.5, 15.5, 16.5])
    }

    /// Every bad argument is refused before the call, naming the action and the parameter; the plugin counts
    /// its calls, and the count shows that none of them reached it.
    @Test func badArgumentsAreRefusedBeforeThePluginIsCalled() throws {
        let registry = try Self.registry(["ActionTypes"]).registry
        let message = Self.fixtureMessage(registry)
        let before = try Self.calls(registry)
        let cases: [(action: String, arguments: [ActionArgument], parameter: String?, says: String)] = [
            ("int32", [], "value", "1 argument (int32 value); 0 given"),
            ("int32", [1, 2], nil, "2 given"),
            ("int32", ["1"], "value", "expected an integer"),
            ("int32", [.json(Array("2147483648".utf8))], "value", "out of range"),
            ("int32", [.json(Array("-2147483649".utf8))], "value", "out of range"),
            ("int32", [.json(Array("1.5".utf8))], "value", "no fraction or exponent"),
            ("int32", [.json(Array("1e3".utf8))], "value", "no fraction or exponent"),
            ("int32", [.null], "value", "got null"),
            ("int32", [true], "value", "got true"),
            ("int64", [.json(Array("9223372036854775808".utf8))], "value", "out of range"),
            ("int64", [.json(Array("[1]".utf8))], "value", "got an array"),
            ("double", [.json(Array("1e999".utf8))], "value", "must be finite"),
            ("double", [.number(.infinity)], "value", "must be finite"),
            ("double", [.number(.nan)], "value", "must be finite"),
            ("double", ["2"], "value", "expected a finite number"),
            ("bool", [1], "value", "expected true or false"),
            ("bool", [.json(Array("\"true\"".utf8))], "value", "expected true or false"),
            ("string", [.string("a\u{0}b")], "value", "U+0000"),
            ("string", [.json(Array(#""a\u0000b""#.utf8))], "value", "U+0000"),
            ("string", [.json([0x22, 0xFF, 0x22])], "value", "invalid UTF-8"),
            ("string", [.json([0x22, 0xC3, 0x28, 0x22])], "value", "invalid UTF-8"),
            ("string", [.json(Array(#""\ud800""#.utf8))], "value", "lone surrogate"),
            ("string", [.json(Array("alice".utf8))], "value", "written in quotes"),
            ("string", [.json(Array(#""a" "b""#.utf8))], "value", "not one JSON value"),
            ("string", [.json(Array(#"{"a":1}"#.utf8))], "value", "got an object"),
            ("string", [.string(String(repeating: "x", count: ActionSignature.maxStringBytes + 1))], "value", "at most 1048576"),
            ("around", ["7", "after"], "before", "argument 1 (int32 before)"),
            ("around", [7, 8], "after", "argument 2 (string after)"),
            ("around", [7], "after", "so after is missing"),
        ]
        for bad in cases {
            do {
                _ = try registry.perform(bad.action, on: message, arguments: bad.arguments)
                Issue.record("\(bad.action) \(bad.arguments) was accepted")
            } catch {
                #expect(error.code == .invalidArgument, "\(bad.action) \(bad.arguments): \(error)")
                #expect(error.action == bad.action)
                #expect(error.objectName == "fixture:actions")
                #expect(error.file?.hasSuffix("/libActionTypes.so") == true)
                #expect(error.parameter == bad.parameter, "\(bad.action) \(bad.arguments): \(error.message)")
                #expect(error.message.contains(bad.says), "\(bad.action) \(bad.arguments): \(error.message)")
                #expect(error.message.contains(bad.action))
            }
        }
        #expect(try Self.calls(registry) == before, "a refused argument reached the plugin")
        _ = try registry.perform("int32", on: message, arguments: [1])
        #expect(try Self.calls(registry) == before + 1, "the counter counts")
    }

    @Test func aPollIsCreatedAndVotedOnAndKeepsWhatItsTypeDoesNotKnow() throws {
        let registry = try Self.registry(Fixtures.samplePlugins).registry
        let created = try registry.compose(
            action: "demo.poll.create", arguments: ["Lunch?", "Pizza\n Sushi \n\nSalad"], conversationID: "team", senderID: "alice", id: "p1",
            sentAt: 1_700_000_000_000)
        #expect(created.envelope.id == "p1" && created.envelope.senderID == "alice" && created.envelope.conversationID == "team")
        #expect(created.envelope.sentAt == 1_700_000_000_000 && created.envelope.objectName == "demo:poll")
        #expect(created.envelope.fallbackText == "[Poll] Lunch?")
        #expect(created.envelope.content.text == #"{"options":["Pizza","Sushi","Salad"],"question":"Lunch?"}"#)

        // The poll as a newer sender's host would send it on: under MS:Custom, with a member this version lacks.
        var received = created.envelope
        received.objectName = "MS:Custom"
        received.content = Array(#"{"businessID":"poll","question":"Lunch?","options":["Pizza","Sushi","Salad"],"deadline":{"at":1700003600}}"#.utf8)
        let poll = registry.decode(received)
        #expect(poll.isKnown)
        #expect(registry.actions(for: poll).map(\.id) == ["vote"])

        guard case .edited(let once) = try registry.perform("vote", on: poll, arguments: [1, "bob"]),
            case .edited(let twice) = try registry.perform("vote", on: once, arguments: [2, "bob"]),
            case .edited(let thrice) = try registry.perform("vote", on: twice, arguments: [0, "carol"])
        else {
            Issue.record("vote gave no content")
            return
        }
        #expect(thrice.envelope.id == "p1" && thrice.envelope.objectName == "MS:Custom")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(thrice.envelope.content)) as? [String: Any])
        #expect(json["votes"] as? [Int] == [1, 0, 1], "bob's second vote moved his first")
        #expect(json["voters"] as? [String: Int] == ["bob": 2, "carol": 0])
        #expect(json["businessID"] as? String == "poll")
        #expect((json["deadline"] as? [String: Int])?["at"] == 1_700_003_600, "the newer sender's member survived")
        #expect(thrice.envelope.content.text.hasSuffix(#","businessID":"poll","deadline":{"at":1700003600}}"#), "kept as received")
        // The original message is untouched.
        #expect(poll.envelope.content == received.content)
        // The poll's view names the action its buttons run.
        let view = try #require(thrice.content.view)
        #expect(ViewDocument.encode(view).text.contains(#""action":"vote","arguments":[0]"#))
    }

    @Test func theLinkOpensItsURLAndTheCSampleRates() throws {
        let registry = try Self.registry(Fixtures.samplePlugins).registry
        let link = registry.decode(Fixtures.envelope("demo:link", #"{"text":"Docs","link":"https://example.com/docs"}"#))
        guard case .url(let url) = try registry.perform("open", on: link) else {
            Issue.record("open gave no URL")
            return
        }
        #expect(url == "https://example.com/docs")
        // A link the type takes but that is not http: the plugin fails, with its reason.
        let odd = registry.decode(Fixtures.envelope("demo:link", #"{"text":"Mail","link":"mailto:a@example.com"}"#))
        #expect(throws: MissiveError.self) { try registry.perform("open", on: odd) }
        do {
            _ = try registry.perform("open", on: odd)
        } catch {
            #expect(error.code == .pluginFailure && error.message.contains("is not an http or https URL"))
        }

        let rating = try registry.compose(action: "demo.rating.create", arguments: [4, "Nice \"work\"\n!"], conversationID: "c", senderID: "bob")
        #expect(rating.content.objectName == "demo:rating")
        #expect(rating.digest == "[Rating] ★★★★☆ Nice \"work\" !")
        #expect(rating.envelope.content.text == #"{"comment":"Nice \"work\"\n!","score":4}"#)
        #expect(UUID(uuidString: rating.envelope.id) != nil, "a new id")
        #expect(abs(rating.envelope.sentAt - MessageRegistry.now()) < 60_000, "now")
        do {
            _ = try registry.compose(action: "demo.rating.create", arguments: [9, ""], conversationID: "c", senderID: "bob")
            Issue.record("a score of 9 was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message == "demo.rating.create refused the arguments: a score is a whole number from 1 to 5")
        }
    }

    @Test func anActionsInvalidResultLeavesTheMessageAsItWas() throws {
        let result = try Self.registry(["BrokenActionInvalidResult", "BrokenActionBadURL"])
        #expect(result.rejections.isEmpty, "\(result.rejections)")
        let registry = result.registry
        let message = registry.decode(Fixtures.envelope("fixture:invalid-result", #"{"fixture":true}"#))
        do {
            _ = try registry.perform("reset", on: message)
            Issue.record("invalid content was accepted")
        } catch {
            #expect(error.code == .invalidResult)
            #expect(error.message.hasPrefix("reset gave content that is not valid for fixture:invalid-result"))
        }
        #expect(message.envelope.content.text == #"{"fixture":true}"#)
        let link = registry.decode(Fixtures.envelope("fixture:bad-url", #"{"fixture":true}"#))
        do {
            _ = try registry.perform("open", on: link)
            Issue.record("a javascript: URL was accepted")
        } catch {
            #expect(error.code == .invalidResult)
            #expect(error.message.contains("'javascript:alert(1)', which is not an http or https URL"))
        }
    }

    @Test func theLoaderRefusesBrokenActionsAndKeepsThePluginsTypes() throws {
        let result = try Self.registry(["BrokenActionBadSignature", "BrokenActionMissingSymbol", "BrokenActionMetadataMismatch"])
        let byFile = Dictionary(grouping: result.rejections) { URL(fileURLWithPath: $0.file ?? "").lastPathComponent }
        let signature = try #require(byFile["libBrokenActionBadSignature.so"]?.first)
        #expect(signature.code == .invalidAction && signature.action == "scale")
        #expect(signature.message.contains("'float', which is not one of int32, int64, double, bool, string, message, sink"))
        let symbol = try #require(byFile["libBrokenActionMissingSymbol.so"]?.first)
        #expect(symbol.code == .invalidAction && symbol.message.contains("missing_symbol_touch is not exported"))
        let mismatch = try #require(byFile["libBrokenActionMetadataMismatch.so"]?.first)
        #expect(mismatch.code == .metadataMismatch && mismatch.message.contains("title 'Vote' vs 'Poll'"))
        #expect(result.rejections.count == 3)
        // The plugins loaded without those actions.
        for type in ["fixture:bad-signature", "fixture:missing-symbol", "fixture:action-mismatch"] {
            #expect(result.registry.type(objectName: type) != nil, "\(type)")
        }
        #expect(result.registry.composerActions.isEmpty && result.registry.messageActions.isEmpty)
        let message = result.registry.decode(Fixtures.envelope("fixture:bad-signature", #"{"fixture":true}"#))
        #expect(throws: MissiveError.self) { try result.registry.perform("scale", on: message, arguments: [2]) }
    }

    @Test func aComposerIDIsTakenByTheFirstPluginAndActionsOnRefusedTypesGoWithThem() throws {
        // Two copies of the C sample: the second's type and composer action are both refused as clashes.
        let directory = try Fixtures.stage(["CRating", "RatingRival"], renamed: ["CRating": "liba.so", "RatingRival": "libb.so"])
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory))
        let rival = result.rejections.filter { $0.file?.hasSuffix("/libb.so") == true }
        #expect(rival.contains { $0.code == .duplicateName && $0.objectName == "demo:rating" && $0.action == nil })
        #expect(rival.contains { $0.action == "demo.rating.create" && $0.code == .duplicateName && $0.message.contains("CRating") })
        #expect(result.registry.composerActions.map(\.plugin.name) == ["CRating"])
    }

    @Test func lazyPluginsListTheirActionsFromMetadataAndLoadOnFirstUse() throws {
        let directory = try Fixtures.stage(["DemoMessages"], renamed: ["DemoMessages": "libLazyActions.so"])
        let path = directory + "/libLazyActions.so"
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), loading: .lazy)
        #expect(result.rejections.isEmpty)
        #expect(result.registry.composerActions.map(\.id) == ["demo.poll.create"])
        #expect(result.registry.actions(forType: "demo:poll").first?.signature.description == "int32(message message, int32 option, string voter, sink out)")
        #expect(try !Fixtures.mappedFiles().contains(path), "listing actions must not load the plugin")
        let poll = try result.registry.compose(action: "demo.poll.create", arguments: ["Q?", "a\nb"], conversationID: "c", senderID: "s")
        #expect(try Fixtures.mappedFiles().contains(path))
        guard case .edited(let voted) = try result.registry.perform("vote", on: poll, arguments: [0, "x"]) else {
            Issue.record("vote gave no content")
            return
        }
        #expect(voted.envelope.content.text.contains(#""votes":[1,0]"#))
    }

    @Test func actionsRunFromManyThreadsAtOnce() throws {
        let registry = try Self.registry(["ActionTypes"]).registry
        let message = Self.fixtureMessage(registry)
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                do {
                    let written = try Self.written(try registry.perform("around", on: message, arguments: [.integer(Int64(thread * 1000 + round)), .string("t\(thread)")]))
                    if written["before"] as? Int != thread * 1000 + round || written["after"] as? String != "t\(thread)" {
                        failures.withLock { $0.append("thread \(thread) round \(round): \(written)") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(try Self.calls(registry) == 1600)
    }

    /// The closure a check puts in front of an action counts the calls and forwards them with their
    /// arguments and result intact.
    @Test func aCountingClosureForwardsEveryCall() throws {
        let result = try Self.registry(["ActionTypes"])
        let plugin = try #require(result.plugins.first)
        let action = try #require(plugin.loadedActions.first { $0.info.id == "around" })
        let (counting, counter) = try action.function.counting()
        let message = Self.fixtureMessage(result.registry)
        let content = try #require(message.content as? PluginContent)
        let values = try ActionArgumentChecker.values([42, "through a closure"], for: action.info)
        let output = try #require(content.run(action, through: counting, values))
        #expect(output.succeeded)
        #expect(output.bytes.text.contains(#""before":42,"after":"through a closure""#))
        #expect(counter.calls == 1)
        #expect(counting.address != action.function.address)
    }

    @Test func theMissiveExecutableLinksLibffi() async throws {
        let run = try await Fixtures.run("/usr/bin/ldd", [Fixtures.buildDirectory + "/missive"])
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").contains { $0.contains("libffi.so") }, "\(run.stdout)")
    }
}

extension ActionResult: CustomStringConvertible {
    public var description: String {
        switch self {
        case .edited(let message): "edited(\(message.envelope.content.text))"
        case .url(let url): "url(\(url))"
        }
    }
}

/// Action records in the metadata: read as written, cached, and refused when malformed.
@Suite struct ActionMetadataTests {
    static func metadata(_ records: String...) throws(MissiveError) -> PluginMetadata {
        let plugin = #"{"record":"plugin","abi":1,"abiMinor":1,"name":"P","version":"1","vendor":"V"}"#
        return try PluginMetadata.parse(Array(([plugin] + records).joined(separator: "\u{0}").utf8))
    }

    @Test func actionRecordsAreReadAsWritten() throws {
        let metadata = try Self.metadata(
            #"{"signature":"int32( message m ,int32 n,sink out )","record":"action","kind":"message","objectName":"a:b","id":"go","title":"Go ✓","icon":"run","priority":-3,"yields":"url","symbol":"go","future":{"x":1}}"#,
            #"{"record":"action","kind":"composer","objectName":"a:b","id":"a.new","title":"New","icon":"plus","priority":7,"signature":"int32(sink out)"}"#)
        #expect(metadata.actions == [
            PluginMetadata.ActionEntry(kind: .message, objectName: "a:b", id: "go", title: "Go ✓", icon: "run", priority: -3, yields: .url,
                                       signature: "int32( message m ,int32 n,sink out )", symbol: "go"),
            PluginMetadata.ActionEntry(kind: .composer, objectName: "a:b", id: "a.new", title: "New", icon: "plus", priority: 7, signature: "int32(sink out)"),
        ])
        #expect(try ActionSignature(parsing: metadata.actions[0].signature).description == "int32(message m, int32 n, sink out)")
    }

    @Test func malformedActionRecordsRefuseTheMetadata() throws {
        let base = #""record":"action","objectName":"a:b","id":"go","title":"Go","icon":"run","priority":1,"signature":"int32(sink out)""#
        let cases: [(String, String)] = [
            (#"{\#(base),"kind":"both"}"#, "'kind' is not"),
            (#"{\#(base),"kind":"message","yields":"pdf"}"#, "'yields' is not"),
            (#"{\#(base),"kind":"composer","yields":"url"}"#, "a composer action yields content"),
            (#"{"record":"action","kind":"message","objectName":"a:b","id":"go","title":"Go","icon":"run","priority":3000000000,"signature":"int32(sink out)"}"#, "'priority'"),
            (#"{"record":"action","kind":"message","objectName":"a:b","id":"go","icon":"run","priority":1,"signature":"int32(sink out)"}"#, "'title'"),
            (#"{\#(base),"kind":"message","symbol":""}"#, "'symbol'"),
        ]
        for (record, says) in cases {
            #expect(throws: MissiveError.self) { try Self.metadata(record) }
            do {
                _ = try Self.metadata(record)
            } catch {
                #expect(error.code == .invalidMetadata && error.message.contains(says), "\(record): \(error.message)")
            }
        }
    }

    @Test func signaturesFollowTheGrammar() throws {
        func problem(_ text: String, _ kind: ActionKind = .message) -> String? {
            do {
                return try ActionSignature(parsing: text).problem(for: kind)
            } catch {
                return error.description
            }
        }
        #expect(problem("int32(message m, int32 a, int64 b, double c, bool d, string e, sink out)") == nil)
        #expect(problem("int32 ( sink\tout )", .composer) == nil)
        #expect(problem("void(sink out)")?.contains("return type, int32") == true)
        #expect(problem("int32(message m, float f, sink out)")?.contains("'float'") == true)
        #expect(problem("int32(message m, int32, sink out)")?.contains("has no name") == true)
        #expect(problem("int32(message m, int32 Option, sink out)")?.contains("must start with a-z") == true)
        #expect(problem("int32(message m, int32 a, int32 a, sink out)")?.contains("used twice") == true)
        #expect(problem("int32(message m, sink out) x")?.contains("after ')'") == true)
        #expect(problem("int32(message m, sink out")?.contains("expected ',' or ')'") == true)
        #expect(problem("int32(int32 a, sink out)")?.contains("exactly one message") == true)
        #expect(problem("int32(message m, sink out)", .composer)?.contains("takes no message") == true)
        #expect(problem("int32(message m, sink a, sink b)")?.contains("exactly one sink") == true)
        let values = (0..<17).map { "int32 v\($0)" }.joined(separator: ", ")
        #expect(problem("int32(\(values), sink out)", .composer)?.contains("at most 16") == true)
    }

    @Test func theCacheKeepsActions() throws {
        let directory = try Fixtures.stage(["CRating"])
        let cacheFile = try Fixtures.temporaryDirectory() + "/cache"
        let first = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: PluginMetadataCache(file: cacheFile), loading: .lazy)
        let cache = PluginMetadataCache(file: cacheFile)
        let second = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache, loading: .lazy)
        #expect(cache.statistics.hits == 1)
        #expect(second.registry.composerActions == first.registry.composerActions)
        #expect(second.registry.composerActions.map(\.id) == ["demo.rating.create"])
    }
}
