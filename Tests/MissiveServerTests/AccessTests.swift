import Foundation
import Missive
import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Who may see what: every endpoint wants a valid token, and a member sees only the conversations it is in.
@Suite struct AccessTests {
    /// Every endpoint of the API, with a body where it takes one.
    static let endpoints: [(method: String, path: String, body: String?)] = [
        ("GET", "/api/v1/me", nil),
        ("GET", "/api/v1/conversations", nil),
        ("POST", "/api/v1/conversations", #"{"id":"new"}"#),
        ("GET", "/api/v1/conversations/team", nil),
        ("GET", "/api/v1/conversations/team/messages", nil),
        ("GET", "/api/v1/conversations/team/messages?before=m1", nil),
        ("POST", "/api/v1/conversations/team/messages", #"{"objectName":"MS:Text","content":{"content":"hi"}}"#),
        ("POST", "/api/v1/conversations/team/read", #"{"upTo":"m1"}"#),
        ("GET", "/api/v1/search?q=hi", nil),
        ("GET", "/api/v1/actions", nil),
        ("GET", "/api/v1/conversations/team/messages/m1/actions", nil),
        ("POST", "/api/v1/conversations/team/messages/m1/actions/vote", #"{"arguments":[0,"x"]}"#),
        ("POST", "/api/v1/conversations/team/compose/demo.poll.create", #"{"arguments":["q?","a|b"]}"#),
        ("POST", "/api/v1/conversations/team/media", "bytes"),
        ("GET", "/api/v1/conversations/team/media/" + String(repeating: "0", count: 64), nil),
    ]

    @Test(arguments: StoreBackend.allCases)
    func everyEndpointRefusesNoTokenAMalformedOneAnUnknownOneAndARevokedOne(backend: StoreBackend) async throws {
        // Every refusal here counts against the one client address: an allowance that they all fit in (the limit
        // itself is StrangerLimitTests').
        var limits = ServerLimits()
        limits.failedAuthBurst = 1_000
        let running = try await RunningServer.start(backend, limits: limits)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        _ = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#)
        try running.server.accounts.revoke(member: "bob")
        for endpoint in Self.endpoints {
            for (token, header) in [(nil, nil), (nil, "Basic YWxpY2U6eA=="), ("msv_" + String(repeating: "A", count: 43), nil), (bob, nil), ("", nil)] as [(String?, String?)] {
                let answer = try await running.request(
                    endpoint.method, endpoint.path, token: token, body: endpoint.body, headers: header.map { ["Authorization": $0] } ?? [:])
                #expect(answer.status == 401, "\(endpoint) with \(token ?? header ?? "nothing"): \(answer.status) \(answer.text)")
                #expect(answer.errorCode == "unauthorized")
                #expect(answer.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
                #expect(answer.headers["x-content-type-options"] == "nosniff" && answer.headers["cache-control"] == "no-store")
            }
        }
        // The revoked member's conversation is untouched, and the valid token still works.
        let me = try await running.request("GET", "/api/v1/me", token: alice)
        #expect(me.status == 200 && me.text == #"{"member":"alice"}"#, "\(me.text)")
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aMemberSeesOnlyTheConversationsItIsIn(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        _ = try running.member("bob")
        let zoe = try running.member("zoe")
        let made = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#)
        #expect(made.status == 201, "\(made.text)")
        #expect(try made.json["members"] as? [String] == ["alice", "bob"])
        // Listed at once, before it holds a message, for each member.
        let empty = try await running.request("GET", "/api/v1/conversations", token: alice)
        #expect(empty.text == #"{"conversations":[{"id":"team","unreadCount":0,"messageCount":0,"lastMessage":null}]}"#, "\(empty.text)")
        // The sample's first lines, from alice, bob and carol: in a shared store, writing in a conversation does
        // not make a sender a member.
        _ = try await running.server.store.ingest(try Fixtures.conversationLines().prefix(5).map {
            try IncomingMessage(line: $0, registry: running.server.registry)
        })

        // zoe is in none of it: every endpoint about the conversation answers as if it did not exist.
        for path in ["/api/v1/conversations/team", "/api/v1/conversations/team/messages", "/api/v1/conversations/nothing-here"] {
            let answer = try await running.request("GET", path, token: zoe)
            #expect(answer.status == 404 && answer.errorCode == "not-found", "\(path): \(answer.status) \(answer.text)")
        }
        // So does every other endpoint about it, reading or writing.
        let first = try #require(try await running.server.store.messages(inConversation: "team", limit: 1).first).id
        for endpoint in Self.endpoints where endpoint.path.contains("/team") {
            let path = endpoint.path.replacingOccurrences(of: "m1", with: first)
            let answer = try await running.request(endpoint.method, path, token: zoe, body: endpoint.body)
            #expect(answer.status == 404 && answer.errorCode == "not-found", "\(endpoint.method) \(path): \(answer.status) \(answer.text)")
        }
        let searched = try await running.request("GET", "/api/v1/search?q=hi&conversation=team", token: zoe)
        #expect(searched.status == 404, "\(searched.text)")
        let everywhere = try await running.request("GET", "/api/v1/search?q=a", token: zoe)
        #expect(try everywhere.status == 200 && (everywhere.json["hits"] as? [Any])?.isEmpty == true, "\(everywhere.text)")
        let zoes = try await running.request("GET", "/api/v1/conversations", token: zoe)
        #expect(zoes.status == 200 && zoes.text == #"{"conversations":[]}"#, "\(zoes.text)")
        // Taking the id of a conversation one is not in says only that it is taken.
        let taken = try await running.request("POST", "/api/v1/conversations", token: zoe, body: #"{"id":"team"}"#)
        #expect(taken.status == 409 && taken.errorCode == "conflict", "\(taken.text)")

        // alice sees it, with its members and its messages.
        let conversation = try await running.request("GET", "/api/v1/conversations/team", token: alice)
        #expect(conversation.status == 200, "\(conversation.text)")
        #expect(try conversation.json["members"] as? [String] == ["alice", "bob"], "\(conversation.text)")
        let list = try await running.request("GET", "/api/v1/conversations", token: alice)
        let conversations = try #require(try list.json["conversations"] as? [[String: Any]])
        #expect(conversations.map { $0["id"] as? String } == ["team"], "\(list.text)")
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func storedEnvelopesComeBackByteForByte(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        _ = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team"}"#)
        let lines = try Fixtures.conversationLines()
        let report = try await running.server.store.ingest(try lines.map { try IncomingMessage(line: $0, registry: running.server.registry) })
        let answer = try await running.request("GET", "/api/v1/conversations/team/messages?limit=500", token: alice)
        #expect(answer.status == 200, "\(answer.text)")
        // Each stored line appears in the answer exactly as it was received.
        let stored = try await running.server.store.messages(inConversation: "team", limit: nil)
        #expect(report.storedCount > 0 && !stored.isEmpty, "\(report)")
        for message in stored {
            #expect(answer.text.contains("\"envelope\":" + String(decoding: message.envelopeBytes, as: UTF8.self)), "\(message.id)")
            #expect(lines.contains(message.envelopeBytes), "\(message.id) was not stored as received")
        }
        let bad = try await running.request("GET", "/api/v1/conversations/team/messages?limit=0", token: alice)
        #expect(bad.status == 400 && bad.errorCode == "malformed-request")

        // Without a limit, the newest 50; with one, the newest that many, oldest first.
        let all = try await running.request("GET", "/api/v1/conversations/team/messages", token: alice)
        let allIDs = try #require(try all.json["messages"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        #expect(allIDs == stored.suffix(50).map(\.id))
        let newest = try await running.request("GET", "/api/v1/conversations/team/messages?limit=5", token: alice)
        let newestIDs = try #require(try newest.json["messages"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        #expect(newestIDs == stored.suffix(5).map(\.id) && newestIDs.count == 5, "\(newestIDs)")
        await running.stop()
    }

    @Test func requestsThatAreTooBigOrMalformedAreRefusedWithTheirReason() async throws {
        let running = try await RunningServer.start(.sqlite, limits: ServerLimits(maxRequestBytes: 1024))
        let alice = try running.member("alice")
        let big = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"x","pad":""# + String(repeating: "a", count: 2000) + #""}"#)
        #expect(big.status == 413 && big.errorCode == "too-large", "\(big.status) \(big.text)")
        let cases: [(body: String, code: String)] = [
            ("{", "malformed-json"), (#"{"id":7}"#, "malformed-request"), (#"{"id":"-x"}"#, "invalid-conversation"),
            (#"{"id":"ok","members":["nobody"]}"#, "unknown-member"), (#"{"id":"ok","members":"bob"}"#, "malformed-request"), ("[]", "malformed-request"),
            // Which of two values would win is up to the reader: neither is taken.
            (#"{"id":"x6","id":"x7"}"#, "malformed-request"),
        ]
        for (body, code) in cases {
            let answer = try await running.request("POST", "/api/v1/conversations", token: alice, body: body)
            #expect(answer.status == 400 && answer.errorCode == code, "\(body): \(answer.status) \(answer.text)")
        }
        // No route: the same JSON error, with the same headers as every answer.
        let nowhere = try await running.request("GET", "/api/v1/nowhere", token: alice)
        #expect(nowhere.status == 404 && nowhere.errorCode == "not-found", "\(nowhere.status) \(nowhere.text)")
        for answer in [big, nowhere] {
            #expect(answer.headers["x-content-type-options"] == "nosniff" && answer.headers["x-frame-options"] == "DENY")
            #expect(answer.headers["cache-control"] == "no-store")
        }
        await running.stop()
    }

    @Test func oneMembersRateLimitRefusesItAloneWithTheSecondsToWait() async throws {
        let running = try await RunningServer.start(.sqlite, limits: ServerLimits(burst: 2, requestsPerSecond: 0.01))
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        var statuses: [Int] = []
        for _ in 0..<3 { statuses.append(try await running.request("GET", "/api/v1/me", token: alice).status) }
        #expect(statuses == [200, 200, 429])
        let refused = try await running.request("GET", "/api/v1/me", token: alice)
        #expect(refused.status == 429 && refused.errorCode == "rate-limited")
        // A token every 100 s: the wait is tens of seconds (less the time the requests took on a busy machine), not one.
        #expect((Int(refused.headers["retry-after"] ?? "") ?? 0) >= 50, "a token every 100 s: \(refused.headers)")
        #expect(refused.headers["x-content-type-options"] == "nosniff")
        let details = try refused.json["error"] as? [String: Any]
        #expect(details?["retryAfter"] as? Int == Int(refused.headers["retry-after"] ?? ""), "\(refused.text)")
        let other = try await running.request("GET", "/api/v1/me", token: bob)
        #expect(other.status == 200, "\(other.text)")
        await running.stop()
    }

    /// The event stream's frames draw on the member's one allowance, and a frame over it is refused as a request is:
    /// the same code, and the seconds to wait.
    @Test func aFrameOverTheRateLimitIsRefusedAsARequestIsWithTheSecondsToWait() async throws {
        let running = try await RunningServer.start(.sqlite, limits: ServerLimits(burst: 3, requestsPerSecond: 0.01), transport: .live)
        let alice = try running.member("alice")
        let client = EventClient(port: running.port, token: alice)  // the upgrade takes one of the three
        _ = try await client.expectNext("hello")
        var codes: [String] = []
        var refused: [String: Any] = [:]
        for ref in 1...3 {
            try await client.send(#"{"type":"read","conversation":"nowhere","upTo":"m1","ref":\#(ref)}"#)
            let frame = try await client.expectNext("error")
            refused = frame["error"] as? [String: Any] ?? [:]
            codes.append(refused["code"] as? String ?? "?")
        }
        #expect(codes == ["not-found", "not-found", "rate-limited"])
        #expect((refused["retryAfter"] as? Int ?? 0) >= 50, "a token every 100 s: \(refused)")
        // Requests over HTTP are refused too: it is one allowance.
        #expect(try await running.request("GET", "/api/v1/me", token: alice).errorCode == "rate-limited")
        await client.close()
        await running.stop()
    }

    /// Twenty members make the same conversation at once: one of them makes it, the others are told it is taken,
    /// and nobody else ends up in it.
    @Test(arguments: StoreBackend.allCases)
    func membersMakingTheSameConversationAtOnceMakeItOnce(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend, limits: ServerLimits(burst: 100, requestsPerSecond: 100))
        let tokens = try (0..<20).map { try running.member("m\($0)") }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for token in tokens {
                group.addTask { try await running.request("POST", "/api/v1/conversations", token: token, body: #"{"id":"race"}"#).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 1 && statuses.filter { $0 == 409 }.count == 19, "\(statuses.sorted())")
        #expect(try await running.server.store.members(ofConversation: "race").count == 1)
        await running.stop()
    }

    @Test func aConversationIdIsReadWithItsPercentEscapesDecoded() async throws {
        let running = try await RunningServer.start(.sqlite)
        let alice = try running.member("alice")
        let made = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"group:42@example"}"#)
        #expect(made.status == 201, "\(made.text)")
        // As a browser's encodeURIComponent writes it.
        let read = try await running.request("GET", "/api/v1/conversations/group%3A42%40example", token: alice)
        #expect(try read.status == 200 && read.json["id"] as? String == "group:42@example", "\(read.text)")
        let messages = try await running.request("GET", "/api/v1/conversations/group%3A42%40example/messages", token: alice)
        #expect(messages.status == 200, "\(messages.text)")
        await running.stop()
    }
}
