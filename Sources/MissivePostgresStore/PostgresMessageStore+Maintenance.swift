import Missive
import MissiveStore
import NIOCore
import PostgresNIO

/// Deleting, replacing, re-decoding with a newer registry, and checking and recounting the counters.
extension PostgresMessageStore {
    public func delete(messageID: String) async throws(StoreError) {
        let reader = self.reader
        try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT \(unescaped: MessageColumns.selection) FROM message WHERE id = \(messageID) FOR UPDATE"
                ).first
            else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored")
            }
            let message = try MessageColumns.storedMessage(row, reader: reader)
            guard message.replyCount == 0 else {
                let one = message.replyCount == 1
                throw StoreError(
                    .hasReplies, "message '\(messageID)' has \(message.replyCount) \(one ? "reply" : "replies"); delete \(one ? "it" : "them") first")
            }
            let counted = message.persistence == .counted
            // The conversation's row first, as every call that changes its counters locks it.
            try await transaction.query(
                """
                UPDATE conversation SET message_count = message_count - 1, counted_total = counted_total - \(counted ? 1 : 0)
                WHERE id = \(message.conversationID)
                """)
            try await transaction.query("DELETE FROM message WHERE id = \(messageID)")
            if let root = message.threadRootID {
                // A reply counts for its root in its own conversation only (one still waiting for its root counts for none).
                try await transaction.query(
                    "UPDATE message SET reply_count = reply_count - 1 WHERE id = \(root) AND conversation_id = \(message.conversationID)")
            }
            if counted {
                try await Self.adjustSeen(
                    conversation: message.conversationID, position: (message.sentAt, message.id), sender: message.senderID, by: -1,
                    includingSender: true, transaction)
            }
            try await Self.refreshLastMessage(of: message.conversationID, transaction)
            transaction.recordChange(.deleted, conversation: message.conversationID, message: message.id)
        }
    }

    @discardableResult
    public func replace(_ incoming: IncomingMessage) async throws(StoreError) -> StoredMessage {
        let reader = self.reader
        let rewrite = try Rewrite(incoming, location: location)
        return try await transaction { transaction in
            let stored = try await Self.lockedMessage(incoming.message.envelope.id, reader: reader, transaction)
            return try await Self.replace(stored, with: incoming.message, as: rewrite, reader: reader, transaction)
        }
    }

    /// Reads, transforms and replaces the message in one transaction, the message's row locked `FOR UPDATE` from
    /// the read on: a writer on another connection (of this process or another) waits for the commit, then reads
    /// the new version. The transform runs with the row locked; the transaction is retried when the database asks,
    /// and the transform with it.
    @discardableResult
    public func replace(messageID: String, with transform: @escaping @Sendable (StoredMessage) throws -> IncomingMessage) async throws -> StoredMessage {
        let reader = self.reader
        let location = self.location
        // The transform's own error leaves the transaction (which has written nothing) as a value, and is thrown as it is.
        let outcome: Result<StoredMessage, any Error> = try await transaction { transaction in
            let stored = try await Self.lockedMessage(messageID, reader: reader, transaction)
            let incoming: IncomingMessage
            do {
                incoming = try transform(stored)
            } catch {
                return .failure(error)
            }
            if let conflict = StoreRules.idConflict(replacing: stored, with: incoming.message) { throw conflict }
            let rewrite = try Rewrite(incoming, location: location)
            return .success(try await Self.replace(stored, with: incoming.message, as: rewrite, reader: reader, transaction))
        }
        return try outcome.get()
    }

    /// The stored message `id`, its row locked until the transaction ends.
    private static func lockedMessage(_ id: String, reader: String?, _ transaction: Transaction) async throws -> StoredMessage {
        guard let row = try await transaction.query("SELECT \(unescaped: MessageColumns.selection) FROM message WHERE id = \(id) FOR UPDATE").first else {
            throw StoreError(.notFound, "message '\(id)' is not stored")
        }
        return try MessageColumns.storedMessage(row, reader: reader)
    }

    /// Writes `message` as the new version of `stored` (locked), records the edit, and returns the row as stored.
    private static func replace(
        _ stored: StoredMessage, with message: Message, as columns: Rewrite, reader: String?, _ transaction: Transaction
    ) async throws -> StoredMessage {
        if let conflict = StoreRules.editConflict(replacing: stored, with: message) { throw conflict }
        try await Self.rewrite(stored, as: columns, transaction)
        transaction.recordChange(.edited, conversation: stored.conversationID, message: stored.id)
        guard let updated = try await transaction.query("SELECT \(unescaped: MessageColumns.selection) FROM message WHERE id = \(stored.id)").first else {
            throw StoreError(.database, "message '\(stored.id)' vanished while it was replaced")
        }
        return try MessageColumns.storedMessage(updated, reader: reader)
    }

    /// A message's new columns, computed before the transaction.
    struct Rewrite: Sendable {
        let objectName: String
        let businessID: String?
        let known: Bool
        let digest: String
        let persistence: Persistence
        let words: String
        let searchText: String
        let vector: String
        let reason: String?
        /// The new envelope for an edit; `nil` keeps the stored one (a re-decode).
        let envelope: [UInt8]?

        /// The columns of an edit to `incoming`, its words tokenized.
        init(_ incoming: IncomingMessage, location: String) throws(StoreError) {
            let words = StoreRules.indexedWords(incoming.message)
            let searchText = SearchQuery.indexedText(of: words)
            let vector: String
            do {
                vector = MessageColumns.vector(try SearchQuery.indexTokens(of: [searchText])[0])
            } catch {
                throw StoreError(.database, "cannot tokenize the message's words: \(error)", path: location)
            }
            self.init(message: incoming.message, words: words, searchText: searchText, vector: vector, envelope: incoming.envelopeBytes)
        }

        init(message: Message, words: [String], searchText: String, vector: String, envelope: [UInt8]?) {
            objectName = message.content.objectName
            businessID = message.content.businessID?.replacingNUL(with: "\u{FFFD}")
            known = message.isKnown
            digest = message.digest.replacingNUL(with: "\u{FFFD}")
            persistence = message.persistence
            self.words = StoreRules.joinWords(words)
            self.searchText = searchText.replacingNUL(with: " ")
            self.vector = vector
            reason = message.unknown.map { "\($0.reason)".replacingNUL(with: "\u{FFFD}") }
            self.envelope = envelope
        }
    }

    /// Writes a stored message's decoded columns (and, for an edit, its envelope), with its search vector and,
    /// when whether it counts changes, the counters.
    static func rewrite(_ stored: StoredMessage, as new: Rewrite, _ transaction: Transaction) async throws {
        let counted = new.persistence == .counted
        let wasCounted = stored.persistence == .counted
        if counted != wasCounted {
            try await transaction.query(
                "UPDATE conversation SET counted_total = counted_total + \(counted ? 1 : -1) WHERE id = \(stored.conversationID)")
        }
        try await transaction.query(
            """
            UPDATE message SET object_name = \(new.objectName), business_id = \(new.businessID), known = \(new.known), digest = \(new.digest),
                persistence = \(Int64(new.persistence.rawValue)), counted = \(counted), words = \(new.words), search_text = \(new.searchText),
                search = \(new.vector)::tsvector, reason = \(new.reason),
                envelope = COALESCE(\(new.envelope.map { ByteBuffer(bytes: $0) }), envelope)
            WHERE id = \(stored.id)
            """)
        if counted != wasCounted {
            try await adjustSeen(
                conversation: stored.conversationID, position: (stored.sentAt, stored.id), sender: stored.senderID, by: counted ? 1 : -1,
                includingSender: true, transaction)
        }
    }

    public func redecode(with registry: MessageRegistry, progress: (@Sendable (Int, Int) -> Void)?) async throws(StoreError) -> RedecodeReport {
        let reader = self.reader
        // Read, then decoded with no transaction open (`Redecoding`), then rewritten in one that locks the rows.
        let unknown = try await read { transaction in
            try await transaction.query("SELECT \(unescaped: MessageColumns.selection) FROM message WHERE NOT known ORDER BY seq")
                .map { try MessageColumns.storedMessage($0, reader: reader) }
        }
        let decoding = try await Redecoding.decode(unknown, with: registry, reader: reader, progress: progress)
        return try await transaction { transaction in
            var redecoding = decoding
            let rows = try await transaction.query(
                "SELECT \(unescaped: MessageColumns.selection) FROM message WHERE NOT known ORDER BY seq FOR UPDATE")
            // Only the messages still as they were decoded.
            var stored: [StoredMessage] = []
            var decoded: [Message] = []
            for row in rows {
                let current = try MessageColumns.storedMessage(row, reader: reader)
                guard let message = redecoding.message(for: current) else { continue }
                stored.append(current)
                decoded.append(message)
            }
            // Tokenized before the rows are written: one call to the tokenizer for them all.
            let words = decoded.map(StoreRules.indexedWords)
            let texts = words.map(SearchQuery.indexedText(of:))
            let tokens = try SearchQuery.indexTokens(of: texts)
            var changed = [Bool](repeating: false, count: stored.count)
            // Counters change conversation by conversation, in the order of their ids (as ingest locks them).
            let order = stored.indices.sorted { (stored[$0].conversationID, $0) < (stored[$1].conversationID, $1) }
            for index in order {
                changed[index] = redecoding.record(stored[index], as: decoded[index])
                let rewrite = Rewrite(
                    message: decoded[index], words: words[index], searchText: texts[index], vector: MessageColumns.vector(tokens[index]), envelope: nil)
                try await Self.rewrite(stored[index], as: rewrite, transaction)
            }
            // The feed lists the edits in the order the messages were stored, as SQLite's store does.
            for (index, old) in stored.enumerated() where changed[index] {
                transaction.recordChange(.edited, conversation: old.conversationID, message: old.id)
            }
            return redecoding.report
        }
    }

    public func checkConsistency() async throws(StoreError) -> ConsistencyReport {
        try await transaction { transaction in
            // One snapshot for every recount.
            try await transaction.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            var problems: [String] = []
            let wrongFlags = try await transaction.query("SELECT COUNT(*)::bigint FROM message WHERE counted <> (persistence = 3)")[0]
                .decode(Int.self)
            if wrongFlags > 0 { problems.append("\(wrongFlags) messages have a wrong 'counted' flag") }
            for row in try await transaction.query(PostgresQuery(unsafeSQL: Self.recountConversationsSQL)) {
                let (id, countedTotal, messageCount, last, recountMessages, recountCounted, recountLast) = try row.decode(
                    (String, Int, Int, String?, Int, Int, String?).self)
                for (name, kept, counted) in [("counted message total", countedTotal, recountCounted), ("message count", messageCount, recountMessages)]
                where kept != counted {
                    problems.append("conversation '\(id)': \(name) is \(kept), a recount gives \(counted)")
                }
                if last != recountLast {
                    problems.append("conversation '\(id)': newest message is \(last ?? "none"), a recount gives \(recountLast ?? "none")")
                }
            }
            for row in try await transaction.query(PostgresQuery(unsafeSQL: Self.recountMembersSQL)) {
                let (conversationID, memberID, unread, recount) = try row.decode((String, String, Int, Int).self)
                if unread != recount {
                    problems.append(
                        "conversation '\(conversationID)', member '\(memberID)': unread count is \(unread), a recount gives \(recount)")
                }
            }
            for row in try await transaction.query(
                "SELECT DISTINCT conversation_id FROM message WHERE conversation_id NOT IN (SELECT id FROM conversation) ORDER BY 1")
            {
                problems.append("conversation '\(try row.decode(String.self))' has messages but no counters")
            }
            for row in try await transaction.query(
                """
                SELECT m.id, m.reply_count,
                    (SELECT COUNT(*) FROM message r WHERE r.root_id = m.id AND r.conversation_id = m.conversation_id)::bigint AS recount
                FROM message m
                WHERE m.reply_count <> (SELECT COUNT(*) FROM message r WHERE r.root_id = m.id AND r.conversation_id = m.conversation_id)
                ORDER BY m.id
                """)
            {
                let (id, kept, recount) = try row.decode((String, Int, Int).self)
                problems.append("message '\(id)': reply count is \(kept), a recount gives \(recount)")
            }
            let pending = try await transaction.query(
                """
                SELECT COUNT(*)::bigint FROM message r
                WHERE r.root_pending <> (r.root_id IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM message p WHERE p.id = r.root_id AND p.conversation_id = r.conversation_id))
                """
            )[0].decode(Int.self)
            if pending > 0 { problems.append("\(pending) replies are wrongly marked as waiting, or not waiting, for their thread's root") }
            return ConsistencyReport(problems: problems)
        }
    }

    /// Per conversation: the counters kept and the same counters recounted from the messages.
    static let recountConversationsSQL = """
        SELECT c.id, c.counted_total, c.message_count, c.last_message_id,
            (SELECT COUNT(*) FROM message m WHERE m.conversation_id = c.id)::bigint AS recount_messages,
            (SELECT COUNT(*) FROM message m WHERE m.conversation_id = c.id AND m.counted)::bigint AS recount_counted,
            (SELECT m.id FROM message m WHERE m.conversation_id = c.id ORDER BY m.sent_at DESC, m.id DESC LIMIT 1) AS recount_last
        FROM conversation c ORDER BY c.id
        """

    /// Per active member: its unread count as the counters give it, and recounted from the messages.
    static let recountMembersSQL = """
        SELECT mb.conversation_id, mb.member_id, c.counted_total - mb.seen AS unread,
            (SELECT COUNT(*) FROM message m WHERE m.conversation_id = mb.conversation_id AND m.counted
                AND m.sender_id <> mb.member_id AND (mb.read_sent_at IS NULL
                OR (m.sent_at, m.id) > (mb.read_sent_at, mb.read_message_id)))::bigint AS recount_unread
        FROM member mb JOIN conversation c ON c.id = mb.conversation_id
        WHERE mb.active ORDER BY mb.conversation_id, mb.member_id
        """

    /// Recounts every conversation's totals and newest message, and every active member's `seen`, from the
    /// messages and the read marks: for a store that takes an owner once it has messages.
    static func recount(_ transaction: Transaction) async throws {
        try await transaction.query("UPDATE message SET counted = (persistence = 3) WHERE counted <> (persistence = 3)")
        try await transaction.query(
            """
            UPDATE conversation c SET
                message_count = (SELECT COUNT(*) FROM message m WHERE m.conversation_id = c.id),
                counted_total = (SELECT COUNT(*) FROM message m WHERE m.conversation_id = c.id AND m.counted),
                last_sent_at = (SELECT m.sent_at FROM message m WHERE m.conversation_id = c.id ORDER BY m.sent_at DESC, m.id DESC LIMIT 1),
                last_message_id = (SELECT m.id FROM message m WHERE m.conversation_id = c.id ORDER BY m.sent_at DESC, m.id DESC LIMIT 1)
            """)
        try await transaction.query(
            """
            UPDATE member mb SET seen = c.counted_total - (SELECT COUNT(*) FROM message m WHERE m.conversation_id = mb.conversation_id
                AND m.counted AND m.sender_id <> mb.member_id
                AND (mb.read_sent_at IS NULL OR (m.sent_at, m.id) > (mb.read_sent_at, mb.read_message_id)))
            FROM conversation c WHERE c.id = mb.conversation_id AND mb.active
            """)
    }

    /// Sets a conversation's newest message from its rows.
    static func refreshLastMessage(of conversationID: String, _ transaction: Transaction) async throws {
        try await transaction.query(
            """
            UPDATE conversation c SET (last_sent_at, last_message_id) = (
                SELECT m.sent_at, m.id FROM message m WHERE m.conversation_id = c.id ORDER BY m.sent_at DESC, m.id DESC LIMIT 1)
            WHERE c.id = \(conversationID)
            """)
    }
}
