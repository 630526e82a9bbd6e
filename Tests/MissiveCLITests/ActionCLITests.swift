import Foundation
import Missive
import MissiveRendering
import MissiveTestSupport
import Testing

/// `missive actions`, `act` and `compose`, run as users run them, and the action buttons the renderers draw.
@Suite struct ActionCLITests {
    static func object(_ text: some StringProtocol) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// `missive compose demo.poll.create …`, then `missive act … --action vote …` twice: the tallies are right,
    /// the members the type does not know survive, and `missive render` draws the result with its buttons.
    @Test func aPollIsComposedVotedOnTwiceAndRendered() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let compose = try await Fixtures.missive(
            "compose", "demo.poll.create", "--arg", #""Lunch today?""#, "--arg", #""Pizza\nSushi\nSalad""#, "--sender", "alice",
            "--conversation", "team")
        #expect(compose.status == 0, "\(compose.stderr)")
        let created = try Self.object(compose.stdout)
        let id = try #require(created["id"] as? String)
        #expect(created["senderID"] as? String == "alice" && created["conversationID"] as? String == "team")
        #expect(created["objectName"] as? String == "demo:poll")
        // What a newer sender adds to the poll, which this host's type does not know.
        var content = try #require(created["content"] as? [String: Any])
        content["deadline"] = "12:00"
        var envelope = created
        envelope["content"] = content
        try JSONSerialization.data(withJSONObject: envelope).write(to: URL(fileURLWithPath: folder + "/poll.jsonl"))

        let first = try await Fixtures.missive("act", folder + "/poll.jsonl", "--id", id, "--action", "vote", "--arg", "1", "--arg", #""bob""#)
        #expect(first.status == 0, "\(first.stderr)")
        try first.stdout.write(toFile: folder + "/poll2.jsonl", atomically: true, encoding: .utf8)
        let second = try await Fixtures.missive("act", folder + "/poll2.jsonl", "--id", id, "--action", "vote", "--arg", "2", "--arg", #""carol""#)
        #expect(second.status == 0, "\(second.stderr)")
        try second.stdout.write(toFile: folder + "/poll3.jsonl", atomically: true, encoding: .utf8)

        let voted = try Self.object(second.stdout)
        #expect(voted["id"] as? String == id)
        let poll = try #require(voted["content"] as? [String: Any])
        #expect(poll["votes"] as? [Int] == [0, 1, 1])
        #expect(poll["voters"] as? [String: Int] == ["bob": 1, "carol": 2])
        #expect(poll["deadline"] as? String == "12:00", "the member the type does not know survived both votes")

        let decode = try await Fixtures.missive("decode", folder + "/poll3.jsonl", "--format", "json")
        #expect(decode.status == 0)
        #expect(try Self.object(decode.stdout)["known"] as? Bool == true)
        let render = try await Fixtures.missive("render", folder + "/poll3.jsonl", "--width", "60")
        #expect(render.status == 0, "\(render.stderr)")
        #expect(render.stdout.contains("Lunch today?"))
        #expect(render.stdout.contains("Sushi · 1 vote") && render.stdout.contains("Salad · 1 vote") && render.stdout.contains("Pizza · 0 votes"))
        #expect(render.stdout.components(separatedBy: "[ Vote ]").count == 4, "a vote button per option:\n\(render.stdout)")
        #expect(render.stdout.contains("2 votes"))
    }

    @Test func actionsListsComposerAndMessageActionsWithTheirSignatures() async throws {
        let text = try await Fixtures.missive("actions")
        #expect(text.status == 0)
        #expect(text.stdout.contains("Composer actions (2):") && text.stdout.contains("Message actions (2):"))
        #expect(text.stdout.contains("int32(int32 score, string comment, sink out)"))
        let json = try Self.object(try await Fixtures.missive("actions", "--format", "json").stdout)
        #expect(json["schemaVersion"] as? Int == 1)
        let composer = try #require(json["composerActions"] as? [[String: Any]])
        #expect(composer.map { $0["id"] as? String } == ["demo.poll.create", "demo.rating.create"])
        let parameters = try #require(composer[1]["parameters"] as? [[String: Any]])
        #expect(parameters.map { "\($0["type"]!) \($0["name"]!) \($0["cType"]!)" } == ["int32 score int32_t", "string comment const char *"])
        let message = try #require(json["messageActions"] as? [[String: Any]])
        #expect(message.map { "\($0["objectName"]!) \($0["id"]!) \($0["yields"]!)" } == ["demo:link open url", "demo:poll vote content"])
        #expect((json["rejected"] as? [Any])?.isEmpty == true)

        // Refused actions are listed with their reasons.
        let fixtures = try Fixtures.stage(["BrokenActionBadSignature"])
        let refused = try Self.object(try await Fixtures.missive("actions", "--plugin-path", fixtures, "--format", "json").stdout)
        let rejection = try #require((refused["rejected"] as? [[String: Any]])?.first)
        #expect(rejection["code"] as? String == "invalid-action")
        #expect((rejection["reason"] as? String)?.contains("'float'") == true)
        // Calling a refused action says why it is missing, and the plugin's type still decodes.
        let folder = try Fixtures.temporaryDirectory()
        let line = #"{"id":"s","conversationID":"c","senderID":"a","sentAt":1,"objectName":"fixture:bad-signature","content":{}}"#
        try (line + "\n").write(toFile: folder + "/scaled.jsonl", atomically: true, encoding: .utf8)
        let act = try await Fixtures.missive("act", folder + "/scaled.jsonl", "--id", "s", "--action", "scale", "--arg", "2", "--plugin-path", fixtures)
        #expect(act.status == 1)
        #expect(act.stderr.contains("warning: refused action:"), "\(act.stderr)")
        #expect(act.stderr.contains("the action was refused when its plugin loaded:") && act.stderr.contains("'float'"), "\(act.stderr)")
    }

    @Test func actGivesTheURLOfALink() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let line = #"{"id":"l1","conversationID":"c","senderID":"bob","sentAt":1,"objectName":"MS:Custom","content":{"businessID":"text_link","text":"Menu","link":"https://example.com/menu"}}"#
        try (line + "\n").write(toFile: folder + "/link.jsonl", atomically: true, encoding: .utf8)
        let text = try await Fixtures.missive("act", folder + "/link.jsonl", "--id", "l1", "--action", "open")
        #expect(text.status == 0 && text.stdout == "https://example.com/menu\n")
        let json = try Self.object(try await Fixtures.missive("act", folder + "/link.jsonl", "--id", "l1", "--action", "open", "--format", "json").stdout)
        #expect(json["result"] as? String == "url" && json["url"] as? String == "https://example.com/menu")
    }

