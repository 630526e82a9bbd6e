import Foundation
import Missive
import MissiveChatUI
import MissiveClient
import MissiveServerTestSupport
import MissiveStoreTestSupport
import MissiveTestSupport
import Synchronization
import Testing

/// `missive chat`'s session driven in this process, line by line, against a server on loopback, with its output
/// recorded: what a member types and what it is shown.
@Suite(.timeLimit(.minutes(5)))
struct ChatSessionTests {
    /// Everything a session wrote.
    final class Recorder: Sendable {
        private let text = Mutex("")

        var output: ChatOutput { ChatOutput(terminal: false) { bytes in self.text.withLock { $0 += String(decoding: bytes, as: UTF8.self) } } }
        var written: String { text.withLock { $0 } }

        /// Waits until the output holds `expected` (60 s at most), and says whether it does.
        func waitFor(_ expected: String, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(60)
            while !written.contains(expected) && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            let found = written.contains(expected)
            #expect(found, "the session never wrote \"\(expected)\"; it wrote:\n\(written)", sourceLocation: sourceLocation)
            return found
        }
    }

    /// A running session of alice's, its input, and what it wrote.
    struct Session {
        let running: RunningServer
        let recorder: Recorder
        let input: AsyncStream<String>.Continuation
        let task: Task<Void, Never>
        let bob: ServerClient

        static func start() async throws -> Session {
            let running = try await RunningServer.start(.sqlite, transport: .live)
            let server = try #require(URL(string: "http://127.0.0.1:\(running.port)"))
            let registry = try Fixtures.sampleRegistry()
            let sync = try await ChatSync(
                client: ServerClient(server: server, token: try running.member("alice")), storePath: try Fixtures.temporaryDirectory() + "/alice.sqlite",
                registry: registry)
            let bob = ServerClient(server: server, token: try running.member("bob"))
            let recorder = Recorder()
            let session = ChatSession(
                sync: sync, registry: registry, output: recorder.output, width: 60, colors: false, reload: { registry }, pluginFingerprint: { "" })
            let (lines, input) = AsyncStream.makeStream(of: String.self)
            let task = Task { await session.run(lines: lines) }
            return Session(running: running, recorder: recorder, input: input, task: task, bob: bob)
        }

        func type(_ line: String) { input.yield(line) }
    }

    @Test func aMemberStartsAConversationTalksAndVotesOnAPollThatArrivesLive() async throws {
        let session = try await Session.start()
        let recorder = session.recorder
        guard await recorder.waitFor("no conversations yet") else { return }
        session.type("/new team bob")
        guard await recorder.waitFor("started team: /open team") else { return }
        session.type("/open team")
        guard await recorder.waitFor("── team ──") else { return }
        session.type("hello there")
        guard await recorder.waitFor("[1]\n"), await recorder.waitFor("hello there") else { return }

        // Bob's poll reaches the open conversation without a command, numbered 2.
        let poll = Array(#"{"objectName":"demo:poll","content":{"question":"Lunch?","options":["Pizza","Sushi"]}}"#.utf8)
        guard case .stored(let stored) = try await session.bob.send(envelope: poll, to: "team") else {
            Issue.record("the poll is stored")
            return
        }
        guard await recorder.waitFor("[2]\n"), await recorder.waitFor("Lunch?") else { return }

        // Alice votes as herself: the server performs it, and the edit comes back drawn as message 2 changed.
        session.type("/act 2 vote 1")
        guard await recorder.waitFor("[2] changed:") else { return }
        let copy = try await session.bob.messages(in: "team").first { $0.id == stored.id }
        let envelope = String(decoding: copy?.envelope ?? [], as: UTF8.self)
        #expect(envelope.contains(#""votes":[0,1]"#), "\(envelope)")

        // Mistakes are one line each, and the session goes on.
        session.type("/act 9 vote 1")
        _ = await recorder.waitFor("no message 9 in team: messages are numbered 1 to 2")
        session.type("/bogus")
        _ = await recorder.waitFor("unknown command /bogus: /help lists the commands")
        session.type("/open elsewhere")
        _ = await recorder.waitFor("no conversation elsewhere of yours: /list shows them")
        session.type("/quit")
        await session.task.value
        session.input.finish()
        await session.running.stop()
    }

    /// A message typed while the server is away is kept, not lost, and leaving says how many were not sent.
    @Test func aMessageTypedWhileTheServerIsAwayIsKeptAndCounted() async throws {
        let session = try await Session.start()
        let recorder = session.recorder
        guard await recorder.waitFor("no conversations yet") else { return }
        session.type("/new team bob")
        session.type("/open team")
        guard await recorder.waitFor("── team ──") else { return }
        await session.running.stop()
        session.type("are you there?")
        guard await recorder.waitFor("not sent yet: ") else { return }
        _ = await recorder.waitFor("it is sent when the server is back (1 message waiting)")
        session.type("/quit")
        await session.task.value
        let written = recorder.written
        #expect(written.contains("1 message not sent: the server could not be reached"), "\(written)")
        session.input.finish()
    }

    @Test func aLineSplitsIntoWordsAndQuotedOnesStayWhole() {
        let words = ChatWords.split(#"/act  3 vote "two \"words\"" 1 true x"#)
        #expect(words.map(\.text) == ["/act", "3", "vote", #""two \"words\"""#, "1", "true", "x"])
        #expect(words.map(\.isQuoted) == [false, false, false, true, false, false, false])
        // A word that is JSON is that value; any other word is a string.
        #expect(words[3].argument == ActionArgument(json: #""two \"words\"""#))
        #expect(words[4].argument == ActionArgument(json: "1"))
        #expect(words[6].argument == .string("x"))
    }
}
