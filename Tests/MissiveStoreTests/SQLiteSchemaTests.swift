import Foundation
import GRDB
import Missive
import MissiveStore
import MissiveTestSupport
import Testing

/// Stores written by other versions of Missive: an older one is brought up to date, a newer one is refused.
@Suite struct SQLiteSchemaTests {
    /// A store as version 0.7 wrote it (schema `v1`): one owner, the read mark and unread count per conversation.
    func writeVersion1Store(at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v1')")
            try db.execute(sql: "CREATE TABLE store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
            try db.execute(sql: "INSERT INTO store_info VALUES ('owner', 'alice')")
            try db.execute(
                sql: """
                    CREATE TABLE message (
                        seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, conversation_id TEXT NOT NULL, sender_id TEXT NOT NULL,
                        sent_at INTEGER NOT NULL, object_name TEXT NOT NULL, business_id TEXT, known INTEGER NOT NULL,
                        digest TEXT NOT NULL, persistence INTEGER NOT NULL, counted INTEGER NOT NULL, words TEXT NOT NULL,
                        search_text TEXT NOT NULL, parent_id TEXT, root_id TEXT, root_pending INTEGER NOT NULL DEFAULT 0,
                        reply_count INTEGER NOT NULL DEFAULT 0, reason TEXT, envelope BLOB NOT NULL)
                    """)
            try db.execute(sql: "CREATE INDEX message_by_conversation ON message(conversation_id, sent_at, id)")
            try db.execute(sql: "CREATE INDEX message_counted ON message(conversation_id, sent_at, id) WHERE counted = 1")
            try db.execute(sql: "CREATE INDEX message_by_root ON message(root_id) WHERE root_id IS NOT NULL")
            try db.execute(sql: "CREATE INDEX message_root_pending ON message(root_id) WHERE root_pending = 1")
            try db.execute(sql: "CREATE INDEX message_unknown ON message(object_name) WHERE known = 0")
            try db.execute(
                sql: """
                    CREATE TABLE conversation (
                        id TEXT PRIMARY KEY, unread INTEGER NOT NULL DEFAULT 0, message_count INTEGER NOT NULL DEFAULT 0,
                        last_sent_at INTEGER, last_message_id TEXT, read_sent_at INTEGER, read_message_id TEXT) WITHOUT ROWID
                    """)
            try db.execute(sql: "CREATE INDEX conversation_by_activity ON conversation(last_sent_at DESC, last_message_id DESC)")
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE message_search USING fts5(
                        search_text, content='message', content_rowid='seq', tokenize='unicode61 remove_diacritics 2')
                    """)
            // Four counted text messages: one of alice's own (which did not count for her), three of bob's, the
            // first of which she had read.
            for (seq, id, sender, sentAt) in [(1, "m1", "bob", 10), (2, "m2", "alice", 20), (3, "m3", "bob", 30), (4, "m4", "bob", 40)] {
                let envelope = StoreTests.text(id, "text \(id)", in: "c1", from: sender, at: Int64(sentAt))
                try db.execute(
                    sql: """
                        INSERT INTO message(seq, id, conversation_id, sender_id, sent_at, object_name, known, digest, persistence,
                            counted, words, search_text, envelope)
                        VALUES (?, ?, 'c1', ?, ?, 'MS:Text', 1, ?, 3, ?, ?, ?, ?)
                        """,
                    arguments: [seq, id, sender, sentAt, "text \(id)", sender != "alice", "text \(id)", "text \(id)", Data(envelope.encoded())])
                try db.execute(sql: "INSERT INTO message_search(rowid, search_text) VALUES (?, ?)", arguments: [seq, "text \(id)"])
            }
            try db.execute(
                sql: """
                    INSERT INTO conversation(id, unread, message_count, last_sent_at, last_message_id, read_sent_at, read_message_id)
                    VALUES ('c1', 2, 4, 40, 'm4', 10, 'm1')
                    """)
        }
    }

    @Test func aStoreOfTheFirstSchemaIsUpgradedWithItsCountsAndMarks() async throws {
        let path = try Fixtures.temporaryDirectory() + "/old.sqlite"
        try writeVersion1Store(at: path)
        let store = try SQLiteMessageStore(path: path)
        #expect(store.kind == .personal(owner: "alice"))
        #expect(try await store.readState(conversation: "c1") == ReadState(readUpTo: "m1", unreadCount: 2))
        #expect(try await store.members(ofConversation: "c1") == ["alice"])
        #expect(try await store.message(id: "m2")?.countsAsUnread == false)
        #expect(try await store.search("m3").map(\.message.id) == ["m3"])
        #expect(try await store.checkConsistency().problems == [])
        // And it goes on as a store of this version: a new message counts, the mark moves.
        let registry = try Fixtures.sampleRegistry()
        _ = try await store.ingest([StoreTests.text("m5", "five", in: "c1", from: "bob", at: 50)], registry: registry)
        #expect(try await store.unreadCount(conversation: "c1") == 3)
        #expect(try await store.markRead(conversation: "c1", upTo: "m5").unreadCount == 0)
        #expect(try await store.checkConsistency().problems == [])
    }

    @Test func aStoreWrittenByANewerVersionIsRefused() async throws {
        let path = try Fixtures.temporaryDirectory() + "/new.sqlite"
        _ = try SQLiteMessageStore(path: path, owner: "alice")
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v9-from-the-future')") }
        let error = try #require(throws: StoreError.self) { try SQLiteMessageStore(path: path) }
        #expect(error.code == .newerSchema)
        #expect(error.description.hasPrefix(path + ": ") && error.description.contains("newer version of Missive"))
    }
}