    @Test func badInputGetsAClearErrorAndExitCode() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let poll = #"{"id":"p","conversationID":"c","senderID":"a","sentAt":1,"objectName":"demo:poll","content":{"question":"Q?","options":["a","b"]}}"#
        try ("not json\n" + poll + "\n").write(toFile: folder + "/poll.jsonl", atomically: true, encoding: .utf8)
        func run(_ arguments: String...) async throws -> Fixtures.Run { try await Fixtures.missive(arguments) }
        let cases: [(Fixtures.Run, Int32, String)] = await [
            (try run("act", folder + "/poll.jsonl", "--id", "p", "--action", "vote", "--arg", "5", "--arg", #""x""#), 1,
             "[invalid-argument] demo:poll: vote refused the arguments: option 5 is not one of the poll's options (0 to 1)"),
            (try run("act", folder + "/poll.jsonl", "--id", "p", "--action", "vote", "--arg", "0", "--arg", "bob"), 1,
             "vote: argument 2 (string voter): not one JSON value"),
            (try run("act", folder + "/poll.jsonl", "--id", "p", "--action", "vote", "--arg", "0"), 1, "so voter is missing"),
            (try run("act", folder + "/poll.jsonl", "--id", "p", "--action", "delete"), 1, "[no-such-action] demo:poll: the type has no action 'delete'; it has vote"),
            (try run("act", folder + "/poll.jsonl", "--id", "nope", "--action", "vote"), 1,
             "[no-such-message] no message has the id 'nope' in \(folder)/poll.jsonl (1 malformed lines skipped)"),
            // A malformed line is reported with its number, even when the message is found on another.
            await (try run("act", folder + "/poll.jsonl", "--id", "p", "--action", "vote", "--arg", "9", "--arg", #""x""#), 1, "poll.jsonl: line 1: [malformed-envelope]"),
            // A negative number is an argument, not an option.
            await (try run("act", folder + "/poll.jsonl", "--id", "p", "--action", "vote", "--arg", "-1", "--arg", #""x""#), 1,
             "option -1 is not one of the poll's options"),
            await (try run("act", folder + "/missing.jsonl", "--id", "p", "--action", "vote"), 2, "cannot read: no such file"),
            await (try run("compose", "demo.rating.create", "--arg", "2147483648", "--arg", #""""#, "--sender", "a", "--conversation", "c"), 1,
             "argument 1 (int32 score): 2147483648 is out of range"),
            await (try run("compose", "nothing.here", "--sender", "a", "--conversation", "c"), 1, "[no-such-action] no composer action has the id 'nothing.here'"),
            await (try run("compose", "demo.rating.create", "--arg", "3", "--arg", #""ok""#), 2, "--sender"),
            await (try run("compose", "demo.rating.create", "--arg", "3", "--arg", #""ok""#, "--sender", "", "--conversation", "c"), 2, "--sender must not be empty"),
            await (try run("compose", "demo.rating.create", "--arg", "-3", "--arg", #""ok""#, "--sender", "a", "--conversation", "c"), 1,
             "a score is a whole number from 1 to 5"),
        ]
        for (result, status, says) in cases {
            #expect(result.status == status, "\(says): \(result.stderr)")
            #expect(result.stderr.contains(says), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "nothing on standard output: \(result.stdout)")
        }
        // Bytes that are not UTF-8 reach the check as they are, and are refused there.
        let invalid = try await Fixtures.run(
            "/bin/sh", ["-c", "'\(Fixtures.buildDirectory)/missive' compose demo.rating.create --arg 3 --arg \"$(printf '\"\\377\"')\" --sender a --conversation c"],
            environment: ["MISSIVE_METADATA_CACHE": Fixtures.cliMetadataCache])
        #expect(invalid.status == 1)
        #expect(invalid.stderr.contains("argument 2 (string comment): not one JSON value: invalid UTF-8 in a string at byte 1"), "\(invalid.stderr)")
        // With --format json, the error is also a JSON object on standard output, naming the parameter.
        let json = try await run("compose", "demo.rating.create", "--arg", "3", "--arg", #""a\u0000b""#, "--sender", "a", "--conversation", "c", "--format", "json")
        let error = try #require(try Self.object(json.stdout)["error"] as? [String: Any])
        #expect(error["code"] as? String == "invalid-argument" && error["action"] as? String == "demo.rating.create")
        #expect(error["parameter"] as? String == "comment" && error["objectName"] as? String == "demo:rating")
    }

    @Test func composeGivesAnEnvelopeDecodeAndRenderAccept() async throws {
        let run = try await Fixtures.missive(
            "compose", "demo.rating.create", "--arg", "5", "--arg", #""Quick and \"friendly\"""#, "--sender", "dave", "--conversation", "c",
            "--message-id", "r1", "--sent-at", "1767225600000", "--parent-id", "p0", "--via-container")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == #"{"id":"r1","conversationID":"c","senderID":"dave","sentAt":1767225600000,"objectName":"MS:Custom","content":{"businessID":"evaluation","comment":"Quick and \"friendly\"","score":5},"parentID":"p0","persistence":3,"fallbackText":"[Rating] ★★★★★ Quick and \"friendly\"","pushContent":"[Rating] ★★★★★ Quick and \"friendly\""}"# + "\n")
        let decoded = try await Fixtures.missive(["decode", "-"], input: run.stdout)
        #expect(decoded.status == 0 && decoded.stdout.contains("known as demo:rating"))
        let html = try await Fixtures.missive(["render", "-", "--format", "html"], input: run.stdout)
        #expect(html.status == 0 && html.stdout.contains("★★★★★ 5/5"))
    }

    @Test func renderersDrawAMessagesActionsAsButtonsOnce() throws {
        let registry = try Fixtures.sampleRegistry()
        let link = registry.decode(Fixtures.envelope("demo:link", #"{"text":"Menu","link":"https://example.com/menu"}"#))
        var poll = Fixtures.envelope("demo:poll", #"{"question":"Q?","options":["a","b"]}"#)
        poll.id = "t2"
        let transcript = Transcript(messages: [link, registry.decode(poll)], actions: registry.actions(for:))
        guard case .message(let linkRow) = transcript.rows[1], case .message(let pollRow) = transcript.rows[2] else {
            Issue.record("unexpected rows")
            return
        }
        #expect(linkRow.actions.map(\.id) == ["open"])
        #expect(pollRow.actions.isEmpty, "the poll's view already has its vote buttons")
        let drawn = TerminalRenderer(width: 60).render(transcript)
        #expect(drawn.contains("[ Open ]"))
        #expect(drawn.components(separatedBy: "[ Vote ]").count == 3)
        let html = HTMLRenderer().render(transcript)
        #expect(html.contains(#"<div class="actions" role="group"><button type="button" class="el-button" disabled data-action="open" dir="auto">Open</button></div>"#))
        // Without the registry's actions, no bar.
        #expect(!TerminalRenderer(width: 60).render(Transcript(messages: [link])).contains("[ Open ]"))
        // The bar is a component of its own.
        var components = TerminalComponents.standard
        components.actionBar = { actions, _, _ in TerminalBlock([TerminalLine("» " + actions.map(\.title).joined(separator: " | "))]) }
        #expect(TerminalRenderer(width: 60, components: components).render(transcript).contains("» Open"))
    }
}
