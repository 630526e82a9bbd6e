import Foundation
import Missive
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// The change feed: every write, in commit order, each at a position a follower resumes from.
@Suite struct ChangeFeedTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    func text(_ id: String, from sender: String, at sentAt: Int64, in conversation: String = "team") -> Envelope {
        StoreTests.text(id, "words of \(id)", in: conversation, from: sender, at: sentAt)
    }

    /// `kind conversation message member` for each change, for comparing.
    func summary(_ changes: [StoreChange]) -> [String] {
        changes.map { "\($0.kind) \($0.conversationID) \($0.messageID ?? "-") \($0.memberID ?? "-")" }
    }

    @Test(arguments: StoreBackend.allCases)
    func everyWriteIsInTheFeedInOrder(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        #expect(try await store.lastChangePosition() == 0)
        try await store.join(member: "alice", conversation: "team")
        try await store.join(member: "bob", conversation: "team")
        _ = try await store.ingest([text("m1", from: "alice", at: 10), text("m2", from: "bob", at: 20)], registry: registry)
        _ = try await store.ingest([text("m1", from: "alice", at: 10)], registry: registry)  // a duplicate: no change
        try await store.markRead(member: "bob", conversation: "team", upTo: "m1")
        try await store.markRead(member: "bob", conversation: "team", upTo: "m1")  // the mark does not move: no change
        try await store.replace(IncomingMessage(registry.decode(StoreTests.text("m2", "edited", in: "team", from: "bob", at: 20))))
        try await store.delete(messageID: "m1")
        try await store.leave(member: "alice", conversation: "team")
        let changes = try await store.changes(after: 0, limit: 100)
        #expect(
            summary(changes) == [
                "joined team - alice", "joined team - bob", "stored team m1 -", "stored team m2 -", "read team m1 bob", "edited team m2 -",
                "deleted team m1 -", "left team - alice",
            ])
        #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.position < $1.position })
        #expect(try await store.lastChangePosition() == changes.last?.position)
        // A stored or edited change brings the message as stored now; one deleted since has none.
        #expect(changes[2].message == nil)
        #expect(changes[3].message?.digest == "edited")
        #expect(changes[5].message?.digest == "edited")
        // Paging: after a position, at most `limit`.
        #expect(summary(try await store.changes(after: changes[3].position, limit: 2)) == ["read team m1 bob", "edited team m2 -"])
        #expect(try await store.changes(after: changes.last!.position, limit: 10).isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func aFollowerResumesFromItsPositionAndMissesNothing(backend: StoreBackend) async throws {
        let location = try await backend.newLocation()
        let writer = try await backend.open(location, kind: .shared)
        try await writer.join(member: "alice", conversation: "team")
        // A follower in its own store object (as another process has), reading as the writer writes.
        let follower = try await backend.open(location, kind: nil)
        let firstPart = Task {
            var seen: [StoreChange] = []
            for try await change in follower.follow(after: 0) {
                seen.append(change)
                if seen.count == 6 { break }
            }
            return seen
        }
        for index in 1...5 {
            _ = try await writer.ingest([text("m\(index)", from: "alice", at: Int64(index))], registry: registry)
        }
        let first = try await firstPart.value
        #expect(summary(first) == ["joined team - alice"] + (1...5).map { "stored team m\($0) -" })
        // Away for a while: more changes, then a new follower from the last position handled.
        _ = try await writer.ingest([text("m6", from: "alice", at: 6), text("m7", from: "alice", at: 7)], registry: registry)
        try await writer.delete(messageID: "m3")
        let resumed = try await backend.open(location, kind: nil)
        var rest: [StoreChange] = []
        for try await change in resumed.follow(after: first.last!.position) {
            rest.append(change)
            if rest.count == 3 { break }
        }
        #expect(summary(rest) == ["stored team m6 -", "stored team m7 -", "deleted team m3 -"])
    }
}
