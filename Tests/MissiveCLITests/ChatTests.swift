import Foundation
import Missive
import MissiveStore
import MissiveTestSupport
import Testing

/// `missive chat` as members use it: real server and client processes on loopback, each host with its own plugins.
@Suite(.serialized) struct ChatTests {
    /// The envelopes of a conversation in a client's local store, by id.
    static func localEnvelopes(_ host: ChatHost, server: ChatServer, member: String) async throws -> [Envelope] {
        let path = "\(host.dataHome)/missive/chat/127.0.0.1-\(server.port)-\(member).sqlite"
        let store = try SQLiteMessageStore(path: path)
        return try await store.messages(inConversation: "team").map { try $0.envelope() }
    }

    /// Item 2 of issue 26, every step: a server with the demo types only (DemoMessages, DemoMedia), client A with
    /// every sample plugin, client B with none, which installs them while it runs.
    @Test(SanitizerRun.timeLimit(minutes: 10)) func threeHostsWithThreePluginSetsSeeWhatTheirPluginsDraw() async throws {
        let serverHost = try ChatHost(plugins: ["DemoMessages", "DemoMedia"])
        let hostA = try ChatHost(plugins: Fixtures.samplePlugins)
        let hostB = try ChatHost(plugins: [])
        let (server, tokens) = try await ChatServer.start(serverHost, members: ["alice", "bob"])
        defer { server.process.stop() }
        let alice = try #require(tokens["alice"])
        let bob = try #require(tokens["bob"])
        #expect(try await server.api("POST", "conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#).status == 201)
        #expect(try await server.takesTypeReports(token: alice))

        let b = try ChatProcess(hostB, ["chat", "--server", server.url, "--token", bob])
        defer { b.stop() }
        #expect(try await b.waitFor("1. team  0 unread"), "\(b.text())")
        let a = try ChatProcess(hostA, ["chat", "--server", server.url, "--token", alice])
        defer { a.stop() }
        #expect(try await a.waitFor("1. team  0 unread"), "\(a.text())")
        a.send("/open team")
        #expect(try await a.waitFor("── team ──"), "\(a.text())")

        // A sends a poll, a link card, a rating, and a notice whose flag (persisted) does not count as unread.
        var mark = a.mark
        a.send(#"/compose demo.poll.create "Lunch?" "Pizza\nSushi""#)
        #expect(try await a.waitFor("[1]", after: mark), "\(a.text(after: mark))")
        #expect(a.text(after: mark).contains(#"bob has no plugin for demo:poll: they will see the fallback text "[Poll] Lunch?""#), "\(a.text(after: mark))")
        a.send(#"/send demo:link {"text":"Menu of the day","link":"https://example.com/menu"}"#)
        #expect(try await a.waitFor("[2]", after: mark), "\(a.text(after: mark))")
        a.send(#"/compose demo.rating.create 4 "Great pizza""#)
        #expect(try await a.waitFor("[3]", after: mark), "\(a.text(after: mark))")
        a.send(#"/send matrix:notice {"msgtype":"m.notice","body":"Build 4711 passed"}"#)
        #expect(try await a.waitFor("[4]", after: mark), "\(a.text(after: mark))")

        // B: unsupported cards with A's fallback texts; three unread, the notice not counted.
        #expect(try await b.waitFor("team: 3 unread (alice: [Notice] Build 4711 passed)"), "\(b.text())")
        mark = b.mark
        b.send("/list")
        #expect(try await b.waitFor("1. team  3 unread", after: mark), "\(b.text(after: mark))")
        mark = b.mark
        b.send("/open team")
        #expect(try await b.waitFor("team: 0 unread", after: mark), "\(b.text(after: mark))")
        var drawn = b.text(after: mark)
        for text in ["[Poll] Lunch?", "type demo:poll is not installed", "Menu of the day", "type demo:link is not installed", "type demo:rating is not installed",
                     "Build 4711 passed"] {
            #expect(drawn.contains(text), "B's card lacks \(text): \(drawn)")
        }
        #expect(!drawn.contains("Pizza · 0 votes"))
        let bobUnread = try await server.api("GET", "conversations/team", token: bob).json["unreadCount"] as? Int
        #expect(bobUnread == 0)

        // B forwards the rating it cannot draw: its content reaches A byte for byte.
        mark = a.mark
        b.send("/forward 3")
        #expect(try await a.waitFor("[5]", after: mark), "\(a.text(after: mark))")

        // B installs the sample plugins into its own folder; its client notices, re-decodes and draws them. (A
        // `/reload` after the install, so that the drawing checked is the one of the whole set, not one made while
        // the install was copying the files.)
        mark = b.mark
        let install = try await hostB.run(
            "install", "--strictness", "1", Fixtures.library("DemoMessages"), Fixtures.library("DemoMedia"), Fixtures.library("CRating"),
            Fixtures.library("MatrixBridge"))
        #expect(install.status == 0, "\(install.stderr)")
        #expect(try await b.waitFor("the plugins changed", after: mark), "\(b.text(after: mark))")
        mark = b.mark
        b.send("/reload")
        func lastDrawing() -> [String] {
            let lines = b.lines
            guard let start = lines.lastIndex(where: { $0.contains("── team ──") }), start >= mark else { return [] }
            return Array(lines[start...])
        }
        #expect(try await b.waitUntil { _ in lastDrawing().contains { $0.contains("[5]") } }, "\(b.text(after: mark))")
        drawn = lastDrawing().joined(separator: "\n")
        for text in ["Pizza · 0 votes", "Sushi · 0 votes", "View details <https://example.com/menu>", "★★★★☆ 4/5"] {
            #expect(drawn.contains(text), "B does not draw \(text) after the install: \(drawn)")
        }
        #expect(!drawn.contains("is not installed"), "\(drawn)")

        // B reported its new types: A's next poll warns about nobody.
        let report = try await server.api("GET", "conversations/team/types/demo:poll", token: alice)
        let members = report.json["members"] as? [[String: Any]] ?? []
        #expect(members.first?["draws"] as? Bool == true, "\(report.json)")
        mark = a.mark
        a.send(#"/compose demo.poll.create "Dinner?" "Soup\nSalad""#)
        #expect(try await a.waitFor("[6]", after: mark), "\(a.text(after: mark))")
        #expect(!a.text(after: mark).contains("has no plugin"), "\(a.text(after: mark))")

        // B votes; the server's copy has the tally, and A draws it anew.
        mark = a.mark
        let markB = b.mark
        b.send("/act 1 vote 1")
        #expect(try await b.waitFor("[1] changed:", after: markB), "\(b.text(after: markB))")
        #expect(try await a.waitFor("[1] changed:", after: mark), "\(a.text(after: mark))")
        #expect(try await a.waitFor("Sushi · 1 vote", after: mark), "\(a.text(after: mark))")
        let poll = try #require(try await server.messages("team", token: alice).first)
        let content = envelopeOf(poll)["content"] as? [String: Any]
        #expect(content?["votes"] as? [Int] == [0, 1], "\(poll)")
        #expect((content?["voters"] as? [String: Int])?["bob"] == 1, "\(poll)")

        // B forwards the link card and quotes the poll: both reach A, the content byte for byte.
        mark = a.mark
        b.send("/forward 2")
        b.send("/quote 1 Sushi for me")
        #expect(try await a.waitUntil { lines in lines.dropFirst(mark).contains { $0.contains("Sushi for me") } }, "\(a.text(after: mark))")
        let envelopes = try await Self.localEnvelopes(hostA, server: server, member: "alice")
        let original = envelopes.filter { $0.senderID == "alice" }
        let forwarded = envelopes.filter { $0.senderID == "bob" && $0.parentID == nil }
        for type in ["demo:rating", "demo:link"] {
            let sent = try #require(original.first { $0.objectName == type })
            let copy = try #require(forwarded.first { $0.objectName == type }, "no forwarded \(type) in A's store")
            #expect(copy.content == sent.content, "\(type): \(String(decoding: copy.content, as: UTF8.self))")
            #expect(copy.id != sent.id)
        }
        let quote = try #require(envelopes.first { $0.senderID == "bob" && $0.parentID != nil })
        #expect(quote.parentID == original.first { $0.objectName == "demo:poll" }?.id)
        #expect(String(decoding: quote.content, as: UTF8.self).contains("Sushi for me"))
    }

    /// The decision of docs/SERVER.md: an action that changes a message of a type the server has no plugin for is
    /// refused by the server, and the client shows the server's reason as it came.
    @Test(SanitizerRun.timeLimit(minutes: 10)) func anActionOnATypeTheServerLacksShowsTheServersRefusal() async throws {
        let (server, tokens) = try await ChatServer.start(try ChatHost(plugins: []), members: ["alice"])
        defer { server.process.stop() }
        let alice = try #require(tokens["alice"])
        #expect(try await server.api("POST", "conversations", token: alice, body: #"{"id":"team"}"#).status == 201)
        let a = try ChatProcess(try ChatHost(plugins: ["DemoMessages"]), ["chat", "--server", server.url, "--token", alice])
        defer { a.stop() }
        #expect(try await a.waitFor("1. team  0 unread"), "\(a.text())")
        a.send("/open team")
        a.send(#"/compose demo.poll.create "Lunch?" "Pizza\nSushi""#)
        #expect(try await a.waitFor("[1]"), "\(a.text())")
        let mark = a.mark
        a.send("/act 1 vote 0")
        #expect(try await a.waitFor("the server refused vote: the server has no plugin for demo:poll", after: mark), "\(a.text(after: mark))")
        // The client goes on: a bad command, then a message that is sent.
        a.send("/act 9 vote 0")
        #expect(try await a.waitFor("no message 9 in team", after: mark), "\(a.text(after: mark))")
        a.send("still here")
        #expect(try await a.waitFor("[2]", after: mark), "\(a.text(after: mark))")
        let poll = try #require(try await server.messages("team", token: alice).first)
        #expect((envelopeOf(poll)["content"] as? [String: Any])?["votes"] == nil, "nothing changed: \(poll)")
    }

    /// The client reconnects when the server goes away and comes back, and resumes with nothing lost.
    @Test(SanitizerRun.timeLimit(minutes: 10)) func theClientReconnectsAndResumesAfterTheServerRestarts() async throws {
        let host = try ChatHost(plugins: [], useBuiltExecutable: true)
        let (server, tokens) = try await ChatServer.start(host, members: ["alice", "bob"])
        let alice = try #require(tokens["alice"])
        let bob = try #require(tokens["bob"])
        #expect(try await server.api("POST", "conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#).status == 201)
        let b = try ChatProcess(host, ["chat", "--server", server.url, "--token", bob])
        defer { b.stop() }
        #expect(try await b.waitFor("1. team  0 unread"), "\(b.text())")
        b.send("/open team")
        #expect(try await b.waitFor("── team ──"), "\(b.text())")
        server.process.stop()
        #expect(try await b.waitFor("lost the server"), "\(b.text())")
        // What bob types while the server is away is kept, and sent once it is back.
        var mark = b.mark
        b.send("typed while the server was away")
        #expect(try await b.waitFor("not sent yet:", after: mark), "\(b.text(after: mark))")
        #expect(b.text(after: mark).contains("(1 message waiting)"), "\(b.text(after: mark))")
        // The same data and port again.
        let again = try ChatProcess(host, ["serve", "--port", String(server.port), "--data", server.data])
        defer { again.stop() }
        #expect(try await again.waitFor("listening on"), "\(again.text())")
        #expect(try await b.waitFor("again", timeout: .seconds(30)), "\(b.text())")
        #expect(try await b.waitFor("typed while the server was away", after: mark), "\(b.text(after: mark))")
        let kept = try await server.messages("team", token: alice)
        #expect(kept.count == 1 && kept.contains { "\($0)".contains("typed while the server was away") }, "\(kept)")
        mark = b.mark
        _ = try await server.api("POST", "conversations/team/messages", token: alice, body: #"{"objectName":"MS:Text","content":{"content":"after the restart"}}"#)
        // Team is open: the message is drawn as it comes.
        #expect(try await b.waitFor("after the restart", after: mark), "\(b.text(after: mark))")
    }

    /// A client that stops and starts again resumes from the position it kept beside its store: what was sent
    /// meanwhile arrives, and nothing is stored twice.
    @Test(SanitizerRun.timeLimit(minutes: 10)) func aClientStartedAgainResumesWithNoGapAndNothingTwice() async throws {
        let host = try ChatHost(plugins: [], useBuiltExecutable: true)
        let (server, tokens) = try await ChatServer.start(host, members: ["alice", "bob"])
        defer { server.process.stop() }
        let alice = try #require(tokens["alice"])
        let bob = try #require(tokens["bob"])
        #expect(try await server.api("POST", "conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#).status == 201)
        func send(_ text: String) async throws {
            let sent = try await server.api("POST", "conversations/team/messages", token: alice, body: #"{"objectName":"MS:Text","content":{"content":"\#(text)"}}"#)
            #expect(sent.status == 201, "\(sent.json)")
        }
        try await send("one")
        let first = try ChatProcess(host, ["chat", "--server", server.url, "--token", bob])
        #expect(try await first.waitFor("1. team  1 unread"), "\(first.text())")
        try await send("two")
        #expect(try await first.waitFor("team: 2 unread (alice: two)"), "\(first.text())")
        first.send("/quit")
        try await Fixtures.offThePool { first.process.waitUntilExit() }
        #expect(first.process.terminationStatus == 0)
        let store = "\(host.dataHome)/missive/chat/127.0.0.1-\(server.port)-bob.sqlite"
        #expect(FileManager.default.fileExists(atPath: store + ".position"))

        try await send("three")
        try await send("four")
        let again = try ChatProcess(host, ["chat", "--server", server.url, "--token", bob])
        defer { again.stop() }
        // The list comes once connected; the events kept meanwhile follow it (or are in it).
        #expect(try await again.waitUntil { $0.contains { $0.contains("team  4 unread") || $0.contains("team: 4 unread (alice: four)") } }, "\(again.text())")
        let texts = try await SQLiteMessageStore(path: store).messages(inConversation: "team").map { String(decoding: try $0.envelope().content, as: UTF8.self) }
        #expect(texts.count == 4, "\(texts)")
        for (text, expected) in zip(texts, ["one", "two", "three", "four"]) { #expect(text.contains(expected), "\(texts)") }
    }
}
