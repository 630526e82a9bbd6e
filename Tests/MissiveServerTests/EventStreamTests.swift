import Foundation
import Missive
import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// The event stream: what happens in a member's conversations reaches its connections, live, in order, once;
/// a client that comes back resumes without a gap; nobody hears of conversations it is not in.
@Suite struct EventStreamTests {
    /// alice, bob and carol; alice and bob share "team", carol has "solo".
    struct Team {
        let running: RunningServer
        let alice: String
        let bob: String
        let carol: String

        static func start(_ backend: StoreBackend, limits: ServerLimits = ServerLimits()) async throws -> Team {
            let running = try await RunningServer.start(backend, limits: limits, transport: .live)
            let team = Team(running: running, alice: try running.member("alice"), bob: try running.member("bob"), carol: try running.member("carol"))
            #expect(try await running.request("POST", "/api/v1/conversations", token: team.alice, body: #"{"id":"team","members":["bob"]}"#).status == 201)
            #expect(try await running.request("POST", "/api/v1/conversations", token: team.carol, body: #"{"id":"solo"}"#).status == 201)
            return team
        }

        func connect(_ token: String, after: Int64? = nil) async throws -> EventClient {
            let client = EventClient(port: running.port, token: token, after: after)
            try await client.expectNext("hello")
            return client
        }

