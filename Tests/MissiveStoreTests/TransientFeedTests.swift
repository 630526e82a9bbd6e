import Foundation
import GRDB
import Missive
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Messages the store does not keep (`none`, `status`) carried by the change feed: in order with the other
/// changes, byte for byte, never counted or searchable, gone after ten minutes; and stores of the previous schema
/// upgraded to carry them.
@Suite struct TransientFeedTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    /// A message of a type the registry lacks, with the sender's flag `persistence`.
    func transient(_ id: String, _ persistence: Persistence, from sender: String = "alice", at sentAt: Int64) -> IncomingMessage {
        IncomingMessage(registry.decode(StoreTests.text(id, "typing \(id)", in: "team", from: sender, at: sentAt, objectName: "x:typing", persistence: persistence)))
    }

    @Test(arguments: StoreBackend.allCases)
    func transientMessagesAreInTheFeedInOrderAndNowhereElse(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        try await store.join(member: "alice", conversation: "team")
        try await store.join(member: "bob", conversation: "team")
        _ = try await store.ingest([StoreTests.text("m1", "first words", in: "team", from: "alice", at: 10)], registry: registry)
        let typing = transient("t1", .status, at: 15)
        let position = try await store.publishTransient(typing)
        let ping = transient("t2", .none, from: "bob", at: 16)
        try await store.publishTransient(ping)
        _ = try await store.ingest([StoreTests.text("m2", "second words", in: "team", from: "alice", at: 20)], registry: registry)

        let changes = try await store.changes(after: 0, limit: 100)
        #expect(changes.map { "\($0.kind) \($0.messageID ?? "-") \($0.memberID ?? "-")" } == [
            "joined - alice", "joined - bob", "stored m1 -", "transient t1 alice", "transient t2 bob", "stored m2 -",
        ])
        #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.position < $1.position })
        #expect(changes[3].position == position)
        #expect(changes[3].envelope == typing.envelopeBytes && changes[3].persistence == .status && changes[3].message == nil)
        #expect(changes[4].envelope == ping.envelopeBytes && changes[4].persistence == Persistence.none)
        #expect(changes[3].conversationID == "team")
        // A follower that resumes between them sees them in order with the rest.
        var seen: [String] = []
        for try await change in store.follow(after: changes[2].position) {
            seen.append(change.kind.description)
            if seen.count == 3 { break }
        }
        #expect(seen == ["transient", "transient", "stored"])
        // Not history, not counted, not searchable.
        #expect(try await store.messages(inConversation: "team").map(\.id) == ["m1", "m2"])
        #expect(try await store.message(id: "t1") == nil)
        #expect(try await store.unreadCount(member: "bob", conversation: "team") == 2)
        #expect(try await store.search(SearchQuery(parsing: "typing"), member: "bob", conversation: nil, limit: 10).isEmpty)
        #expect(try await store.checkConsistency().problems == [])
        // A message whose flag says to store it is not published.
        let refused = await #expect(throws: StoreError.self) {
            try await store.publishTransient(IncomingMessage(registry.decode(StoreTests.text("m3", "kept", in: "team", from: "alice", at: 30))))
        }
        #expect(refused?.code == .conflict)
    }

    @Test(arguments: StoreBackend.allCases)
    func aPublishRemovesTransientChangesOlderThanTenMinutes(backend: StoreBackend) async throws {
        let location = try await backend.newLocation()
        let store = try await backend.open(location, kind: .shared)
        try await store.publishTransient(transient("old", .status, at: 1))
        try await store.publishTransient(transient("recent", .status, at: 2))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // "old" was published eleven minutes ago, "recent" nine.
        let ages = [("old", now - 11 * 60_000), ("recent", now - 9 * 60_000)]
        switch backend {
        case .sqlite:
            let queue = try DatabaseQueue(path: location)
            for (id, at) in ages {
                try await queue.write { db in try db.execute(sql: "UPDATE change SET published_at = ? WHERE message_id = ?", arguments: [at, id]) }
            }
            try queue.close()
        case .postgres:
            let database = String(location.prefix { $0 != "?" })
            for (id, at) in ages { _ = try await Fixtures.psql(database, "UPDATE change SET published_at = \(at) WHERE message_id = '\(id)'") }
        }
        #expect(try await store.changes(after: 0, limit: 10).compactMap(\.messageID) == ["old", "recent"])
        try await store.publishTransient(transient("new", .status, at: 3))
        #expect(try await store.changes(after: 0, limit: 10).compactMap(\.messageID) == ["recent", "new"])
    }

    /// A store of the previous schema (no transient columns) is upgraded when opened, keeps its feed, and publishes.
    @Test(arguments: StoreBackend.allCases)
    func aStoreOfThePreviousSchemaIsUpgradedAndPublishes(backend: StoreBackend) async throws {
        let location = try await backend.newLocation()
        let old = try await backend.open(location, kind: .shared)
        try await old.join(member: "alice", conversation: "team")
        _ = try await old.ingest([StoreTests.text("m1", "first words", in: "team", from: "alice", at: 10)], registry: registry)
        // Back to the schema before the transient changes: the columns and the index of that version go, and the
        // versions after it.
        switch backend {
        case .sqlite:
            let queue = try DatabaseQueue(path: location)
            try await queue.write { db in
                try db.execute(sql: "DROP INDEX change_transient")
                for column in ["envelope", "persistence", "published_at"] { try db.execute(sql: "ALTER TABLE change DROP COLUMN \(column)") }
                try db.execute(sql: "DROP TABLE plugin_failure")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier IN ('v3-transient', 'v4-plugin-failures')")
            }
            try queue.close()
        case .postgres:
            _ = try await Fixtures.psql(
                String(location.prefix { $0 != "?" }),
                "DROP INDEX change_transient; ALTER TABLE change DROP COLUMN envelope, DROP COLUMN persistence, DROP COLUMN published_at; DROP TABLE plugin_failure; DELETE FROM missive_schema WHERE version >= 2")
        }
        let store = try await backend.open(location, kind: .shared)
        let before = try await store.changes(after: 0, limit: 10)
        #expect(before.map(\.kind) == [.joined, .stored])
        try await store.publishTransient(transient("t1", .status, at: 20))
        let after = try await store.changes(after: 0, limit: 10)
        #expect(after.map(\.kind) == [.joined, .stored, .transient])
        #expect(after.last?.envelope != nil && after.last!.position > before.last!.position)
        // The versions after it ran again: the plugin failures' table is back.
        #expect(try await store.pluginFailures().isEmpty)
        if backend == .postgres {
            #expect(try await Fixtures.psql(String(location.prefix { $0 != "?" }), "SELECT string_agg(version::text, ',' ORDER BY version) FROM missive_schema") == "1,2,3,4")
        }
    }

    /// A store written before threads were kept in their conversation may count a reply under a root of another
    /// conversation; opened by this version, it is counted again from the rows, and the next reply counts right.
    @Test(arguments: StoreBackend.allCases)
    func aStoreWithThreadsAcrossConversationsIsRecountedWhenOpened(backend: StoreBackend) async throws {
        let location = try await backend.newLocation()
        let old = try await backend.open(location, kind: .shared)
        _ = try await old.ingest([StoreTests.text("theirs", "secret plan", in: "other", from: "bob", at: 1)], registry: registry)
        _ = try await old.ingest([StoreTests.text("probe", "reply", in: "mine", from: "alice", at: 2, replyingTo: "theirs")], registry: registry)
        // What the earlier versions wrote: the probe settled in the other conversation's thread, counted there.
        let rewind = "UPDATE message SET root_pending = \(backend == .sqlite ? "0" : "false") WHERE id = 'probe'; UPDATE message SET reply_count = 1 WHERE id = 'theirs'"
        switch backend {
        case .sqlite:
            let queue = try DatabaseQueue(path: location)
            try await queue.write { db in
                try db.execute(sql: rewind)
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v5-threads-in-conversation'")
            }
            try queue.close()
        case .postgres:
            _ = try await Fixtures.psql(String(location.prefix { $0 != "?" }), rewind + "; DELETE FROM missive_schema WHERE version >= 4")
        }
        #expect(try await old.message(id: "theirs")?.replyCount == 1, "the rewind took")
        let store = try await backend.open(location, kind: .shared)
        #expect(try await store.message(id: "theirs")?.replyCount == 0)
        #expect(try await store.checkConsistency().isConsistent)
        // A reply to the probe stays in its own conversation too: nothing of the other one changes.
        _ = try await store.ingest([StoreTests.text("again", "reply", in: "mine", from: "alice", at: 3, replyingTo: "probe")], registry: registry)
        #expect(try await store.message(id: "theirs")?.replyCount == 0)
        #expect(try await store.message(id: "again")?.threadRootID == "theirs")
    }
}
