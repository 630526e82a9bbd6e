import Foundation
import GRDB
import Missive

/// Ingesting: the message rows, the search index, replies and their roots, and the counters, in one transaction per batch.
///
/// Ingest is the store's hot path: several statements per message (the row, its search entry, its change-feed
/// entry, the conversation's counters). They are prepared once per batch and bound through SQLite's C API
/// (`IngestStatements`), and the search entries and feed entries of a batch go in as multi-row `INSERT`s.
extension SQLiteMessageStore {
    public func ingest(_ messages: [IncomingMessage]) async throws(StoreError) -> IngestReport {
        let reader = self.reader
        return try await write { db in
            let statements = try IngestStatements(db)
            var batch = IngestBatch(
                awaitingRoots: try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM message WHERE root_pending = 1)") ?? false)
            batch.stored.reserveCapacity(messages.count)
            var outcomes: [IngestReport.Outcome] = []
            outcomes.reserveCapacity(messages.count)
            for incoming in messages {
                outcomes.append(try Self.ingest(incoming, into: &batch, statements))
            }
            // Nothing in the batch reads the search index or the feed: their entries go in together, in the
            // order the messages were stored.
            try statements.insertSearchEntries(batch.stored)
            try statements.appendStoredChanges(batch.stored)
            try Self.updateCounters(batch, reader: reader, statements)
            return IngestReport(outcomes: outcomes)
        }
    }

    /// What one ingest transaction gathers as it goes.
    private struct IngestBatch {
        /// Whether some stored reply waits for its thread's root: only then is each new message looked for
        /// among the roots awaited.
        var awaitingRoots: Bool
        /// The messages stored, in order: their search entries and feed entries are written at the end.
        var stored: [StoredRow] = []
        /// The changes to each conversation's counters, applied once per conversation at the end.
        var conversations: [String: ConversationChange] = [:]
        /// The conversations of ``conversations`` in the order their first message came.
        var conversationOrder: [String] = []
    }

    /// A message stored by the batch, for its search entry and its feed entry.
    struct StoredRow {
        let seq: Int64
        let id: String
        let conversationID: String
        let searchText: String
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

    private static func ingest(_ incoming: IncomingMessage, into batch: inout IngestBatch, _ statements: IngestStatements) throws -> IngestReport.Outcome {
        let message = incoming.message
        let envelope = message.envelope
        let persistence = message.persistence
        guard persistence.isStored else { return .notStored(persistence) }
        if let refusal = StoreRules.refusal(of: message) { return .refused(refusal) }
        let counted = persistence == .counted
        let words = StoreRules.indexedWords(message)
        let searchText = SearchText.document(words)
        // Replies are one level deep: a reply to a reply joins the thread of its parent's root. A parent
        // not (yet) stored is taken as the root, pending; when it arrives, its replies move to its own root.
        // (A parent stored earlier in the same batch is found: its row is already written.) A thread stays in its
        // conversation: a parent of another conversation is taken exactly as one not stored, and nothing of that
        // conversation changes.
        var rootID: String?
        var rootPending = false
        if let parentID = envelope.parentID {
            if let parent = try statements.parent(of: parentID, in: envelope.conversationID) {
                rootID = parent.rootID ?? parentID
                rootPending = parent.rootID != nil && parent.rootPending
            } else {
                rootID = parentID
                rootPending = true
            }
        }
        guard
            let seq = try statements.insertMessage(
                incoming, envelope: envelope, counted: counted, words: StoreRules.joinWords(words), searchText: searchText, rootID: rootID,
                rootPending: rootPending)
        else { return .duplicate }
        // Every row is in the index, words or none: FTS5 counts documents, and its integrity check counts rows.
        batch.stored.append(StoredRow(seq: seq, id: envelope.id, conversationID: envelope.conversationID, searchText: searchText))
        if let rootID, !rootPending {
            try statements.addReplies(1, to: rootID, in: envelope.conversationID)
        }
        // Replies that arrived before this message, waiting for it as their root.
        if batch.awaitingRoots {
            let waiting = try statements.waitingReplies(for: envelope.id, in: envelope.conversationID)
            if waiting > 0 {
                try statements.adoptReplies(of: envelope.id, in: envelope.conversationID, root: rootID ?? envelope.id, pending: rootPending)
                if !rootPending {
                    try statements.addReplies(waiting, to: rootID ?? envelope.id, in: envelope.conversationID)
                }
            }
        }
        if rootPending { batch.awaitingRoots = true }
        let position = (envelope.sentAt, envelope.id)
        if var change = batch.conversations[envelope.conversationID] {
            change.stored += 1
            if counted { change.counted.append((position, envelope.senderID)) }
            if position > change.newest { change.newest = position }
            batch.conversations[envelope.conversationID] = change
        } else {
            var change = ConversationChange(newest: position)
            change.stored = 1
            if counted { change.counted.append((position, envelope.senderID)) }
            batch.conversations[envelope.conversationID] = change
            batch.conversationOrder.append(envelope.conversationID)
        }
        return .stored
    }

    /// Applies a transaction's new messages to their conversations' counters, conversation by conversation:
    /// the conversation's totals in one statement, and the members' `seen` counts where the new messages are
    /// already read (their senders, and members whose mark is further, which in-order traffic never has).
    private static func updateCounters(_ batch: IngestBatch, reader: String?, _ statements: IngestStatements) throws {
        for conversationID in batch.conversationOrder {
            guard let change = batch.conversations[conversationID] else { continue }
            // Only a personal store asks whether the conversation is new (its reader joins each new one), and
            // only counted messages need the furthest read mark; one statement reads both. (Neither the reader's
            // join, with no mark, nor the senders' `seen` below moves a mark.)
            let state = try statements.conversationState(conversationID, existence: reader != nil, furthestMark: !change.counted.isEmpty)
            let isNew = reader != nil && !state.exists
            try statements.addToConversation(conversationID, stored: change.stored, counted: change.counted.count, newest: change.newest)
            // A personal store's reader joins each new conversation with nothing read.
            if isNew, let reader {
                try statements.joinWithNothingRead(reader, conversationID)
            }
            guard !change.counted.isEmpty else { continue }
            if change.counted.count == 1 {
                try statements.addSeen(1, sender: change.counted[0].sender, conversationID)
            } else {
                var bySender: [String: Int] = [:]
                for counted in change.counted { bySender[counted.sender, default: 0] += 1 }
                for (sender, count) in bySender {
                    try statements.addSeen(count, sender: sender, conversationID)
                }
            }
            // Messages that arrive behind some member's mark: only then is a member's row touched per message.
            guard let furthest = state.furthestMark else { continue }
            for counted in change.counted where counted.position <= furthest {
                try statements.addSeenBehind(1, position: counted.position, sender: counted.sender, conversationID)
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

    /// How much of a message's words are indexed and kept: 64 KiB of UTF-8. A sender cannot make one
    /// message cost the index (or a search) more than that.
    public static let maxIndexedBytes = 65_536
}
