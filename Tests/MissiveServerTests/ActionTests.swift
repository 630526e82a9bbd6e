import Foundation
import Missive
@testable import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Actions on the server: message actions run on the server's stored copy and stored as its new version,
/// composer actions make messages sent by the member, and every refusal has its code.
@Suite struct ActionTests {
    /// A poll as a newer client sends it: a content member the type does not know, and envelope members Missive
    /// does not know, each spelled with its own spacing.
    static let poll = #"{"id":"poll:1","objectName":"demo:poll","content":{"question":"Lunch?","options":["Pizza","Sushi","Salad"],"x-theme":{"dark" : true}},"cloudCustomData":"{\"k\": 1}","unsigned":{"age": 12, "note":"é"}}"#

    /// The stored poll's tallies and voters.
    static func tallies(_ store: any MessageStore, _ id: String) async throws -> (votes: [Int], voters: [String: Int]) {
        let stored = try #require(try await store.message(id: id))
        let content = try #require(try JSONSerialization.jsonObject(with: Data(try Envelope(parsing: stored.envelopeBytes).content)) as? [String: Any])
        return (content["votes"] as? [Int] ?? [], content["voters"] as? [String: Int] ?? [:])
    }

    @Test(arguments: StoreBackend.allCases)
    func aVoteEditsTheStoredPollKeepsUnknownMembersAndReachesTheChangeFeed(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        let sent = try await running.send(Self.poll, to: "team", token: alice)
        #expect(sent.status == 201, "\(sent.text)")
        let original = try #require(try await running.server.store.message(id: "poll:1"))
        let before = try await running.server.store.changes(after: 0, limit: 1000).last?.position ?? 0

        // The id in the path is percent-encoded, as a browser writes it.
        let voted = try await running.act("vote", on: "poll%3A1", in: "team", token: bob, arguments: #"[1, "bob"]"#)
        #expect(voted.status == 200, "\(voted.text)")
        #expect(try voted.json["result"] as? String == "edited")
        let stored = try #require(try await running.server.store.message(id: "poll:1"))
        let envelopeText = String(decoding: stored.envelopeBytes, as: UTF8.self)
        // The answer is the stored message, its envelope spliced in byte for byte.
        #expect(voted.text.contains(#""envelope":"# + envelopeText), "\(voted.text)")
        #expect(try await Self.tallies(running.server.store, "poll:1") == ([0, 1, 0], ["bob": 1]))
        // What the sender and the server vouched for stays; the members Missive does not know stay as spelled.
        #expect(stored.senderID == "alice" && stored.sentAt == original.sentAt && stored.conversationID == "team")
        let envelope = try Envelope(parsing: stored.envelopeBytes)
        #expect(envelope.additionalFields == (try Envelope(parsing: original.envelopeBytes)).additionalFields)
        #expect(envelopeText.contains(#""cloudCustomData":"{\"k\": 1}""#), "\(envelopeText)")
        #expect(envelopeText.contains(#""unsigned":{"age": 12, "note":"é"}"#), "\(envelopeText)")
        #expect(envelope.content.text.contains(#""x-theme":{"dark" : true}"#), "\(envelope.content.text)")
        // The store's feed carries the edit to every member's stream.
        let changes = try await running.server.store.changes(after: before, limit: 100)
        #expect(changes.map(\.kind) == [.edited] && changes.first?.messageID == "poll:1", "\(changes)")

        // A second vote by the same voter moves it; alice's vote counts beside it.
        #expect(try await running.act("vote", on: "poll%3A1", in: "team", token: bob, arguments: #"[2, "bob"]"#).status == 200)
        #expect(try await running.act("vote", on: "poll%3A1", in: "team", token: alice, arguments: #"[0, "alice"]"#).status == 200)
        #expect(try await Self.tallies(running.server.store, "poll:1") == ([1, 0, 1], ["bob": 2, "alice": 0]))
        // The conversation goes on after the votes.
        for (index, token) in [alice, bob, alice].enumerated() {
            let next = try await running.send(#"{"id":"after\#(index)","objectName":"MS:Text","content":{"content":"lunch at 12"}}"#, to: "team", token: token)
            #expect(next.status == 201, "a message after the votes: \(next.text)")
        }
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func twentyMembersVotingAtOnceAreEachCountedOnce(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let names = (0..<20).map { "voter\($0)" }
        var tokens: [String] = []
        for name in names { tokens.append(try running.member(name)) }
        try await running.makeConversation("all", token: tokens[0], members: Array(names.dropFirst()))
        #expect(try await running.send(#"{"id":"p","objectName":"demo:poll","content":{"question":"When?","options":["Mon","Tue","Wed"]}}"#, to: "all", token: tokens[0]).status == 201)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, token) in tokens.enumerated() {
                group.addTask {
                    try await running.act("vote", on: "p", in: "all", token: token, arguments: #"[\#(index % 3), "\#(names[index])"]"#).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        let (votes, voters) = try await Self.tallies(running.server.store, "p")
        #expect(votes == [7, 7, 6])
        #expect(voters == Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0 % 3) }))
        let edits = try await running.server.store.changes(after: 0, limit: 1000).filter { $0.kind == .edited && $0.messageID == "p" }
        #expect(edits.count == 20)
        await running.stop()
    }

    @Test func theLockSerializesEachKeyAndForgetsKeysNobodyHolds() async throws {
        let lock = KeyedLock<String>()
        let counters = Counters()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<60 {
                group.addTask {
                    let key = "k\(index % 3)"
                    try await lock.withLock(key) {
                        let value = await counters.read(key)
                        try await Task.sleep(for: .milliseconds(1))
                        await counters.write(key, value + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await counters.values == ["k0": 20, "k1": 20, "k2": 20])
        #expect(await lock.heldKeys == 0)
        // A body that throws frees its key too.
        await #expect(throws: CancellationError.self) {
            try await lock.withLock("k0") { () async throws -> Int in throw CancellationError() }
        }
        #expect(await lock.heldKeys == 0)
    }

    @Test(arguments: StoreBackend.allCases)
    func anOutsiderGets404OnEveryActionEndpointAsForAnUnknownConversationOrMessage(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        let zoe = try running.member("zoe")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        try await running.makeConversation("private", token: alice)
        #expect(try await running.send(Self.poll, to: "team", token: alice).status == 201)
        #expect(try await running.send(#"{"id":"secret","objectName":"demo:poll","content":{"question":"?","options":["a","b"]}}"#, to: "private", token: alice).status == 201)
        let compose = #"{"arguments":["Q?","a\nb"]}"#
        let cases: [(token: String, method: String, path: String, body: String?)] = [
            (zoe, "GET", "/api/v1/conversations/team/messages/poll%3A1/actions", nil),
            (zoe, "POST", "/api/v1/conversations/team/messages/poll%3A1/actions/vote", #"{"arguments":[0,"zoe"]}"#),
            (zoe, "POST", "/api/v1/conversations/team/compose/demo.poll.create", compose),
            (bob, "GET", "/api/v1/conversations/nowhere/messages/poll%3A1/actions", nil),
            (bob, "POST", "/api/v1/conversations/nowhere/compose/demo.poll.create", compose),
            // A message of a conversation bob is not in, asked for through one he is in; and one not stored.
            (bob, "GET", "/api/v1/conversations/team/messages/secret/actions", nil),
            (bob, "POST", "/api/v1/conversations/team/messages/secret/actions/vote", #"{"arguments":[0,"bob"]}"#),
            (bob, "POST", "/api/v1/conversations/private/messages/secret/actions/vote", #"{"arguments":[0,"bob"]}"#),
            (bob, "POST", "/api/v1/conversations/team/messages/missing/actions/vote", #"{"arguments":[0,"bob"]}"#),
        ]
        for (token, method, path, body) in cases {
            let answer = try await running.request(method, path, token: token, body: body)
            #expect(answer.status == 404 && answer.errorCode == "not-found", "\(method) \(path): \(answer.status) \(answer.text)")
        }
        #expect(try await running.request("GET", "/api/v1/actions", token: nil).status == 401)
        #expect(try await Self.tallies(running.server.store, "secret").votes.isEmpty)
        #expect(try await Self.tallies(running.server.store, "poll:1").votes.isEmpty)
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func eachRefusalHasItsCodeAndLeavesTheMessageAsItWas(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend, keepsRefusedContent: true)
        let alice = try running.member("alice")
        try await running.makeConversation("team", token: alice)
        for body in [
            Self.poll,
            #"{"id":"thing","objectName":"x:thing","content":{"a":1}}"#,
            #"{"id":"refused","objectName":"demo:poll","content":{"question":5}}"#,
            #"{"id":"ftp","objectName":"demo:link","content":{"text":"files","link":"ftp://example.com/f"}}"#,
            #"{"id":"long","objectName":"demo:link","content":{"text":"long","link":"https://example.com/\#(String(repeating: "a", count: 2100))"}}"#,
        ] {
            let sent = try await running.send(body, to: "team", token: alice)
            #expect(sent.status == 201, "\(sent.text)")
        }
        let cases: [(message: String, action: String, body: String?, status: Int, code: String, says: String)] = [
            ("poll%3A1", "explode", nil, 404, "unknown-action", "explode"),
            ("thing", "vote", #"{"arguments":[0,"alice"]}"#, 422, "unknown-type", "no plugin for x:thing"),
            ("refused", "vote", #"{"arguments":[0,"alice"]}"#, 422, "unknown-message", "is unknown to it"),
            ("poll%3A1", "vote", #"{"arguments":[0]}"#, 400, "invalid-arguments", "voter is missing"),
            ("poll%3A1", "vote", #"{"arguments":["0","alice"]}"#, 400, "invalid-arguments", "expected"),
            ("poll%3A1", "vote", #"{"arguments":[7,"alice"]}"#, 400, "invalid-arguments", "option 7 is not one of the poll's options"),
            ("poll%3A1", "vote", #"{"arguments":0}"#, 400, "malformed-request", "arguments"),
            ("poll%3A1", "vote", #"{"arguments":[0,"alice"],"voter":"bob"}"#, 400, "malformed-request", "voter"),
            ("poll%3A1", "vote", "[0]", 400, "malformed-request", "object"),
            ("poll%3A1", "vote", "{", 400, "malformed-json", "not JSON"),
            ("ftp", "open", nil, 422, "action-failed", "is not an http or https URL"),
            ("long", "open", nil, 422, "invalid-result", "not an http or https URL of at most 2048 bytes"),
        ]
        let before = try await running.server.store.changes(after: 0, limit: 1000).last?.position ?? 0
        for (message, action, body, status, code, says) in cases {
            let answer = try await running.request("POST", "/api/v1/conversations/team/messages/\(message)/actions/\(action)", token: alice, body: body)
            let text = ((try? answer.json)?["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(answer.status == status && answer.errorCode == code && text.contains(says), "\(message) \(action) \(body ?? ""): \(answer.status) \(answer.text)")
        }
        // None of them changed a message.
        #expect(try await running.server.store.changes(after: before, limit: 100).isEmpty)
        #expect(try await Self.tallies(running.server.store, "poll:1").votes.isEmpty)
        // And the server goes on serving.
        #expect(try await running.act("vote", on: "poll%3A1", in: "team", token: alice, arguments: #"[0,"alice"]"#).status == 200)
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aURLActionIsAnsweredWithItsURLAndChangesNothing(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        try await running.makeConversation("team", token: alice)
        let link = #"{"id":"l1","objectName":"demo:link","content":{"text":"Welcome","link":"https://example.com/welcome?a=b&c=d"}}"#
        #expect(try await running.send(link, to: "team", token: alice).status == 201)
        let stored = try #require(try await running.server.store.message(id: "l1"))
        let before = try await running.server.store.changes(after: 0, limit: 1000).last?.position ?? 0
        let answer = try await running.act("open", on: "l1", in: "team", token: alice)
        #expect(answer.status == 200, "\(answer.text)")
        #expect(try answer.json["result"] as? String == "url")
        #expect(try answer.json["url"] as? String == "https://example.com/welcome?a=b&c=d")
        #expect(try await running.server.store.message(id: "l1") == stored)
        #expect(try await running.server.store.changes(after: before, limit: 100).isEmpty)
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aComposerActionMakesAPollSentByTheMemberThatThenTakesVotes(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let body = #"{"arguments":["Lunch?","Pizza\nSushi"],"id":"new-poll"}"#
        let made = try await running.request("POST", "/api/v1/conversations/team/compose/demo.poll.create", token: alice, body: body)
        #expect(made.status == 201, "\(made.text)")
        let message = try #require(try made.json["message"] as? [String: Any])
        #expect(message["id"] as? String == "new-poll" && message["senderID"] as? String == "alice" && message["objectName"] as? String == "demo:poll")
        let stored = try #require(try await running.server.store.message(id: "new-poll"))
        #expect(stored.senderID == "alice" && stored.conversationID == "team")
        #expect(stored.sentAt >= before && stored.sentAt <= Int64(Date().timeIntervalSince1970 * 1000) + 1000)
        #expect(made.text.contains(#""envelope":"# + String(decoding: stored.envelopeBytes, as: UTF8.self)))
        // Counted as unread for bob, as a poll sent by alice is.
        #expect(try await running.request("GET", "/api/v1/conversations/team", token: bob).json["unreadCount"] as? Int == 1)
        // Sending it again is a retry, as for a sent message.
        let again = try await running.request("POST", "/api/v1/conversations/team/compose/demo.poll.create", token: alice, body: body)
        #expect(again.status == 200, "\(again.text)")
        let other = try await running.request(
            "POST", "/api/v1/conversations/team/compose/demo.poll.create", token: alice, body: #"{"arguments":["Dinner?","a\nb"],"id":"new-poll"}"#)
        #expect(other.status == 409 && other.errorCode == "duplicate-id", "\(other.text)")
        // Without an id, the server gives one; the poll takes bob's vote.
        let unnamed = try await running.request("POST", "/api/v1/conversations/team/compose/demo.poll.create", token: bob, body: #"{"arguments":["Tea?","Yes\nNo"]}"#)
        #expect(unnamed.status == 201, "\(unnamed.text)")
        let id = try #require((try unnamed.json["message"] as? [String: Any])?["id"] as? String)
        #expect(try await running.act("vote", on: "new-poll", in: "team", token: bob, arguments: #"[1,"bob"]"#).status == 200)
        #expect(try await running.act("vote", on: id, in: "team", token: alice, arguments: #"[0,"alice"]"#).status == 200)
        #expect(try await Self.tallies(running.server.store, "new-poll") == ([0, 1], ["bob": 1]))
        #expect(try await Self.tallies(running.server.store, id) == ([1, 0], ["alice": 0]))

        let refusals: [(action: String, body: String, status: Int, code: String)] = [
            ("demo.nothing", #"{"arguments":[]}"#, 404, "unknown-action"),
            ("demo.poll.create", #"{"arguments":["Q?"]}"#, 400, "invalid-arguments"),
            ("demo.poll.create", #"{"arguments":["Q?","only one"]}"#, 400, "invalid-arguments"),
            ("demo.poll.create", #"{"arguments":["Q?","a\nb"],"id":""}"#, 400, "malformed-request"),
            ("demo.poll.create", #"{"arguments":["Q?","a\nb"],"parentID":5}"#, 400, "malformed-request"),
            ("demo.poll.create", #"{"arguments":["Q?","a\nb"],"senderID":"bob"}"#, 400, "malformed-request"),
        ]
        for (action, body, status, code) in refusals {
            let answer = try await running.request("POST", "/api/v1/conversations/team/compose/\(action)", token: alice, body: body)
            #expect(answer.status == status && answer.errorCode == code, "\(action) \(body): \(answer.status) \(answer.text)")
        }
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func theActionsOfAMessageAndTheComposerAreListed(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        try await running.makeConversation("team", token: alice)
        #expect(try await running.send(Self.poll, to: "team", token: alice).status == 201)
        #expect(try await running.send(#"{"id":"thing","objectName":"x:thing","content":{"a":1}}"#, to: "team", token: alice).status == 201)

        let composer = try #require(try await running.request("GET", "/api/v1/actions", token: alice).json["actions"] as? [[String: Any]])
        let ids = composer.compactMap { $0["id"] as? String }
        #expect(ids.starts(with: ["demo.poll.create", "demo.rating.create"]), "\(ids)")
        let create = try #require(composer.first)
        #expect(create["kind"] as? String == "composer" && create["title"] as? String == "Poll" && create["objectName"] as? String == "demo:poll")
        let parameters = try #require(create["parameters"] as? [[String: String]])
        #expect(parameters == [["name": "question", "type": "string"], ["name": "options", "type": "string"]])
        #expect(create["plugin"] == nil, "the server's file paths stay on the server")

        let forPoll = try await running.request("GET", "/api/v1/conversations/team/messages/poll%3A1/actions", token: alice).json
        #expect(forPoll["objectName"] as? String == "demo:poll" && forPoll["known"] as? Bool == true)
        let actions = try #require(forPoll["actions"] as? [[String: Any]])
        #expect(actions.compactMap { $0["id"] as? String } == ["vote"])
        #expect(actions.first?["yields"] as? String == "content" && actions.first?["icon"] as? String == "checkmark.circle")
        #expect(actions.first?["parameters"] as? [[String: String]] == [["name": "option", "type": "int32"], ["name": "voter", "type": "string"]])

        let forThing = try await running.request("GET", "/api/v1/conversations/team/messages/thing/actions", token: alice).json
        #expect(forThing["objectName"] as? String == "x:thing" && forThing["known"] as? Bool == false && (forThing["actions"] as? [Any])?.isEmpty == true)
        await running.stop()
    }
}

/// Counters whose read, suspension and write would lose updates without a lock around them.
private actor Counters {
    var values: [String: Int] = [:]
    func read(_ key: String) -> Int { values[key, default: 0] }
    func write(_ key: String, _ value: Int) { values[key] = value }
}