        @discardableResult
        func send(_ token: String, _ id: String, in conversation: String = "team", flag: Int = 3, text: String = "hi") async throws -> HTTPAnswer {
            let answer = try await running.request(
                "POST", "/api/v1/conversations/\(conversation)/messages", token: token,
                body: #"{"id":"\#(id)","objectName":"x:note","persistence":\#(flag),"content":{"text":"\#(text)"},"extra":[1, 2 ]}"#)
            #expect(answer.status < 300, "\(answer.text)")
            return answer
        }

        /// A text message (`MS:Text`, whose words the server indexes).
        func sendText(_ token: String, _ id: String, in conversation: String = "team", text: String) async throws {
            let answer = try await running.request(
                "POST", "/api/v1/conversations/\(conversation)/messages", token: token,
                body: #"{"id":"\#(id)","objectName":"MS:Text","content":{"content":"\#(text)"}}"#)
            #expect(answer.status < 300, "\(answer.text)")
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aMessageReachesEveryMemberLiveWithItsEnvelopeByteForByteAndNobodyElse(backend: StoreBackend) async throws {
        let team = try await Team.start(backend)
        let alice = try await team.connect(team.alice)
        let bob = try await team.connect(team.bob)
        let carol = try await team.connect(team.carol)
        try await team.send(team.alice, "m1")
        let stored = try #require(try await team.running.server.store.message(id: "m1"))
        for client in [alice, bob] {
            let event = try await client.expectNext("message")
            #expect(event["conversation"] as? String == "team")
            let message = try #require(event["message"] as? [String: Any])
            #expect(message["id"] as? String == "m1" && message["senderID"] as? String == "alice")
        }
        // The envelope inside the event is the stored one, byte for byte (members the server does not know included).
        let raw = try await team.running.request("GET", "/api/v1/conversations/team/messages", token: team.bob)
        #expect(raw.text.contains(String(decoding: stored.envelopeBytes, as: UTF8.self)))
        // carol hears nothing of "team"; her own conversation still reaches her.
        try await team.send(team.carol, "c1", in: "solo")
        let own = try await carol.expectNext("message")
        #expect((own["message"] as? [String: Any])?["id"] as? String == "c1")
        #expect(try await alice.nextOtherThanMembership(timeout: .milliseconds(300)) == nil, "alice is not in solo")
        for client in [alice, bob, carol] { await client.close() }
        await team.running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aClientThatComesBackResumesWithNoGapAndNoDuplicateWhileMessagesFlow(backend: StoreBackend) async throws {
        let team = try await Team.start(backend)
        var bob = try await team.connect(team.bob)
        for index in 1...3 { try await team.send(team.alice, "a\(index)") }
        for _ in 1...3 { try await bob.expectNext("message") }
        let position = bob.position
        await bob.close()
        _ = await bob.result()
        // Sent while bob is away, and while he comes back.
        for index in 4...8 { try await team.send(team.alice, "a\(index)") }
        let sender = Task {
            for index in 9...28 { try await team.send(team.alice, "a\(index)") }
        }
        bob = EventClient(port: team.running.port, token: team.bob, after: position)
        let hello = try await bob.expectNext("hello")
        #expect(hello["resumed"] as? Bool == true && (hello["position"] as? NSNumber)?.int64Value == position)
        try await sender.value
        var ids: [String] = []
        var positions: [Int64] = []
        while ids.count < 25, let event = try await bob.next() {
            guard event["type"] as? String == "message", let message = event["message"] as? [String: Any] else { continue }
            ids.append(try #require(message["id"] as? String))
            positions.append(try #require((event["position"] as? NSNumber)?.int64Value))
        }
        #expect(ids == (4...28).map { "a\($0)" })
        #expect(positions == positions.sorted() && Set(positions).count == positions.count)
        #expect(try await bob.nextOtherThanMembership(timeout: .milliseconds(300)) == nil, "nothing twice")
        await bob.close()
        await team.running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aPositionAheadOfTheFeedIsNotResumedAndABadOneOrNoTokenIsRefused(backend: StoreBackend) async throws {
        let team = try await Team.start(backend)
        try await team.send(team.alice, "m1")
        let ahead = EventClient(port: team.running.port, token: team.bob, after: 1_000_000)
        let hello = try await ahead.expectNext("hello")
        #expect(hello["resumed"] as? Bool == false)
        // It still hears what comes next (m1 too, when the server had not handed it out yet when it connected).
        try await team.send(team.alice, "m2")
        var heard = try await ahead.expectNext("message", skipping: ["joined", "message"])
        if (heard["message"] as? [String: Any])?["id"] as? String == "m1" { heard = try await ahead.expectNext("message") }
        #expect((heard["message"] as? [String: Any])?["id"] as? String == "m2")
        await ahead.close()
        for client in [
            EventClient(port: team.running.port, token: nil), EventClient(port: team.running.port, token: "msv_nope"),
            EventClient(port: team.running.port, token: team.bob, query: "after=-3"), EventClient(port: team.running.port, token: team.bob, query: "after=x"),
        ] {
            guard case .failure = await client.result() else {
                Issue.record("an upgrade without a valid token or with a bad position was accepted")
                continue
            }
        }
        // The server goes on.
        #expect(try await team.running.request("GET", "/api/v1/me", token: team.bob).status == 200)
        await team.running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func readMarksReachTheMembersOtherConnectionsOnly(backend: StoreBackend) async throws {
        let team = try await Team.start(backend)
        let phone = try await team.connect(team.bob)
        let laptop = try await team.connect(team.bob)
        let alice = try await team.connect(team.alice)
        try await team.send(team.alice, "m1")
        try await team.send(team.alice, "m2")
        for client in [phone, laptop, alice] {
            try await client.expectNext("message")
            try await client.expectNext("message")
        }
        let marked = try await team.running.request("POST", "/api/v1/conversations/team/read", token: team.bob, body: #"{"upTo":"m1"}"#)
        #expect(try marked.status == 200 && marked.json["unreadCount"] as? Int == 1, "\(marked.text)")
        for client in [phone, laptop] {
            let read = try await client.expectNext("read")
            #expect(read["upTo"] as? String == "m1" && read["unreadCount"] as? Int == 1 && read["member"] as? String == "bob")
        }
        #expect(try await alice.nextOtherThanMembership(timeout: .milliseconds(300)) == nil, "bob's read mark is his own")
        // Over the stream too, answered by ref.
        try await phone.send(#"{"type":"read","conversation":"team","upTo":"m2","ref":7}"#)
        var answer: [String: Any]?
        for _ in 0..<2 {
            let frame = try #require(try await phone.next())
            if frame["type"] as? String == "marked" { answer = frame }
        }
        #expect(answer?["ref"] as? Int == 7 && (answer?["result"] as? [String: Any])?["unreadCount"] as? Int == 0, "\(String(describing: answer))")
        let other = try await laptop.expectNext("read")
        #expect(other["unreadCount"] as? Int == 0)
        let unknown = try await team.running.request("POST", "/api/v1/conversations/team/read", token: team.bob, body: #"{"upTo":"nope"}"#)
        #expect(unknown.status == 400 && unknown.errorCode == "unknown-message")
        let outsider = try await team.running.request("POST", "/api/v1/conversations/team/read", token: team.carol, body: #"{"upTo":"m1"}"#)
        #expect(outsider.status == 404)
        for client in [phone, laptop, alice] { await client.close() }
        await team.running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aMemberSendsOverTheStreamAndBadFramesAreAnsweredWithoutClosingIt(backend: StoreBackend) async throws {
        let team = try await Team.start(backend)
        let bob = try await team.connect(team.bob)
        let alice = try await team.connect(team.alice)
        try await bob.send(#"{"type":"send","conversation":"team","ref":"r1","envelope":{"id":"w1","objectName":"x:note","senderID":"mallory","content":{"text":"über"},"z":[ 1 ]}}"#)
        let sent = try await bob.expectNext("sent", skipping: ["joined", "message"])
        #expect(sent["ref"] as? String == "r1", "\(sent)")
        let event = try await alice.expectNext("message")
        let message = try #require(event["message"] as? [String: Any])
        #expect(message["senderID"] as? String == "bob", "the sender is the member whose token it is")
        let stored = try #require(try await team.running.server.store.message(id: "w1"))
        let envelope = try Envelope(parsing: stored.envelopeBytes)
        #expect(String(decoding: envelope.content, as: UTF8.self) == #"{"text":"über"}"# && envelope.senderID == "bob")
        #expect(envelope.additionalFields.count == 1, "the member the server does not know is kept")
        let bad: [(frame: String, code: String)] = [
            ("not json", "malformed-frame"),
            (#"[1,2]"#, "malformed-frame"),
            (#"{"type":"dance","ref":1}"#, "unknown-frame"),
            (#"{"type":"send","conversation":"solo","ref":2,"envelope":{"objectName":"x:note","content":{}}}"#, "not-found"),
            (#"{"type":"send","conversation":"team","ref":3}"#, "malformed-frame"),
            (#"{"type":"send","conversation":"team","ref":4,"envelope":{"objectName":"x:note","content":{"a":1},"conversationID":"solo"}}"#, "conversation-mismatch"),
            (#"{"type":"read","conversation":"team","upTo":"nope","ref":5}"#, "unknown-message"),
            // A member given twice, and a ref that cannot come back as it was sent.
            (#"{"type":"read","conversation":"team","conversation":"solo","upTo":"w1","ref":6}"#, "malformed-frame"),
            (#"{"type":"read","conversation":"team","upTo":"w1","ref":{"a":1}}"#, "malformed-frame"),
        ]
        for (frame, code) in bad {
            try await bob.send(frame)
            let answer = try await bob.expectNext("error", skipping: ["joined", "message"])
            #expect((answer["error"] as? [String: Any])?["code"] as? String == code, "\(frame): \(answer)")
        }
        // Still open, and still sending.
        try await bob.send(#"{"type":"send","conversation":"team","envelope":{"id":"w2","objectName":"x:note","content":{}}}"#)
        #expect((try await alice.expectNext("message")["message"] as? [String: Any])?["id"] as? String == "w2")
        await bob.close()
        await alice.close()
        await team.running.stop()
    }

    /// `status` reaches the members online and nobody later; `none` reaches the members online at once and the
    /// others at their next connection; neither is stored.
    @Test(arguments: StoreBackend.allCases)
    func statusAndNoneGoToTheMembersOnlineAndNoneWaitsForTheOthers(backend: StoreBackend) async throws {
        let team = try await Team.start(backend)
        let alice = try await team.connect(team.alice)
        try await team.send(team.alice, "typing", flag: 16)
        try await team.send(team.alice, "ping", flag: 0)
        for expected in ["typing", "ping"] {
            let event = try await alice.expectNext("transient")
            #expect(event["envelope"].flatMap { ($0 as? [String: Any])?["id"] as? String } == expected)
        }
        // bob was offline: the `none` waits for him, the `status` does not.
        let bob = EventClient(port: team.running.port, token: team.bob)
        try await bob.expectNext("hello")
        let kept = try await bob.expectNext("transient")
        #expect((kept["envelope"] as? [String: Any])?["id"] as? String == "ping")
        #expect((kept["persistence"] as? [String: Any])?["name"] as? String == "none")
        #expect(try await bob.nextOtherThanMembership(timeout: .milliseconds(300)) == nil)
        await bob.close()
        _ = await bob.result()
        // Delivered once.
        let again = try await team.connect(team.bob)
        #expect(try await again.nextOtherThanMembership(timeout: .milliseconds(300)) == nil)
        #expect(try await team.running.server.store.message(id: "ping") == nil)
        #expect(try await team.running.server.store.message(id: "typing") == nil)
        await again.close()
        await alice.close()
        await team.running.stop()
    }

    /// A connection that stops reading is cut off once its queue is full, never buffered for without bound; the
    /// other members are served, and the one cut off resumes from its last position.
    @Test(arguments: StoreBackend.allCases)
    func aReaderThatStopsReadingIsCutOffAndOthersAreServed(backend: StoreBackend) async throws {
        var limits = ServerLimits()
        limits.eventQueueLength = 16
        limits.burst = 1_000
        limits.requestsPerSecond = 1_000
        let team = try await Team.start(backend, limits: limits)
        let stuck = try await StalledEventClient.open(port: team.running.port, token: team.bob)
        let alice = try await team.connect(team.alice)
        try await Task.sleep(for: .milliseconds(200))
        // 100 KiB each, 15 MB in all: more than the sockets' buffers hold, so the stuck reader's queue fills.
        let text = String(repeating: "x", count: 100 << 10)
        for index in 1...150 { try await team.send(team.alice, "big\(index)", text: text) }
        // The server's memory does not grow for it: it is cut off.
        #expect(try await stuck.drainUntilClosed(timeout: .seconds(30)), "the stuck reader was cut off")
        var received = 0
        while received < 150, let event = try await alice.next() {
            if event["type"] as? String == "message" { received += 1 }
        }
        #expect(received == 150, "alice is served in full")
        // bob resumes from the start and gets everything once.
        let bob = EventClient(port: team.running.port, token: team.bob, after: 0)
        try await bob.expectNext("hello")
        var ids: [String] = []
        while ids.count < 150, let event = try await bob.next() {
            if let id = (event["message"] as? [String: Any])?["id"] as? String { ids.append(id) }
        }
        #expect(ids == (1...150).map { "big\($0)" })
        await bob.close()
        await alice.close()
        await team.running.stop()
    }

    /// Clients that vanish (a socket closed without a goodbye, one closed in the middle of the handshake) cost the
    /// server nothing: the others are served, and the one that vanished comes back.
    @Test func clientsThatVanishAbruptlyLeaveTheOthersServed() async throws {
        let team = try await Team.start(.sqlite)
        let alice = try await team.connect(team.alice)
        for _ in 0..<20 {
            _ = try await StalledEventClient.open(port: team.running.port, token: team.bob)  // closed at once, without a close frame
        }
        try await Fixtures.offThePool {
            let descriptor = try loopbackSocket(port: team.running.port)
            let half = Array("GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websock".utf8)
            _ = half.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            close(descriptor)
        }
        for index in 1...5 { try await team.send(team.alice, "v\(index)") }
        for index in 1...5 {
            #expect((try await alice.expectNext("message")["message"] as? [String: Any])?["id"] as? String == "v\(index)")
        }
        let bob = try await team.connect(team.bob, after: 0)
        var ids: [String] = []
        while ids.count < 5, let event = try await bob.next() {
            if let id = (event["message"] as? [String: Any])?["id"] as? String { ids.append(id) }
        }
        #expect(ids == (1...5).map { "v\($0)" })
        await bob.close()
        await alice.close()
        await team.running.stop()
    }

    /// A member whose tokens are revoked while it is connected is disconnected, and cannot come back.
    @Test func aMemberWhoseTokensAreRevokedIsDisconnected() async throws {
        var limits = ServerLimits()
        limits.tokenCheckInterval = .milliseconds(200)
        let team = try await Team.start(.sqlite, limits: limits)
        let bob = try await team.connect(team.bob)
        let alice = try await team.connect(team.alice)
        try team.running.server.accounts.revoke(member: "bob")
        #expect(try await bob.waitForEnd(timeout: .seconds(10)), "bob's connection was closed")
        // alice goes on.
        try await team.send(team.alice, "after")
        #expect((try await alice.expectNext("message")["message"] as? [String: Any])?["id"] as? String == "after")
        let again = EventClient(port: team.running.port, token: team.bob)
        guard case .failure = await again.result() else {
            Issue.record("a revoked token opened the stream")
            return
        }
        await alice.close()
        await team.running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func historyPagesByCursorAndSearchKeepsToTheMembersConversations(backend: StoreBackend) async throws {
        let team = try await Team.start(backend)
        for index in 1...7 { try await team.sendText(team.alice, "h\(index)", text: "word\(index) 天气很好") }
        try await team.sendText(team.carol, "s1", in: "solo", text: "天气很好")
        func ids(_ path: String) async throws -> [String] {
            let answer = try await team.running.request("GET", path, token: team.bob)
            #expect(answer.status == 200, "\(path): \(answer.text)")
            return try #require(try answer.json["messages"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        }
        #expect(try await ids("/api/v1/conversations/team/messages?limit=3") == ["h5", "h6", "h7"])
        #expect(try await ids("/api/v1/conversations/team/messages?limit=3&before=h5") == ["h2", "h3", "h4"])
        #expect(try await ids("/api/v1/conversations/team/messages?limit=3&before=h2") == ["h1"])
        #expect(try await ids("/api/v1/conversations/team/messages?limit=2&after=h4") == ["h5", "h6"])
        #expect(try await ids("/api/v1/conversations/team/messages?after=h7") == [])
        let foreign = try await team.running.request("GET", "/api/v1/conversations/team/messages?before=s1", token: team.bob)
        #expect(foreign.status == 400 && foreign.errorCode == "unknown-cursor")
        let both = try await team.running.request("GET", "/api/v1/conversations/team/messages?before=h2&after=h1", token: team.bob)
        #expect(both.status == 400)

        let hits = try await team.running.request("GET", "/api/v1/search?q=%E5%A4%A9%E6%B0%94", token: team.bob)
        let found = try #require(try hits.json["hits"] as? [[String: Any]]).compactMap { ($0["message"] as? [String: Any])?["id"] as? String }
        #expect(Set(found) == Set((1...7).map { "h\($0)" }), "bob finds his own conversation's messages, not carol's")
        let scoped = try await team.running.request("GET", "/api/v1/search?q=word3&conversation=team", token: team.bob)
        #expect(try (scoped.json["hits"] as? [[String: Any]])?.count == 1, "\(scoped.text)")
        let outsider = try await team.running.request("GET", "/api/v1/search?q=word3&conversation=solo", token: team.bob)
        #expect(outsider.status == 404)
        let empty = try await team.running.request("GET", "/api/v1/search", token: team.bob)
        #expect(empty.status == 400)
        let none = try await team.running.request("GET", "/api/v1/search?q=word3", token: nil)
        #expect(none.status == 401)
        await team.running.stop()
    }
}
