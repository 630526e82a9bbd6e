import Missive
import MissiveStore
import NIOCore
import PostgresNIO

/// Ingesting: the message rows with their search vectors, replies and their roots, and the counters, in one
/// transaction per batch, safe when several processes ingest overlapping batches at once.
extension PostgresMessageStore {
    public func ingest(_ messages: [IncomingMessage]) async throws(StoreError) -> IngestReport {
        let reader = self.reader
        // Decided before any row is touched: what is stored at all, and each stored message's search tokens.
        var outcomes = [IngestReport.Outcome?](repeating: nil, count: messages.count)
        var candidates: [Int] = []
        var documents: [String] = []
        var words: [[String]] = []
        for (index, incoming) in messages.enumerated() {
            let message = incoming.message
            if !message.persistence.isStored {
                outcomes[index] = .notStored(message.persistence)
            } else if let refusal = StoreRules.refusal(of: message) {
                outcomes[index] = .refused(refusal)
            } else {
                let indexed = StoreRules.indexedWords(message)
                candidates.append(index)
                words.append(indexed)
                documents.append(SearchQuery.indexedText(of: indexed))
            }
        }
        let tokens: [[String]]
        do {
            tokens = try SearchQuery.indexTokens(of: documents)
        } catch {
            throw StoreError(.database, "cannot tokenize the messages' words: \(error)", path: location)
        }
        var rows: [NewMessage] = []
        for (candidate, index) in candidates.enumerated() {
            rows.append(NewMessage(index: index, incoming: messages[index], words: words[candidate], searchText: documents[candidate], tokens: tokens[candidate]))
        }
        // Rows are touched in the order of their ids, so that two writers with overlapping batches wait for
        // each other rather than deadlock.
        let sorted = rows.enumerated().sorted { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }.map(\.element)
        let prepared = outcomes
        // The parents outside the batch, each in the conversation of its reply (a thread stays in its conversation):
        // when one is not stored, or waits for its own root, the batch stores a reply that waits for a root, and
        // takes the thread lock alone (see `threadLock`).
        struct Key: Hashable { let id: String, conversation: String }
        let parents = Array(
            Set(sorted.compactMap { row in row.parentID.map { Key(id: $0, conversation: row.conversationID) } })
                .subtracting(sorted.map { Key(id: $0.id, conversation: $0.conversationID) }))
        let parentIDs = parents.map(\.id)
        let parentConversations = parents.map(\.conversation)
        return try await transaction { transaction in
            var outcomes = prepared
            var alone = false
            if !parents.isEmpty {
                let settled = try await transaction.query(
                    """
                    SELECT COUNT(*)::bigint FROM message m JOIN unnest(\(parentIDs)::text[], \(parentConversations)::text[]) AS p(id, conversation_id)
                        ON m.id = p.id AND m.conversation_id = p.conversation_id
                    WHERE NOT m.root_pending
                    """)[0].decode(Int.self)
                alone = settled < parents.count
            }
            try await transaction.query(
                alone ? "SELECT pg_advisory_xact_lock(\(Self.threadLock))" : "SELECT pg_advisory_xact_lock_shared(\(Self.threadLock))")
            // After the lock, so that replies waiting since a writer that held it alone are seen.
            var awaitingRoots = try await transaction.query("SELECT EXISTS (SELECT 1 FROM message WHERE root_pending)")[0].decode(Bool.self)
            var conversations: [String: ConversationChange] = [:]
            // The messages that quote none in a few statements; then the replies one by one, in the order of
            // their ids, each finding its parent (which may be one of the first).
            var inserted = try await Self.insertBatch(sorted.filter { $0.parentID == nil }.map(\.statement), transaction)
            if awaitingRoots, !inserted.isEmpty {
                // Replies that arrived before these messages, waiting for them as their roots.
                try await transaction.query(
                    """
                    WITH moved AS (
                        UPDATE message SET root_pending = false
                        WHERE root_pending AND root_id = ANY(\(Array(inserted)))
                            AND conversation_id = (SELECT p.conversation_id FROM message p WHERE p.id = message.root_id)
                        RETURNING root_id
                    )
                    UPDATE message SET reply_count = message.reply_count + waiting.replies
                    FROM (SELECT root_id, COUNT(*) AS replies FROM moved GROUP BY root_id) AS waiting WHERE message.id = waiting.root_id
                    """)
            }
            for row in sorted {
                let stored: Bool
                if row.parentID == nil {
                    // The first of several with the same id is the one stored.
                    stored = inserted.remove(row.id) != nil
                } else {
                    stored = try await Self.insert(row, awaitingRoots: &awaitingRoots, transaction)
                }
                outcomes[row.index] = stored ? .stored : .duplicate
                guard stored else { continue }
                let position = (row.sentAt, row.id)
                var change = conversations[row.conversationID] ?? ConversationChange(newest: position)
                change.stored += 1
                if row.counted { change.counted.append((position, row.senderID)) }
                if position > change.newest { change.newest = position }
                conversations[row.conversationID] = change
            }
            // The feed lists the stored messages in the order given, as SQLite's store does.
            for (index, outcome) in outcomes.enumerated() where outcome == .stored {
                let message = messages[index].message.envelope
                transaction.recordChange(.stored, conversation: message.conversationID, message: message.id)
            }
            try await Self.updateCounters(conversations, reader: reader, transaction)
            return IngestReport(outcomes: outcomes.map { $0 ?? .duplicate })
        }
    }

