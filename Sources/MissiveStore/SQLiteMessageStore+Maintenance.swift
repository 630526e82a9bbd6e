import GRDB
import Missive

/// Deleting, re-decoding with a newer registry, and checking and recounting the counters.
extension SQLiteMessageStore {
    public func delete(messageID: String) async throws(StoreError) {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(MessageColumn.selection), seq, search_text FROM message WHERE id = ?", arguments: [messageID]) else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored")
            }
            let message = Self.storedMessage(row)
            guard message.replyCount == 0 else {
                throw StoreError(
                    .hasReplies,
                    "message '\(messageID)' has \(message.replyCount) \(message.replyCount == 1 ? "reply" : "replies"); delete \(message.replyCount == 1 ? "it" : "them") first")
            }
            let seq: Int64 = row[MessageColumn.end]
            let searchText: String = row[MessageColumn.end + 1]
            try db.execute(sql: "INSERT INTO message_search(message_search, rowid, search_text) VALUES ('delete', ?, ?)", arguments: [seq, searchText])
            try db.execute(sql: "DELETE FROM message WHERE seq = ?", arguments: [seq])
            if let root = message.threadRootID {
                try db.execute(sql: "UPDATE message SET reply_count = reply_count - 1 WHERE id = ?", arguments: [root])
            }
            let unreadChange = try message.countsAsUnread && Self.isAfterReadMark(message, db) ? 1 : 0
            try db.execute(
                sql: "UPDATE conversation SET message_count = message_count - 1, unread = unread - ? WHERE id = ?",
                arguments: [unreadChange, message.conversationID])
            try Self.refreshLastMessage(of: message.conversationID, db)
        }
    }

    public func redecode(with registry: MessageRegistry, progress: (@Sendable (Int, Int) -> Void)?) async throws(StoreError) -> RedecodeReport {
        let owner = self.owner
        return try await write { db in
            let rows = try Row.fetchAll(db, sql: "SELECT \(MessageColumn.selection), seq, search_text FROM message WHERE known = 0 ORDER BY seq")
            var reports: [String: RedecodeReport.TypeReport] = [:]
            for (index, row) in rows.enumerated() {
                defer { progress?(index + 1, rows.count) }
                let stored = Self.storedMessage(row)
                var report = reports[stored.objectName] ?? .init(objectName: stored.objectName, decoded: 0, stillUnknown: 0, reason: nil, unreadChanged: 0)
                defer { reports[stored.objectName] = report }
                // A message that still fails may fail otherwise now (a type that refuses it instead of none),
                // which changes its reason, digest and flag: every column is written again either way.
                let message = registry.decode(try stored.envelope())
                let reason = message.unknown.map { "\($0.reason)" }
                if message.isKnown {
                    report.decoded += 1
                } else {
                    report.stillUnknown += 1
                    report.reason = reason
                }
                let persistence = message.persistence
                let counted = persistence == .counted && stored.senderID != owner
                let words = Self.indexedWords(message)
                let searchText = SearchText.document(words)
                let seq: Int64 = row[MessageColumn.end]
                let oldSearchText: String = row[MessageColumn.end + 1]
                try db.cachedStatement(sql: "INSERT INTO message_search(message_search, rowid, search_text) VALUES ('delete', ?, ?)")
                    .execute(arguments: [seq, oldSearchText])
                try db.cachedStatement(sql: "INSERT INTO message_search(rowid, search_text) VALUES (?, ?)").execute(arguments: [seq, searchText])
                try db.cachedStatement(
                    sql: """
                        UPDATE message SET object_name = ?, business_id = ?, known = ?, digest = ?, persistence = ?, counted = ?,
                            words = ?, search_text = ?, reason = ?
                        WHERE seq = ?
                        """
                ).execute(
                    arguments: [
                        message.content.objectName, message.content.businessID, message.isKnown, message.digest, Int64(persistence.rawValue),
                        counted, Self.joinWords(words), searchText, reason, seq,
                    ])
                if counted != stored.countsAsUnread {
                    report.unreadChanged += 1
                    if try Self.isAfterReadMark(stored, db) {
                        try db.execute(
                            sql: "UPDATE conversation SET unread = unread + ? WHERE id = ?", arguments: [counted ? 1 : -1, stored.conversationID])
                    }
                }
            }
            return RedecodeReport(types: reports.values.sorted { $0.objectName < $1.objectName })
        }
    }

    public func checkConsistency() async throws(StoreError) -> ConsistencyReport {
        let owner = self.owner
        // A write transaction: FTS5's integrity check is written as an INSERT.
        return try await write { db in
            var problems: [String] = []
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            if integrity != ["ok"] { problems += integrity.map { "integrity_check: \($0)" } }
            do {
                try db.execute(sql: "INSERT INTO message_search(message_search, rank) VALUES ('integrity-check', 1)")
            } catch {
                problems.append("the search index does not match the messages: \(Self.reason(error))")
            }
            let wrongFlags = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM message WHERE counted != (persistence = 3 AND sender_id IS NOT ?)", arguments: [owner]) ?? 0
            if wrongFlags > 0 { problems.append("\(wrongFlags) messages have a wrong 'counts as unread' flag") }
            for row in try Row.fetchAll(db, sql: Self.recountSQL) {
                let id: String = row["id"]
                for (name, kept, counted) in [
                    ("unread count", row["unread"] as Int, row["recount_unread"] as Int),
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
            let missing = try String.fetchAll(
                db, sql: "SELECT DISTINCT conversation_id FROM message WHERE conversation_id NOT IN (SELECT id FROM conversation)")
            problems += missing.map { "conversation '\($0)' has messages but no counters" }
            let replies = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, reply_count, (SELECT COUNT(*) FROM message r WHERE r.root_id = m.id) AS recount
                    FROM message m WHERE reply_count != (SELECT COUNT(*) FROM message r WHERE r.root_id = m.id)
                    """)
            problems += replies.map { "message '\($0["id"] as String)': reply count is \($0["reply_count"] as Int), a recount gives \($0["recount"] as Int)" }
            let pending = try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM message r
                    WHERE r.root_pending != (r.root_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM message p WHERE p.id = r.root_id))
                    """) ?? 0
            if pending > 0 { problems.append("\(pending) replies are wrongly marked as waiting, or not waiting, for their thread's root") }
            return ConsistencyReport(problems: problems)
        }
    }

    /// Per conversation: the counters kept and the same counters recounted from the messages.
    private static let recountSQL = """
        SELECT c.id, c.unread, c.message_count, c.last_message_id,
            (SELECT COUNT(*) FROM message m WHERE m.conversation_id = c.id) AS recount_messages,
            (SELECT COUNT(*) FROM message m WHERE m.conversation_id = c.id AND m.counted = 1 AND (c.read_sent_at IS NULL
                OR m.sent_at > c.read_sent_at OR (m.sent_at = c.read_sent_at AND m.id > c.read_message_id))) AS recount_unread,
            (SELECT m.id FROM message m WHERE m.conversation_id = c.id ORDER BY m.sent_at DESC, m.id DESC LIMIT 1) AS recount_last
        FROM conversation c
        """

    /// Sets every message's 'counts as unread' flag for `owner` and recounts every conversation's unread
    /// count: for a store that takes an owner once it has messages.
    static func recount(_ db: Database, owner: String?) throws {
        try db.execute(sql: "UPDATE message SET counted = (persistence = 3 AND sender_id IS NOT ?)", arguments: [owner])
        for row in try Row.fetchAll(db, sql: recountSQL) {
            try db.execute(
                sql: "UPDATE conversation SET unread = ?, message_count = ? WHERE id = ?",
                arguments: [row["recount_unread"] as Int, row["recount_messages"] as Int, row["id"] as String])
            try refreshLastMessage(of: row["id"], db)
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
