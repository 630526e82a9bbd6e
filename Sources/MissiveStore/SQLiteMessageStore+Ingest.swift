import Foundation
import GRDB
import Missive

/// Ingesting: the message rows, the search index, replies and their roots, and the counters, in one transaction per batch.
extension SQLiteMessageStore {
    public func ingest(_ messages: [IncomingMessage]) async throws(StoreError) -> IngestReport {
        let reader = self.reader
        return try await write { db in
            var batch = IngestBatch(
                awaitingRoots: try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM message WHERE root_pending = 1)") ?? false)
            var outcomes: [IngestReport.Outcome] = []
            outcomes.reserveCapacity(messages.count)
            for incoming in messages {
                outcomes.append(try Self.ingest(incoming, into: &batch, db))
            }
            try Self.updateCounters(batch.conversations, reader: reader, db)
            return IngestReport(outcomes: outcomes)
        }
    }

    /// What one ingest transaction gathers as it goes.
    private struct IngestBatch {
        /// Whether some stored reply waits for its thread's root: only then is each new message looked for
        /// among the roots awaited.
        var awaitingRoots: Bool
        /// The changes to each conversation's counters, applied once per conversation at the end.
        var conversations: [String: ConversationChange] = [:]
    }

    /// New messages of one conversation in one transaction.
    private struct ConversationChange {
        var stored = 0
        /// The position (sentAt, id) and sender of each new message that counts.
        var counted: [(position: (Int64, String), sender: String)] = []
        /// The newest new message.
        var newest: (Int64, String)

        init(newest: (Int64, String)) { self.newest = newest }
    }

    private static func ingest(_ incoming: IncomingMessage, into batch: inout IngestBatch, _ db: Database) throws -> IngestReport.Outcome {
        let message = incoming.message
        let envelope = message.envelope
        let persistence = message.persistence
        guard persistence.isStored else { return .notStored(persistence) }
        if let refusal = refusal(of: message) { return .refused(refusal) }
        let counted = persistence == .counted
        let words = indexedWords(message)
        let searchText = SearchText.document(words)
        // Replies are one level deep: a reply to a reply joins the thread of its parent's root. A parent
        // not (yet) stored is taken as the root, pending; when it arrives, its replies move to its own root.
        var rootID: String?
        var rootPending = false
        if let parentID = envelope.parentID {
            if let parent = try Row.fetchOne(db.cachedStatement(sql: "SELECT root_id, root_pending FROM message WHERE id = ?"), arguments: [parentID]) {
                let parentRoot: String? = parent[0]
                rootID = parentRoot ?? parentID
                rootPending = parentRoot != nil && parent[1] as Bool
            } else {
                rootID = parentID
                rootPending = true
            }
        }
        let insert = try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO message(
                    id, conversation_id, sender_id, sent_at, object_name, business_id, known, digest, persistence,
                    counted, words, search_text, parent_id, root_id, root_pending, reason, envelope)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try insert.execute(arguments: [
            envelope.id, envelope.conversationID, envelope.senderID, envelope.sentAt, message.content.objectName,
            message.content.businessID, message.isKnown, message.digest, Int64(persistence.rawValue), counted,
            joinWords(words), searchText, envelope.parentID, rootID, rootPending, message.unknown.map { "\($0.reason)" },
            Data(incoming.envelopeBytes),
        ])
        guard db.changesCount > 0 else { return .duplicate }
        let seq = db.lastInsertedRowID
        // Every row is in the index, words or none: FTS5 counts documents, and its integrity check counts rows.
        try db.cachedStatement(sql: "INSERT INTO message_search(rowid, search_text) VALUES (?, ?)").execute(arguments: [seq, searchText])
        try appendChange(.stored, conversation: envelope.conversationID, message: envelope.id, db)
        if let rootID, !rootPending {
            try db.cachedStatement(sql: "UPDATE message SET reply_count = reply_count + 1 WHERE id = ?").execute(arguments: [rootID])
        }
        // Replies that arrived before this message, waiting for it as their root.
        if batch.awaitingRoots {
            let waiting =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM message WHERE root_id = ? AND root_pending = 1"), arguments: [envelope.id]) ?? 0
            if waiting > 0 {
                try db.execute(
                    sql: "UPDATE message SET root_id = ?, root_pending = ? WHERE root_id = ? AND root_pending = 1",
                    arguments: [rootID ?? envelope.id, rootPending, envelope.id])
                if !rootPending {
                    try db.execute(sql: "UPDATE message SET reply_count = reply_count + ? WHERE id = ?", arguments: [waiting, rootID ?? envelope.id])
                }
            }
        }
        if rootPending { batch.awaitingRoots = true }
        let position = (envelope.sentAt, envelope.id)
        var change = batch.conversations[envelope.conversationID] ?? ConversationChange(newest: position)
        change.stored += 1
        if counted { change.counted.append((position, envelope.senderID)) }
        if position > change.newest { change.newest = position }
        batch.conversations[envelope.conversationID] = change
        return .stored
    }

    /// Why the store cannot keep a message as it is, if it cannot: SQLite's text ends at U+0000.
    static func refusal(of message: Message) -> String? {
        let envelope = message.envelope
        for (name, value) in [
            ("id", envelope.id), ("conversationID", envelope.conversationID), ("senderID", envelope.senderID),
            ("objectName", message.content.objectName), ("parentID", envelope.parentID ?? ""),
        ] where value.utf8.contains(0) {
            return "its \(name) holds U+0000, which the store cannot keep"
        }
        return nil
    }