    /// One message to store, with the columns computed before the transaction.
    struct NewMessage: Sendable {
        let index: Int
        let id: String
        let conversationID: String
        let senderID: String
        let sentAt: Int64
        let parentID: String?
        let counted: Bool
        let statement: InsertMessage

        init(index: Int, incoming: IncomingMessage, words: [String], searchText: String, tokens: [String]) {
            let message = incoming.message
            let envelope = message.envelope
            self.index = index
            id = envelope.id
            conversationID = envelope.conversationID
            senderID = envelope.senderID
            sentAt = envelope.sentAt
            parentID = envelope.parentID
            counted = message.persistence == .counted
            statement = InsertMessage(
                id: envelope.id, conversationID: envelope.conversationID, senderID: envelope.senderID, sentAt: envelope.sentAt,
                objectName: message.content.objectName, businessID: message.content.businessID?.replacingNUL(with: "\u{FFFD}"),
                known: message.isKnown, digest: message.digest.replacingNUL(with: "\u{FFFD}"), persistence: Int(message.persistence.rawValue),
                counted: counted, words: StoreRules.joinWords(words), searchText: searchText.replacingNUL(with: " "),
                search: MessageColumns.vector(tokens), parentID: envelope.parentID, rootID: nil, rootPending: false,
                reason: message.unknown.map { "\($0.reason)".replacingNUL(with: "\u{FFFD}") }, envelope: ByteBuffer(bytes: incoming.envelopeBytes))
        }
    }

    /// New messages of one conversation in one transaction.
    struct ConversationChange {
        var stored = 0
        /// The position (sentAt, id) and sender of each new message that counts.
        var counted: [(position: (Int64, String), sender: String)] = []
        /// The newest new message.
        var newest: (Int64, String)

        init(newest: (Int64, String)) { self.newest = newest }
    }

    /// The advisory lock that keeps a reply waiting for its root and the root's arrival from missing each other
    /// across writers: every ingest holds it shared, and one that stores a reply whose root is not stored (or waits
    /// for its own root) holds it alone, so that it looks the roots up after every other ingest committed, and the
    /// ingests after it find its waiting replies. (One lock per transaction, where a lock per message id would
    /// fill the server's lock table with a large batch.)
    static let threadLock: Int64 = 0x4D69_7373_6976_6532  // "Missive2"

