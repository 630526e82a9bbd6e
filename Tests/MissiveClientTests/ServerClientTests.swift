import Foundation
import Missive
import MissiveClient
import MissiveServerTestSupport
import MissiveStoreTestSupport
import MissiveTestSupport
import Synchronization
import Testing

/// The client of `missive serve`'s API and event stream, driven against a server running in this process on a port
/// of loopback: what a client host (`missive chat`, an app) reads is what the server wrote.
@Suite struct ServerClientTests {
    /// A live server with alice and bob, and alice's client.
    struct Pair {
        let running: RunningServer
        let alice: ServerClient
        let bob: ServerClient

        static func start() async throws -> Pair {
            let running = try await RunningServer.start(.sqlite, transport: .live)
            let server = try #require(URL(string: "http://127.0.0.1:\(running.port)/ignored/path?x=1"))
            return Pair(
                running: running, alice: ServerClient(server: server, token: try running.member("alice")),
                bob: ServerClient(server: server, token: try running.member("bob")))
        }
    }

    @Test func conversationsMessagesAndReadMarksReadBackAsTheServerKeepsThem() async throws {
        let pair = try await Pair.start()
        #expect(try await pair.alice.me() == "alice")
        try await pair.alice.createConversation("team", members: ["bob"])
        let envelope = Array(#"{"objectName":"MS:Text","content":{"content":"hello"},"x-extra":[1,2.50e1]}"#.utf8)
        guard case .stored(let sent) = try await pair.alice.send(envelope: envelope, to: "team") else {
            Issue.record("a text message is stored")
            return
        }
        #expect(sent.senderID == "alice" && sent.conversationID == "team" && sent.objectName == "MS:Text")
        // The envelope comes back byte for byte, the member the server does not know included.
        #expect(String(decoding: sent.envelope, as: UTF8.self).contains(#""x-extra":[1,2.50e1]"#))

        let list = try await pair.bob.conversations()
        #expect(list == [RemoteConversation(id: "team", unreadCount: 1, messageCount: 1, lastMessage: sent)])
        let detail = try await pair.bob.conversation("team")
        #expect(detail.members == ["alice", "bob"] && detail.readUpTo == nil && detail.unreadCount == 1)
        let history = try await pair.bob.messages(in: "team")
        #expect(history == [sent])
        #expect(try await pair.bob.markRead(conversation: "team", upTo: sent.id) == 0)
        #expect(try await pair.bob.conversation("team").readUpTo == sent.id)

        // A status message is delivered, not stored.
        let status = Array(#"{"objectName":"demo:typing","content":{"userID":"alice","isTyping":true},"persistence":16}"#.utf8)
        #expect(try await pair.alice.send(envelope: status, to: "team") == .delivered)
        await pair.running.stop()
    }

    @Test func theServersRefusalsArriveWithItsCodeAndWords() async throws {
        let pair = try await Pair.start()
        let outsider = await #expect(throws: ServerClientError.self) { try await pair.alice.conversation("nowhere") }
        #expect(outsider?.status == 404 && outsider?.code == "not-found" && outsider?.message.contains("nowhere") == true)
        let badToken = ServerClient(server: pair.alice.server, token: "msv_nope")
        let refused = await #expect(throws: ServerClientError.self) { try await badToken.me() }
        #expect(refused?.status == 401 && refused?.code == "unauthorized")
        // A server that is not there is `unreachable`, with no status.
        await pair.running.stop()
        let gone = await #expect(throws: ServerClientError.self) { try await pair.alice.me() }
        #expect(gone?.status == nil && gone?.code == "unreachable")
    }

    @Test func actionsAndTypeReportsGoThroughTheServersPlugins() async throws {
        let pair = try await Pair.start()
        try await pair.alice.createConversation("team", members: ["bob"])
        let composer = try await pair.alice.composerActions()
        #expect(composer.contains { $0.id == "demo.poll.create" && $0.yields == "content" })
        let poll = Array(#"{"objectName":"demo:poll","content":{"question":"Lunch?","options":["Pizza","Sushi"]}}"#.utf8)
        guard case .stored(let stored) = try await pair.alice.send(envelope: poll, to: "team") else {
            Issue.record("a poll is stored")
            return
        }
        let actions = try await pair.bob.actions(conversation: "team", message: stored.id)
        let vote = try #require(actions.first { $0.id == "vote" }, "\(actions)")
        #expect(vote.parameters == [.init(name: "option", type: "int32"), .init(name: "voter", type: "string")], "\(vote.parameters)")
        guard case .edited(let edited) = try await pair.bob.perform("vote", conversation: "team", message: stored.id, arguments: [1, "bob"]) else {
            Issue.record("a vote edits the poll")
            return
        }
        #expect(edited.id == stored.id && String(decoding: edited.envelope, as: UTF8.self).contains(#""votes":[0,1]"#), "\(String(decoding: edited.envelope, as: UTF8.self))")
        // A refused action comes back as the server's error.
        let unknown = await #expect(throws: ServerClientError.self) {
            try await pair.bob.perform("no-such-action", conversation: "team", message: stored.id, arguments: [])
        }
        #expect(unknown?.status != nil && unknown?.code.isEmpty == false)

        // Bob reports what his client draws; alice asks who can draw a poll.
        let report = try await pair.bob.reportTypes([ReportedType(objectName: "demo:poll", version: "1.2.0")])
        #expect(report.member == "bob" && report.types == [ReportedType(objectName: "demo:poll", version: "1.2.0")])
        let drawing = try await pair.alice.drawing("demo:poll", in: "team")
        #expect(drawing == [MemberDrawing(member: "bob", reported: true, draws: true, version: "1.2.0", reportedAt: report.reportedAt)])
        await pair.running.stop()
    }

    // The limit turns a frame that never comes (the streams below would wait for ever) into a failure.
    @Test(.timeLimit(.minutes(5)))
    func theEventStreamDeliversAMessageSentAfterItOpened() async throws {
        let pair = try await Pair.start()
        try await pair.alice.createConversation("team", members: ["bob"])
        let received = Mutex<[ServerEvent]>([])
        let (hello, helloSink) = AsyncStream.makeStream(of: Void.self)
        let (stored, storedSink) = AsyncStream.makeStream(of: RemoteMessage.self)
        let stream = ServerEventStream(client: pair.bob)
        let task = Task {
            await stream.run(position: { nil }) { update in
                guard case .event(let event) = update else { return }
                received.withLock { $0.append(event) }
                if case .hello = event { helloSink.yield() }
                if case .stored(_, let message) = event { storedSink.yield(message) }
            }
        }
        _ = await hello.first { _ in true }
        _ = try await pair.alice.send(envelope: Array(#"{"objectName":"MS:Text","content":{"content":"live"}}"#.utf8), to: "team")
        let message = await stored.first { _ in true }
        #expect(message?.senderID == "alice" && String(decoding: message?.envelope ?? [], as: UTF8.self).contains("live"))
        task.cancel()
        await task.value
        let events = received.withLock { $0 }
        guard case .hello(let member, _, let resumed)? = events.first else {
            Issue.record("the first event is hello: \(events)")
            return
        }
        #expect(member == "bob" && !resumed)
        await pair.running.stop()
    }
}
