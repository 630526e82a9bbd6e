import Foundation
import Missive
import MissiveServer
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
    ]

    @Test(arguments: StoreBackend.allCases)
    func everyEndpointRefusesNoTokenAMalformedOneAnUnknownOneAndARevokedOne(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
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
        await running.stop()
    }

    @Test func requestsThatAreTooBigMalformedOrTooManyAreRefusedAndTheServerGoesOn() async throws {
        let running = try await RunningServer.start(.sqlite, limits: ServerLimits(maxRequestBytes: 1024, burst: 8, requestsPerSecond: 0.5))
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        let big = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"x","pad":""# + String(repeating: "a", count: 2000) + #""}"#)
        #expect(big.status == 413 && big.errorCode == "too-large", "\(big.status) \(big.text)")
        for body in ["{", #"{"id":7}"#, #"{"id":"-x"}"#, #"{"id":"ok","members":["nobody"]}"#, #"{"id":"ok","members":"bob"}"#, "[]"] {
            let answer = try await running.request("POST", "/api/v1/conversations", token: alice, body: body)
            #expect(answer.status == 400, "\(body): \(answer.status) \(answer.text)")
        }
        // alice has spent her burst (7 requests so far); bob has not.
        var limited: HTTPAnswer?
        for _ in 0..<3 {
            let answer = try await running.request("GET", "/api/v1/me", token: alice)
            if answer.status == 429 { limited = answer }
        }
        let refused = try #require(limited)
        #expect(refused.errorCode == "rate-limited")
        #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 >= 1, "\(refused.headers)")
        let other = try await running.request("GET", "/api/v1/me", token: bob)
        #expect(other.status == 200, "\(other.text)")
        await running.stop()
    }
}