    /// Applies a transaction's new messages to their conversations' counters, conversation by conversation:
    /// the conversation's totals in one statement, and the members' `seen` counts where the new messages are
    /// already read (their senders, and members whose mark is further, which in-order traffic never has).
    private static func updateCounters(_ changes: [String: ConversationChange], reader: String?, _ db: Database) throws {
        for (conversationID, change) in changes {
            let isNew = try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT NOT EXISTS(SELECT 1 FROM conversation WHERE id = ?)"), arguments: [conversationID]) ?? true
            try db.cachedStatement(
                sql: """
                    INSERT INTO conversation(id, message_count, counted_total, last_sent_at, last_message_id)
                    VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT(id) DO UPDATE SET
                        message_count = message_count + ?2,
                        counted_total = counted_total + ?3,
                        last_sent_at = CASE WHEN last_sent_at IS NULL OR ?4 > last_sent_at
                            OR (?4 = last_sent_at AND ?5 > last_message_id) THEN ?4 ELSE last_sent_at END,
                        last_message_id = CASE WHEN last_sent_at IS NULL OR ?4 > last_sent_at
                            OR (?4 = last_sent_at AND ?5 > last_message_id) THEN ?5 ELSE last_message_id END
                    """
            ).execute(arguments: [conversationID, change.stored, change.counted.count, change.newest.0, change.newest.1])
            // A personal store's reader joins each new conversation with nothing read.
            if isNew, let reader {
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO member(conversation_id, member_id) VALUES (?, ?)")
                    .execute(arguments: [conversationID, reader])
                try appendChange(.joined, conversation: conversationID, member: reader, db)
            }
            guard !change.counted.isEmpty else { continue }
            var bySender: [String: Int] = [:]
            for counted in change.counted { bySender[counted.sender, default: 0] += 1 }
            for (sender, count) in bySender {
                try db.cachedStatement(sql: "UPDATE member SET seen = seen + ? WHERE conversation_id = ? AND member_id = ? AND active = 1")
                    .execute(arguments: [count, conversationID, sender])
            }
            // Messages that arrive behind some member's mark: only then is a member's row touched per message.
            guard let furthest = try furthestMark(of: conversationID, db) else { continue }
            for counted in change.counted where counted.position <= furthest {
                try adjustSeen(conversation: conversationID, position: counted.position, sender: counted.sender, by: 1, includingSender: false, db)
            }
        }
    }

    /// The furthest read mark among the conversation's active members, if any has one.
    static func furthestMark(of conversationID: String, _ db: Database) throws -> (Int64, String)? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT read_sent_at, read_message_id FROM member INDEXED BY member_by_mark
                        WHERE conversation_id = ? AND read_sent_at IS NOT NULL
                        ORDER BY read_sent_at DESC, read_message_id DESC LIMIT 1
                        """),
                arguments: [conversationID]),
            let sentAt = row[0] as Int64?, let id = row[1] as String?
        else { return nil }
        return (sentAt, id)
    }

    /// Adds `delta` to `seen` of the members for whom the counted message at `position` from `sender` is
    /// read: those whose mark is at or after it, and (when `includingSender`) its sender.
    static func adjustSeen(
        conversation conversationID: String, position: (Int64, String), sender: String, by delta: Int, includingSender: Bool, _ db: Database
    ) throws {
        if includingSender {
            try db.cachedStatement(sql: "UPDATE member SET seen = seen + ? WHERE conversation_id = ? AND member_id = ? AND active = 1")
                .execute(arguments: [delta, conversationID, sender])
        }
        try db.cachedStatement(
            sql: """
                UPDATE member SET seen = seen + ?1
                WHERE conversation_id = ?2 AND member_id != ?3 AND active = 1
                    AND (read_sent_at > ?4 OR (read_sent_at = ?4 AND read_message_id >= ?5))
                """
        ).execute(arguments: [delta, conversationID, sender, position.0, position.1])
    }

    /// Appends one entry to the change feed.
    static func appendChange(_ kind: StoreChange.Kind, conversation conversationID: String, message messageID: String? = nil, member memberID: String? = nil, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO change(kind, conversation_id, message_id, member_id) VALUES (?, ?, ?, ?)")
            .execute(arguments: [kind.description, conversationID, messageID, memberID])
    }

    /// The words a message is searched by: its type's searchable words, or for an unknown message the
    /// sender's fallback text (what a host without the type shows), at most ``maxIndexedBytes`` of them.
    static func indexedWords(_ message: Message) -> [String] {
        var words = message.content.searchableWords
        if let unknown = message.unknown, words.isEmpty, let fallback = unknown.fallbackText { words = [fallback] }
        var budget = maxIndexedBytes
        var kept: [String] = []
        for word in words {
            guard budget > 0 else { break }
            if word.utf8.count <= budget {
                kept.append(word)
                budget -= word.utf8.count
            } else {
                // Cut on a character boundary.
                var cut = ""
                for character in word {
                    guard cut.utf8.count + character.utf8.count <= budget else { break }
                    cut.append(character)
                }
                kept.append(cut)
                budget = 0
            }
        }
        return kept
    }

    /// How much of a message's words are indexed and kept: 64 KiB of UTF-8. A sender cannot make one
    /// message cost the index (or a search) more than that.
    public static let maxIndexedBytes = 65_536
}
