import Foundation
import MissiveServerTestSupport
import MissiveServer
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// A reply names its parent by id, and ids are unique across conversations: a member who sends, to a conversation of
/// their own, a reply to a message of a conversation they are not in is answered exactly as for a parent that does
/// not exist, and nothing of the other conversation changes.
@Suite struct ThreadScopeTests {
    @Test(arguments: StoreBackend.allCases)
    func aParentInAnotherConversationIsAnsweredAsAMissingOne(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        defer { Task { await running.stop() } }
        let alice = try running.member("alice")
        _ = try running.member("bob")
        let mallory = try running.member("mallory")
        #expect(try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#).status == 201)
        #expect(try await running.request("POST", "/api/v1/conversations", token: mallory, body: #"{"id":"lair"}"#).status == 201)
        let secret = try await running.send(#"{"id":"plan","objectName":"MS:Text","content":{"content":"the plan"}}"#, to: "team", token: alice)
        #expect(secret.status == 201, "\(secret.text)")

        // A probe at the other conversation's message, and a control at an id that was never stored.
        let probe = try await running.send(
            #"{"id":"p1","objectName":"MS:Text","content":{"content":"?"},"parentID":"plan"}"#, to: "lair", token: mallory)
        let control = try await running.send(
            #"{"id":"p2","objectName":"MS:Text","content":{"content":"?"},"parentID":"nothing"}"#, to: "lair", token: mallory)
        #expect(probe.status == control.status && probe.status == 201, "\(probe.text) \(control.text)")
        let probeMessage = try #require(probe.json["message"] as? [String: Any])
        let controlMessage = try #require(control.json["message"] as? [String: Any])
        #expect(probeMessage["threadRootID"] as? String == "plan" && controlMessage["threadRootID"] as? String == "nothing", "\(probe.text)")
        // The same answer but for the ids and the parent named: nothing says which of the two exists.
        func masked(_ text: String) -> String {
            text.replacingOccurrences(of: "p1", with: "ID").replacingOccurrences(of: "p2", with: "ID")
                .replacingOccurrences(of: "plan", with: "PARENT").replacingOccurrences(of: "nothing", with: "PARENT")
                .replacingOccurrences(of: #""sentAt":\d+"#, with: "", options: .regularExpression)
        }
        #expect(masked(probe.text) == masked(control.text), "\(probe.text)\n\(control.text)")
        // A probe at a reply there does not learn its thread's root either.
        let reply = try await running.send(
            #"{"id":"step","objectName":"MS:Text","content":{"content":"step one"},"parentID":"plan"}"#, to: "team", token: alice)
        #expect(reply.status == 201, "\(reply.text)")
        let deeper = try await running.send(
            #"{"id":"p3","objectName":"MS:Text","content":{"content":"?"},"parentID":"step"}"#, to: "lair", token: mallory)
        #expect((try deeper.json["message"] as? [String: Any])?["threadRootID"] as? String == "step", "\(deeper.text)")

        // The other conversation's message, as its members see it: no reply counted, no thread.
        let team = try await running.request("GET", "/api/v1/conversations/team/messages", token: alice)
        let messages = try #require(team.json["messages"] as? [[String: Any]])
        let plan = try #require(messages.first { $0["id"] as? String == "plan" })
        #expect(plan["replyCount"] as? Int == 1, "\(plan)")  // its own reply, "step", alone
        #expect(try await running.server.store.checkConsistency().isConsistent)
    }

    /// Every other place an id names a message: an action, a history cursor, a read mark. Naming another
    /// conversation's message is answered exactly as naming one never stored, changes nothing there, and is logged
    /// as a security event with the member.
    @Test func anActionACursorOrAReadMarkAtAnotherConversationsMessageIsAnsweredAsAMissingOne() async throws {
        let log = StrangerLimitTests.LogLines()
        let running = try await RunningServer.start(.sqlite, logger: log.logger)
        let alice = try running.member("alice")
        let mallory = try running.member("mallory")
        #expect(try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team"}"#).status == 201)
        #expect(try await running.request("POST", "/api/v1/conversations", token: mallory, body: #"{"id":"lair"}"#).status == 201)
        let poll = #"{"id":"poll1","objectName":"demo:poll","content":{"question":"Lunch?","options":["a","b"]}}"#
        #expect(try await running.send(poll, to: "team", token: alice).status == 201)
        #expect(try await running.send(#"{"id":"own","objectName":"MS:Text","content":{"content":"x"}}"#, to: "lair", token: mallory).status == 201)
        let before = try await running.server.store.message(id: "poll1")
        let probes: [(String, String, String?)] = [
            ("POST", "/api/v1/conversations/lair/messages/ID/actions/vote", #"{"arguments":[0,"mallory"]}"#),
            ("GET", "/api/v1/conversations/lair/messages/ID/actions", nil),
            ("GET", "/api/v1/conversations/lair/messages?before=ID", nil),
            ("POST", "/api/v1/conversations/lair/read", #"{"upTo":"ID"}"#),
        ]
        for (method, path, body) in probes {
            let probe = try await running.request(method, path.replacingOccurrences(of: "ID", with: "poll1"), token: mallory, body: body?.replacingOccurrences(of: "ID", with: "poll1"))
            let control = try await running.request(method, path.replacingOccurrences(of: "ID", with: "poll2"), token: mallory, body: body?.replacingOccurrences(of: "ID", with: "poll2"))
            #expect(probe.status >= 400 && probe.status == control.status, "\(path): \(probe.status) \(control.status)")
            #expect(probe.text.replacingOccurrences(of: "poll1", with: "ID") == control.text.replacingOccurrences(of: "poll2", with: "ID"), "\(probe.text)\n\(control.text)")
        }
        // The poll is as it was, and its own member's read state too.
        #expect(try await running.server.store.message(id: "poll1") == before)
        #expect(try await running.server.store.readState(member: "alice", conversation: "team").unreadCount == 0)
        let events = log.matching("security: cross-conversation")
        #expect(events.count >= 3 && events.allSatisfy { $0.contains("member=mallory") }, "\(events)")
        await running.stop()
    }
}