    /// Inserts one message unless its id is stored (then `false`), with its place in a thread.
    ///
    /// A reply to a message not stored yet is kept as waiting for that root; the root, when it arrives, takes
    /// its waiting replies (see ``threadLock``).
    private static func insert(_ row: NewMessage, awaitingRoots: inout Bool, _ transaction: Transaction) async throws -> Bool {
        var statement = row.statement
        if let parentID = row.parentID {
            // A thread stays in its conversation: a parent of another conversation is taken exactly as one not
            // stored, and nothing of that conversation changes.
            if let parent = try await transaction.execute(ParentLookup(id: parentID, conversation: row.conversationID)).first {
                statement.rootID = parent.rootID ?? parentID
                statement.rootPending = parent.rootID != nil && parent.rootPending
            } else {
                statement.rootID = parentID
                statement.rootPending = true
            }
        }
        guard try await transaction.execute(statement).first != nil else { return false }
        if let rootID = statement.rootID, !statement.rootPending {
            try await transaction.query("UPDATE message SET reply_count = reply_count + 1 WHERE id = \(rootID) AND conversation_id = \(row.conversationID)")
        }
        // Replies that arrived before this message, waiting for it as their root.
        if awaitingRoots {
            let newRoot = statement.rootID ?? row.id
            let moved = try await transaction.query(
                """
                UPDATE message SET root_id = \(newRoot), root_pending = \(statement.rootPending)
                WHERE root_id = \(row.id) AND conversation_id = \(row.conversationID) AND root_pending RETURNING 1
                """
            ).count
            if moved > 0, !statement.rootPending {
                try await transaction.query(
                    "UPDATE message SET reply_count = reply_count + \(moved) WHERE id = \(newRoot) AND conversation_id = \(row.conversationID)")
            }
        }
        if statement.rootPending { awaitingRoots = true }
        return true
    }

    /// Inserts messages in statements of up to 1,000 rows, skipping those whose id is stored (and, of several
    /// with one id, all but the first); the ids inserted.
    static func insertBatch(_ rows: [InsertMessage], _ transaction: Transaction) async throws -> Set<String> {
        var inserted: Set<String> = []
        var start = rows.startIndex
        while start < rows.endIndex {
            let chunk = rows[start..<min(start + 1_000, rows.endIndex)]
            start = chunk.endIndex
            let query: PostgresQuery = """
                INSERT INTO message (
                    id, conversation_id, sender_id, sent_at, object_name, business_id, known, digest, persistence, counted,
                    words, search_text, search, parent_id, root_id, root_pending, reason, envelope)
                SELECT r.id, r.conversation_id, r.sender_id, r.sent_at, r.object_name, CASE WHEN r.has_business_id THEN r.business_id END,
                    r.known, r.digest, r.persistence, r.counted, r.words, r.search_text, r.search::tsvector,
                    CASE WHEN r.has_parent_id THEN r.parent_id END, CASE WHEN r.has_root_id THEN r.root_id END, r.root_pending,
                    CASE WHEN r.has_reason THEN r.reason END, r.envelope
                FROM unnest(
                    \(chunk.map(\.id))::text[], \(chunk.map(\.conversationID))::text[], \(chunk.map(\.senderID))::text[],
                    \(chunk.map(\.sentAt))::int8[], \(chunk.map(\.objectName))::text[], \(chunk.map { $0.businessID ?? "" })::text[],
                    \(chunk.map { $0.businessID != nil })::bool[], \(chunk.map(\.known))::bool[], \(chunk.map(\.digest))::text[],
                    \(chunk.map { Int64($0.persistence) })::int8[], \(chunk.map(\.counted))::bool[], \(chunk.map(\.words))::text[],
                    \(chunk.map(\.searchText))::text[], \(chunk.map(\.search))::text[], \(chunk.map { $0.parentID ?? "" })::text[],
                    \(chunk.map { $0.parentID != nil })::bool[], \(chunk.map { $0.rootID ?? "" })::text[], \(chunk.map { $0.rootID != nil })::bool[],
                    \(chunk.map(\.rootPending))::bool[], \(chunk.map { $0.reason ?? "" })::text[], \(chunk.map { $0.reason != nil })::bool[],
                    \(chunk.map(\.envelope))::bytea[]
                ) WITH ORDINALITY AS r(
                    id, conversation_id, sender_id, sent_at, object_name, business_id, has_business_id, known, digest, persistence, counted,
                    words, search_text, search, parent_id, has_parent_id, root_id, has_root_id, root_pending, reason, has_reason, envelope, n)
                ORDER BY r.n
                ON CONFLICT (id) DO NOTHING
                RETURNING id
                """
            for row in try await transaction.query(query) { inserted.insert(try row.decode(String.self)) }
        }
        return inserted
    }

