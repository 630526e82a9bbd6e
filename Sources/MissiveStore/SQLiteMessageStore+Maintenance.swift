import Foundation
import GRDB
import Missive

/// Deleting, re-decoding with a newer registry, and checking and recounting the counters.
extension SQLiteMessageStore {
    public func delete(messageID: String) async throws(StoreError) {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(MessageColumn.selection), seq, search_text FROM message WHERE id = ?", arguments: [messageID]) else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored")
            }
            let message = self.storedMessage(row)
            guard message.replyCount == 0 else {
                throw StoreError(
                    .hasReplies,
                    "message '\(messageID)' has \(message.replyCount) \(message.replyCount == 1 ? "reply" : "replies"); delete \(message.replyCount == 1 ? "it" : "them") first")
            }
            let seq: Int64 = row[MessageColumn.end]
            let searchText: String = row[MessageColumn.end + 1]
            try db.execute(sql: "INSERT INTO message_search(message_search, rowid, search_text) VALUES ('delete', ?, ?)", arguments: [seq, searchText])
            try db.execute(sql: "DELETE FROM message WHERE seq = ?", arguments: [seq])
            // A reply counts for its root in its own conversation only (one still waiting for its root counts for none).
            if let root = message.threadRootID {
                try db.execute(
                    sql: "UPDATE message SET reply_count = reply_count - 1 WHERE id = ? AND conversation_id = ?", arguments: [root, message.conversationID])
            }
            let counted = message.persistence == .counted
            try db.execute(
                sql: "UPDATE conversation SET message_count = message_count - 1, counted_total = counted_total - ? WHERE id = ?",
                arguments: [counted ? 1 : 0, message.conversationID])
            if counted {
                try Self.adjustSeen(
                    conversation: message.conversationID, position: (message.sentAt, message.id), sender: message.senderID, by: -1,
                    includingSender: true, db)
            }
            try Self.refreshLastMessage(of: message.conversationID, db)
            try Self.appendChange(.deleted, conversation: message.conversationID, message: message.id, db)
        }
    }

    @discardableResult
    public func replace(_ incoming: IncomingMessage) async throws(StoreError) -> StoredMessage {
        try await write { db in
            let (stored, row) = try self.storedRow(incoming.message.envelope.id, db)
            return try self.replace(stored, row: row, with: incoming, db)
        }
    }

    /// Reads, transforms and replaces the message in one write transaction, which SQLite begins `IMMEDIATE`: it
    /// holds the file's write lock from the read on, so that no other connection, of this process or another,
    /// writes in between.
    @discardableResult
    public func replace(messageID: String, with transform: @escaping @Sendable (StoredMessage) throws -> IncomingMessage) async throws -> StoredMessage {
        // The transform's own error leaves the transaction (which has written nothing) as a value, and is thrown as it is.
        let outcome: Result<StoredMessage, any Error> = try await write { db in
            let (stored, row) = try self.storedRow(messageID, db)
            let incoming: IncomingMessage
            do {
                incoming = try transform(stored)
            } catch {
                return .failure(error)
            }
            if let conflict = StoreRules.idConflict(replacing: stored, with: incoming.message) { throw conflict }
            return .success(try self.replace(stored, row: row, with: incoming, db))
        }
        return try outcome.get()
    }

    /// The stored message `id` and its row (with `seq` and `search_text` after the message's columns).
    private func storedRow(_ id: String, _ db: Database) throws -> (StoredMessage, Row) {
        guard let row = try Row.fetchOne(db, sql: "SELECT \(MessageColumn.selection), seq, search_text FROM message WHERE id = ?", arguments: [id]) else {
            throw StoreError(.notFound, "message '\(id)' is not stored")
        }
        return (storedMessage(row), row)
    }

    /// Writes `incoming` as the new version of `stored`, whose row `row` is, and records the edit.
    private func replace(_ stored: StoredMessage, row: Row, with incoming: IncomingMessage, _ db: Database) throws -> StoredMessage {
        let message = incoming.message
        if let conflict = StoreRules.editConflict(replacing: stored, with: message) { throw conflict }
        try Self.rewrite(stored, seq: row[MessageColumn.end], oldSearchText: row[MessageColumn.end + 1], as: message, envelopeBytes: incoming.envelopeBytes, db)
        try Self.appendChange(.edited, conversation: stored.conversationID, message: stored.id, db)
        guard let updated = try Row.fetchOne(db, sql: "SELECT \(MessageColumn.selection) FROM message WHERE id = ?", arguments: [stored.id]) else {
            throw StoreError(.database, "message '\(stored.id)' vanished while it was replaced")
        }
        return storedMessage(updated)
    }

    /// Writes a stored message's decoded columns (and, for an edit, its envelope) from `message`, with its
    /// search entry and, when whether it counts changes, the counters.
    static func rewrite(_ stored: StoredMessage, seq: Int64, oldSearchText: String, as message: Message, envelopeBytes: [UInt8]?, _ db: Database) throws {
        let persistence = message.persistence
        let counted = persistence == .counted
        let words = StoreRules.indexedWords(message)
        let searchText = SearchText.document(words)
        try db.cachedStatement(sql: "INSERT INTO message_search(message_search, rowid, search_text) VALUES ('delete', ?, ?)")
            .execute(arguments: [seq, oldSearchText])
        try db.cachedStatement(sql: "INSERT INTO message_search(rowid, search_text) VALUES (?, ?)").execute(arguments: [seq, searchText])
        try db.cachedStatement(
            sql: """
                UPDATE message SET object_name = ?, business_id = ?, known = ?, digest = ?, persistence = ?, counted = ?,
                    words = ?, search_text = ?, reason = ?, envelope = COALESCE(?, envelope)
                WHERE seq = ?
                """
        ).execute(
            arguments: [
                message.content.objectName, message.content.businessID, message.isKnown, message.digest, Int64(persistence.rawValue),
                counted, StoreRules.joinWords(words), searchText, message.unknown.map { "\($0.reason)" }, envelopeBytes.map { Data($0) }, seq,
            ])
        let wasCounted = stored.persistence == .counted
        if counted != wasCounted {
            let delta = counted ? 1 : -1
            try db.cachedStatement(sql: "UPDATE conversation SET counted_total = counted_total + ? WHERE id = ?")
                .execute(arguments: [delta, stored.conversationID])
            try adjustSeen(
                conversation: stored.conversationID, position: (stored.sentAt, stored.id), sender: stored.senderID, by: delta, includingSender: true, db)
        }
    }

    public func redecode(with registry: MessageRegistry, progress: (@Sendable (Int, Int) -> Void)?) async throws(StoreError) -> RedecodeReport {
        let unknownRowsSQL = "SELECT \(MessageColumn.selection), seq, search_text FROM message WHERE known = 0 ORDER BY seq"
        // Read, then decoded with no transaction open (`Redecoding`), then rewritten in one.
        let unknown = try await read { db in try Row.fetchAll(db, sql: unknownRowsSQL).map { self.storedMessage($0) } }
        let decoding = try await Redecoding.decode(unknown, with: registry, reader: reader, progress: progress)
        return try await write { db in
            var redecoding = decoding
            for row in try Row.fetchAll(db, sql: unknownRowsSQL) {
                let stored = self.storedMessage(row)
                guard let message = redecoding.message(for: stored) else { continue }
                let changed = redecoding.record(stored, as: message)
                try Self.rewrite(stored, seq: row[MessageColumn.end], oldSearchText: row[MessageColumn.end + 1], as: message, envelopeBytes: nil, db)
                if changed { try Self.appendChange(.edited, conversation: stored.conversationID, message: stored.id, db) }
            }
            return redecoding.report
        }
    }

    public func checkConsistency() async throws(StoreError) -> ConsistencyReport {
        // A write transaction: FTS5's integrity check is written as an INSERT.
        try await write { db in
            var problems: [String] = []
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            if integrity != ["ok"] { problems += integrity.map { "integrity_check: \($0)" } }
            do {
                try db.execute(sql: "INSERT INTO message_search(message_search, rank) VALUES ('integrity-check', 1)")
            } catch {
                problems.append("the search index does not match the messages: \(Self.reason(error))")
            }
            let wrongFlags = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM message WHERE counted != (persistence = 3)") ?? 0
            if wrongFlags > 0 { problems.append("\(wrongFlags) messages have a wrong 'counted' flag") }
            for row in try Row.fetchAll(db, sql: Self.recountConversationsSQL) {
                let id: String = row["id"]
                for (name, kept, counted) in [
                    ("counted message total", row["counted_total"] as Int, row["recount_counted"] as Int),
                    ("message count", row["message_count"] as Int, row["recount_messages"] as Int),
                ] where kept != counted {
                    problems.append("conversation '\(id)': \(name) is \(kept), a recount gives \(counted)")
                }
                let last: String? = row["last_message_id"]
                let recountLast: String? = row["recount_last"]
                if last != recountLast {
                    problems.append("conversation '\(id)': newest message is \(last ?? "none"), a recount gives \(recountLast ?? "none")")
                }
            }
            for row in try Row.fetchAll(db, sql: Self.recountMembersSQL) where row["unread"] as Int != row["recount_unread"] as Int {
                problems.append(
                    "conversation '\(row["conversation_id"] as String)', member '\(row["member_id"] as String)': unread count is \(row["unread"] as Int), a recount gives \(row["recount_unread"] as Int)"
                )
            }
            let missing = try String.fetchAll(
                db, sql: "SELECT DISTINCT conversation_id FROM message WHERE conversation_id NOT IN (SELECT id FROM conversation)")
            problems += missing.map { "conversation '\($0)' has messages but no counters" }
            let replies = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, reply_count, (SELECT COUNT(*) FROM message r WHERE r.root_id = m.id AND r.conversation_id = m.conversation_id) AS recount
                    FROM message m WHERE reply_count != (SELECT COUNT(*) FROM message r WHERE r.root_id = m.id AND r.conversation_id = m.conversation_id)
                    """)
            problems += replies.map { "message '\($0["id"] as String)': reply count is \($0["reply_count"] as Int), a recount gives \($0["recount"] as Int)" }
            let pending = try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM message r
                    WHERE r.root_pending != (r.root_id IS NOT NULL
                        AND NOT EXISTS (SELECT 1 FROM message p WHERE p.id = r.root_id AND p.conversation_id = r.conversation_id))
                    """) ?? 0
            if pending > 0 { problems.append("\(pending) replies are wrongly marked as waiting, or not waiting, for their thread's root") }
            return ConsistencyReport(problems: problems)
        }
    }

    /// Per conversation: the counters kept and the same counters recounted from the messages.
    private static let recountConversationsSQL = """
        SELECT c.id, c.counted_total, c.message_count, c.last_message_id,
            (SELECT COUNT(*) FROM message m WHERE m.conversation_id = c.id) AS recount_messages,
            (SELECT COUNT(*) FROM message m WHERE m.conversation_id = c.id AND m.counted = 1) AS recount_counted,
            (SELECT m.id FROM message m WHERE m.conversation_id = c.id ORDER BY m.sent_at DESC, m.id DESC LIMIT 1) AS recount_last
        FROM conversation c
        """

    /// Per active member: its unread count as the counters give it, and recounted from the messages.
    private static let recountMembersSQL = """
        SELECT mb.conversation_id, mb.member_id, c.counted_total - mb.seen AS unread,
            (SELECT COUNT(*) FROM message m WHERE m.conversation_id = mb.conversation_id AND m.counted = 1
                AND m.sender_id != mb.member_id AND (mb.read_sent_at IS NULL OR m.sent_at > mb.read_sent_at
                OR (m.sent_at = mb.read_sent_at AND m.id > mb.read_message_id))) AS recount_unread
        FROM member mb JOIN conversation c ON c.id = mb.conversation_id
        WHERE mb.active = 1
        """

    /// Recounts every conversation's totals and every member's `seen` from the messages and the read marks:
    /// for a store that was upgraded, or that takes an owner once it has messages.
    static func recount(_ db: Database) throws {
        try db.execute(sql: "UPDATE message SET counted = (persistence = 3)")
        for row in try Row.fetchAll(db, sql: recountConversationsSQL) {
            try db.execute(
                sql: "UPDATE conversation SET counted_total = ?, message_count = ? WHERE id = ?",
                arguments: [row["recount_counted"] as Int, row["recount_messages"] as Int, row["id"] as String])
            try refreshLastMessage(of: row["id"], db)
        }
        for row in try Row.fetchAll(db, sql: recountMembersSQL) {
            try db.execute(
                sql: "UPDATE member SET seen = (SELECT counted_total FROM conversation WHERE id = ?1) - ?2 WHERE conversation_id = ?1 AND member_id = ?3",
                arguments: [row["conversation_id"] as String, row["recount_unread"] as Int, row["member_id"] as String])
        }
    }

    /// Sets a conversation's newest message from its rows.
    private static func refreshLastMessage(of conversationID: String, _ db: Database) throws {
        let last = try Row.fetchOne(
            db, sql: "SELECT sent_at, id FROM message WHERE conversation_id = ? ORDER BY sent_at DESC, id DESC LIMIT 1",
            arguments: [conversationID])
        try db.execute(
            sql: "UPDATE conversation SET last_sent_at = ?, last_message_id = ? WHERE id = ?",
            arguments: [last?[0] as Int64?, last?[1] as String?, conversationID])
    }
}
