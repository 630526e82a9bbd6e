import Foundation
import Missive
import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Sending: what a member sends is kept as it came, except what the server vouches for (sender, time,
/// conversation), and each persistence flag does what RongCloud's server does with it.
@Suite struct SendTests {
    /// Envelopes shaped as other SDKs' messages, each with members Missive does not know and a sender and a time
    /// that the server does not take from the client.
    static let foreign: [(name: String, body: String)] = [
        ("TUIKit", #"{"id":"t1","objectName":"MS:Custom","content":{"businessID":"order","orderId":"A-1", "price" : 4.50e1,"items":[1,2]},"cloudCustomData":"{\"quote\":null}","senderID":"mallory","sentAt":1,"conversationID":"team"}"#),
        ("RongCloud", #"{"id":"r1","objectName":"RC:TxtMsg","persistence":3,"content":{"content":"你好 🌏","extra":"x","user":{"id":"u1","name":"Ü"}},"pushContent":"新消息","isIncludeSender":1,"conversationID":"team","senderID":"u1","sentAt":1700000000000}"#),
        ("Matrix", #"{"id":"x1","objectName":"m.room.message","content":{"msgtype":"m.text","body":"hi \u00e9","m.relates_to":{"rel_type":"m.thread"}},"unsigned":{"age":12},"fallbackText":"hi","conversationID":"team","senderID":"@bob:matrix.org","sentAt":2}"#),
    ]

    @Test(arguments: StoreBackend.allCases)
    func foreignEnvelopesComeBackWithTheirContentAndUnknownMembersByteForByte(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        _ = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team"}"#)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        for (name, body) in Self.foreign {
            let sent = try await running.request("POST", "/api/v1/conversations/team/messages", token: alice, body: body)
            #expect(sent.status == 201, "\(name): \(sent.status) \(sent.text)")
            let original = try Envelope(parsing: Array(body.utf8))
            let stored = try #require(try await running.server.store.message(id: original.id), "\(name)")
            let envelope = try Envelope(parsing: stored.envelopeBytes)
            #expect(envelope.content == original.content, "\(name): the content's bytes")
            #expect(envelope.additionalFields == original.additionalFields, "\(name): the members Missive does not know")
            // What the server vouches for, whatever the client claimed.
            #expect(envelope.senderID == "alice" && envelope.conversationID == "team")
            #expect(envelope.sentAt >= before && envelope.sentAt <= Int64(Date().timeIntervalSince1970 * 1000) + 1000)
            // And as a client reads it back.
            let history = try await running.request("GET", "/api/v1/conversations/team/messages", token: alice)
            #expect(history.text.contains(String(decoding: stored.envelopeBytes, as: UTF8.self)), "\(name)")
        }
        await running.stop()
    }

    /// `persisted` is kept and not counted, `counted` kept and counted, `none` and `status` never kept.
    @Test(arguments: StoreBackend.allCases)
    func eachPersistenceFlagDoesWhatRongCloudsServerDoes(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        _ = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#)
        func send(_ id: String, _ flag: Int) async throws -> HTTPAnswer {
            try await running.request(
                "POST", "/api/v1/conversations/team/messages", token: alice,
                body: #"{"id":"\#(id)","objectName":"x:flag","persistence":\#(flag),"content":{"n":1}}"#)
        }
        func unread() async throws -> Int {
            try #require(try await running.request("GET", "/api/v1/conversations/team", token: bob).json["unreadCount"] as? Int)
        }
        let persisted = try await send("p1", 1)
        #expect(persisted.status == 201, "\(persisted.text)")
        #expect(try await unread() == 0)
        let counted = try await send("c1", 3)
        #expect(counted.status == 201, "\(counted.text)")
        #expect(try await unread() == 1)
        for (id, flag) in [("n1", 0), ("s1", 16)] {
            let answer = try await send(id, flag)
            #expect(try answer.status == 202 && answer.json["stored"] as? Bool == false, "\(flag): \(answer.text)")
            #expect(try await running.server.store.message(id: id) == nil, "flag \(flag) is never stored")
        }
        #expect(try await unread() == 1)
        let history = try await running.request("GET", "/api/v1/conversations/team/messages", token: bob)
        let ids = try #require(try history.json["messages"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        #expect(ids == ["p1", "c1"])
        await running.stop()
    }

    @Test func contentAPluginRefusesIsAnsweredWithItsReasonOrKeptAsUnknownByPolicy() async throws {
        let refused = #"{"id":"q1","objectName":"demo:poll","content":{"question":5}}"#
        let strict = try await RunningServer.start(.sqlite)
        let alice = try strict.member("alice")
        _ = try await strict.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team"}"#)
        let answer = try await strict.request("POST", "/api/v1/conversations/team/messages", token: alice, body: refused)
        #expect(answer.status == 422 && answer.errorCode == "refused-content", "\(answer.status) \(answer.text)")
        #expect(try await strict.server.store.message(id: "q1") == nil)
        await strict.stop()

        let lenient = try await RunningServer.start(.sqlite, keepsRefusedContent: true)
        let token = try lenient.member("alice")
        _ = try await lenient.request("POST", "/api/v1/conversations", token: token, body: #"{"id":"team"}"#)
        let kept = try await lenient.request("POST", "/api/v1/conversations/team/messages", token: token, body: refused)
        #expect(kept.status == 201, "\(kept.text)")
        let stored = try #require(try await lenient.server.store.message(id: "q1"))
        #expect(!stored.isKnown && stored.reason != nil)
        await lenient.stop()
    }

    @Test func aRetryIsAnsweredWithTheStoredMessageAndAnotherMessageUnderATakenIdIsRefused() async throws {
        let running = try await RunningServer.start(.sqlite)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        _ = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#)
        let body = #"{"id":"m1","objectName":"MS:Text","content":{"content":"hello"}}"#
        let first = try await running.request("POST", "/api/v1/conversations/team/messages", token: alice, body: body)
        let again = try await running.request("POST", "/api/v1/conversations/team/messages", token: alice, body: body)
        #expect(first.status == 201 && again.status == 200, "\(first.text) \(again.text)")
        let other = try await running.request(
            "POST", "/api/v1/conversations/team/messages", token: alice, body: #"{"id":"m1","objectName":"MS:Text","content":{"content":"bye"}}"#)
        #expect(other.status == 409 && other.errorCode == "duplicate-id", "\(other.text)")
        let byBob = try await running.request("POST", "/api/v1/conversations/team/messages", token: bob, body: body)
        #expect(byBob.status == 409, "\(byBob.text)")
        // Without an id, the server gives one.
        let unnamed = try await running.request("POST", "/api/v1/conversations/team/messages", token: alice, body: #"{"objectName":"MS:Text","content":{"content":"x"}}"#)
        #expect(unnamed.status == 201, "\(unnamed.text)")
        await running.stop()
    }

    @Test func malformedOversizeMisdirectedAndForeignSendsAreRefusedAndTheServerGoesOn() async throws {
        let running = try await RunningServer.start(.sqlite, limits: ServerLimits(maxContentBytes: 100))
        let alice = try running.member("alice")
        let zoe = try running.member("zoe")
        _ = try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team"}"#)
        let cases: [(token: String, body: String, status: Int, code: String)] = [
            (alice, "not json", 400, "malformed-envelope"),
            (alice, "[1]", 400, "malformed-envelope"),
            (alice, #"{"objectName":"MS:Text"}"#, 400, "malformed-envelope"),
            (alice, #"{"objectName":"MS:Text","content":{"content":"x"},"conversationID":"elsewhere"}"#, 400, "conversation-mismatch"),
            (alice, #"{"objectName":"x:big","content":{"pad":""# + String(repeating: "a", count: 200) + #""}}"#, 413, "content-too-large"),
            (zoe, #"{"objectName":"MS:Text","content":{"content":"x"}}"#, 404, "not-found"),
        ]
        for (token, body, status, code) in cases {
            let answer = try await running.request("POST", "/api/v1/conversations/team/messages", token: token, body: body)
            #expect(answer.status == status && answer.errorCode == code, "\(body): \(answer.status) \(answer.text)")
        }
        let fine = try await running.request("POST", "/api/v1/conversations/team/messages", token: alice, body: #"{"objectName":"MS:Text","content":{"content":"ok"}}"#)
        #expect(fine.status == 201, "\(fine.text)")
        await running.stop()
    }
}