    /// Applies a transaction's new messages to their conversations' counters in a few statements, whatever the
    /// number of conversations: the totals in one upsert (which locks the conversations' rows until the commit, in
    /// the order of their ids, so that writers never deadlock on them), a personal store's reader as a member of
    /// each new conversation, the senders' `seen` counts, and the members whose mark is already past a new message
    /// (which in-order traffic never has: one query finds the furthest mark of every conversation).
    private static func updateCounters(_ changes: [String: ConversationChange], reader: String?, _ transaction: Transaction) async throws {
        guard !changes.isEmpty else { return }
        let ids = changes.keys.sorted()
        let entries = ids.map { changes[$0]! }
        var created: [String] = []
        for row in try await transaction.query(
            """
            INSERT INTO conversation AS c (id, message_count, counted_total, last_sent_at, last_message_id)
            SELECT d.id, d.stored, d.counted, d.sent_at, d.message_id
            FROM unnest(\(ids)::text[], \(entries.map { Int64($0.stored) })::int8[], \(entries.map { Int64($0.counted.count) })::int8[],
                \(entries.map(\.newest.0))::int8[], \(entries.map(\.newest.1))::text[]) WITH ORDINALITY AS d(id, stored, counted, sent_at, message_id, n)
            ORDER BY d.n
            ON CONFLICT (id) DO UPDATE SET
                message_count = c.message_count + excluded.message_count,
                counted_total = c.counted_total + excluded.counted_total,
                last_sent_at = CASE WHEN c.last_sent_at IS NULL OR (excluded.last_sent_at, excluded.last_message_id) > (c.last_sent_at, c.last_message_id)
                    THEN excluded.last_sent_at ELSE c.last_sent_at END,
                last_message_id = CASE WHEN c.last_sent_at IS NULL OR (excluded.last_sent_at, excluded.last_message_id) > (c.last_sent_at, c.last_message_id)
                    THEN excluded.last_message_id ELSE c.last_message_id END
            RETURNING c.id, xmax = 0
            """)
        {
            let (id, isNew) = try row.decode((String, Bool).self)
            if isNew { created.append(id) }
        }
        // A personal store's reader joins each new conversation with nothing read.
        if let reader, !created.isEmpty {
            created.sort()
            try await transaction.query(
                """
                INSERT INTO member(conversation_id, member_id) SELECT c, \(reader) FROM unnest(\(created)::text[]) AS c
                ON CONFLICT DO NOTHING
                """)
            for id in created { transaction.recordChange(.joined, conversation: id, member: reader) }
        }
        // The senders' own counted messages are read for them.
        var senders: [(conversation: String, sender: String, count: Int64)] = []
        for (id, change) in zip(ids, entries) where !change.counted.isEmpty {
            var bySender: [String: Int64] = [:]
            for counted in change.counted { bySender[counted.sender, default: 0] += 1 }
            for sender in bySender.keys.sorted() { senders.append((id, sender, bySender[sender]!)) }
        }
        guard !senders.isEmpty else { return }
        try await transaction.query(
            """
            UPDATE member AS m SET seen = m.seen + d.n
            FROM unnest(\(senders.map(\.conversation))::text[], \(senders.map(\.sender))::text[], \(senders.map(\.count))::int8[]) AS d(c, s, n)
            WHERE m.conversation_id = d.c AND m.member_id = d.s AND m.active
            """)
        // Messages that arrive behind some member's mark: only then is a member's row touched per message.
        let counting = ids.filter { !changes[$0]!.counted.isEmpty }
        var furthest: [String: (Int64, String)] = [:]
        for row in try await transaction.query(
            """
            SELECT DISTINCT ON (conversation_id) conversation_id, read_sent_at, read_message_id FROM member
            WHERE conversation_id = ANY(\(counting)) AND read_sent_at IS NOT NULL
            ORDER BY conversation_id, read_sent_at DESC, read_message_id DESC
            """)
        {
            let (id, sentAt, messageID) = try row.decode((String, Int64, String).self)
            furthest[id] = (sentAt, messageID)
        }
        for id in counting {
            guard let mark = furthest[id] else { continue }
            for counted in changes[id]!.counted where counted.position <= mark {
                try await adjustSeen(conversation: id, position: counted.position, sender: counted.sender, by: 1, includingSender: false, transaction)
            }
        }
    }

