import Foundation
import GRDB
import Missive

/// Copying a store into another (`missive store migrate`): the rows as they are, then the memberships, then a
/// recount.
extension SQLiteMessageStore: MigratingStore {
    package func exportMessages(after sequence: Int64, limit: Int) async throws(StoreError) -> [(sequence: Int64, message: StoredMessage)] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(MessageColumn.selection), seq FROM message WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [sequence, max(0, limit)]
            ).map { row in (row[MessageColumn.end], self.storedMessage(row)) }
        }
    }

    package func exportMembers() async throws(StoreError) -> [MembershipRecord] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT conversation_id, member_id, active, read_sent_at, read_message_id FROM member ORDER BY conversation_id, member_id")
                .map { row in
                    MembershipRecord(conversationID: row[0], memberID: row[1], active: row[2], readSentAt: row[3], readMessageID: row[4])
                }
        }
    }

    package func importMessages(_ messages: [StoredMessage], source: String, through sequence: Int64) async throws(StoreError) -> Int {
        try await write { db in
            var inserted = 0
            for message in messages {
                let words = StoreRules.joinWords(message.searchableWords)
                let searchText = SearchText.document(message.searchableWords)
                try db.cachedStatement(
                    sql: """
                        INSERT OR IGNORE INTO message(
                            id, conversation_id, sender_id, sent_at, object_name, business_id, known, digest, persistence,
                            counted, words, search_text, parent_id, root_id, root_pending, reply_count, reason, envelope)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)
                        """
                ).execute(arguments: [
                    message.id, message.conversationID, message.senderID, message.sentAt, message.objectName, message.businessID,
                    message.isKnown, message.digest, Int64(message.persistence.rawValue), message.persistence == .counted, words, searchText,
                    message.parentID, message.threadRootID, message.reason, Data(message.envelopeBytes),
                ])
                guard db.changesCount > 0 else { continue }
                inserted += 1
                try db.cachedStatement(sql: "INSERT INTO message_search(rowid, search_text) VALUES (?, ?)")
                    .execute(arguments: [db.lastInsertedRowID, searchText])
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO conversation(id) VALUES (?)").execute(arguments: [message.conversationID])
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO store_info(key, value) VALUES (?, ?)", arguments: ["migrated-from " + source, String(sequence)])
            return inserted
        }
    }

    package func migrationProgress(source: String) async throws(StoreError) -> Int64 {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = ?", arguments: ["migrated-from " + source]).flatMap { Int64($0) } ?? 0
        }
    }

    package func finishImport(members: [MembershipRecord]) async throws(StoreError) {
        try await write { db in
            for member in members {
                try db.execute(sql: "INSERT OR IGNORE INTO conversation(id) VALUES (?)", arguments: [member.conversationID])
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO member(conversation_id, member_id, active, seen, read_sent_at, read_message_id)
                        VALUES (?, ?, ?, 0, ?, ?)
                        """,
                    arguments: [member.conversationID, member.memberID, member.active, member.readSentAt, member.readMessageID])
            }
            try Self.recount(db)
            try Self.recountThreads(db)
        }
    }

    /// Sets every message's reply count and whether it waits for its thread's root, from the rows.
    static func recountThreads(_ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE message SET root_pending = (root_id IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM message p WHERE p.id = message.root_id AND p.conversation_id = message.conversation_id))
                """)
        try db.execute(
            sql: "UPDATE message SET reply_count = (SELECT COUNT(*) FROM message r WHERE r.root_id = message.id AND r.conversation_id = message.conversation_id)")
    }
}