    /// Adds `delta` to `seen` of the members for whom the counted message at `position` from `sender` is read:
    /// those whose mark is at or after it, and (when `includingSender`) its sender.
    static func adjustSeen(
        conversation conversationID: String, position: (Int64, String), sender: String, by delta: Int, includingSender: Bool,
        _ transaction: Transaction
    ) async throws {
        if includingSender {
            try await transaction.query(
                "UPDATE member SET seen = seen + \(delta) WHERE conversation_id = \(conversationID) AND member_id = \(sender) AND active")
        }
        try await transaction.query(
            """
            UPDATE member SET seen = seen + \(delta)
            WHERE conversation_id = \(conversationID) AND member_id <> \(sender) AND active
                AND (read_sent_at, read_message_id) >= (\(position.0), \(position.1))
            """)
    }
}

/// Inserts one message, unless its id is stored; returns its `seq` when it was inserted.
struct InsertMessage: PostgresPreparedStatement {
    static let sql = """
        INSERT INTO message (
            id, conversation_id, sender_id, sent_at, object_name, business_id, known, digest, persistence, counted,
            words, search_text, search, parent_id, root_id, root_pending, reason, envelope)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::tsvector, $14, $15, $16, $17, $18)
        ON CONFLICT (id) DO NOTHING
        RETURNING seq
        """
    static let bindingDataTypes: [PostgresDataType] = [
        .text, .text, .text, .int8, .text, .text, .bool, .text, .int8, .bool, .text, .text, .text, .text, .text, .bool, .text, .bytea,
    ]
    typealias Row = Int64

    var id: String
    var conversationID: String
    var senderID: String
    var sentAt: Int64
    var objectName: String
    var businessID: String?
    var known: Bool
    var digest: String
    var persistence: Int
    var counted: Bool
    var words: String
    var searchText: String
    var search: String
    var parentID: String?
    var rootID: String?
    var rootPending: Bool
    var reason: String?
    var envelope: ByteBuffer

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 18)
        bindings.append(id)
        bindings.append(conversationID)
        bindings.append(senderID)
        bindings.append(sentAt)
        bindings.append(objectName)
        bindings.append(businessID)
        bindings.append(known)
        bindings.append(digest)
        bindings.append(Int64(persistence))
        bindings.append(counted)
        bindings.append(words)
        bindings.append(searchText)
        bindings.append(search)
        bindings.append(parentID)
        bindings.append(rootID)
        bindings.append(rootPending)
        bindings.append(reason)
        bindings.append(envelope)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int64 {
        try row.decode(Int64.self)
    }
}

/// A reply's parent, if stored in the reply's conversation: its thread root and whether that root is stored.
struct ParentLookup: PostgresPreparedStatement {
    static let sql = "SELECT root_id, root_pending FROM message WHERE id = $1 AND conversation_id = $2"
    static let bindingDataTypes: [PostgresDataType] = [.text, .text]
    typealias Row = (rootID: String?, rootPending: Bool)

    var id: String
    var conversation: String

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(id)
        bindings.append(conversation)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (rootID, rootPending) = try row.decode((String?, Bool).self)
        return (rootID, rootPending)
    }
}
