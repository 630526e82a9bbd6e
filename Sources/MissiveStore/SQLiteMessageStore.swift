import Foundation
import GRDB
import Missive

/// A ``MessageStore`` in one SQLite file, through GRDB, for a host that runs no server.
///
/// The file is in WAL mode with `synchronous=NORMAL`: a transaction that has committed survives the
/// process being killed at any point, and readers never wait for a writer. (A power loss may lose the
/// last transactions, never the file.) Every method is safe to call from any thread; writes are
/// serialized, reads run concurrently.
///
/// Schema: a `message` table (the envelope as a blob and the decoded columns), a `conversation` table of
/// counters (unread count, message count, newest message, read mark), and an FTS5 index over the
/// searchable words (see ``SearchQuery``).
public final class SQLiteMessageStore: MessageStore {
    /// The database file.
    public let path: String
    /// The account whose own messages never count as unread, as the store remembers it.
    public let owner: String?
    private let pool: DatabasePool

    /// Opens the store at `path`, creating it (but not its folder) if it does not exist, and bringing an
    /// older schema up to date.
    ///
    /// - Parameters:
    ///   - path: the SQLite file.
    ///   - owner: the account whose messages never count as unread. A store remembers its owner: `nil`
    ///     keeps the one it has; a store without one takes this one (and recounts). Naming another owner
    ///     than the store's is refused.
    /// - Throws: ``StoreError/Code/cannotOpen`` with SQLite's reason; ``StoreError/Code/ownerMismatch``.
    public init(path: String, owner: String? = nil) throws(StoreError) {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try db.execute(sql: Self.connectionSettings) }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try StoreSchema.migrator.migrate(pool)
        } catch {
            throw StoreError(.cannotOpen, "cannot open the store: \(Self.reason(error))", path: path)
        }
        let stored: String?
        do {
            stored = try pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = 'owner'") }
        } catch {
            throw StoreError(.cannotOpen, "cannot read the store: \(Self.reason(error))", path: path)
        }
        switch (stored, owner) {
        case (let stored?, let owner?) where stored != owner:
            throw StoreError(.ownerMismatch, "the store belongs to '\(stored)', not '\(owner)'", path: path)
        case (nil, let owner?):
            self.owner = owner
            try writeNow { db in
                try db.execute(sql: "INSERT INTO store_info(key, value) VALUES ('owner', ?)", arguments: [owner])
                try Self.recount(db, owner: owner)
            }
        default:
            self.owner = stored
        }
    }

    /// What every connection sets: WAL's usual durability, a page cache of 32 MiB and memory-mapped reads of
    /// up to 256 MiB (fewer system calls for the search index and the counters' pages).
    public static let connectionSettings = "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -32768; PRAGMA mmap_size = 268435456"

    // MARK: Ingest

    public func ingest(_ messages: [IncomingMessage]) async throws(StoreError) -> IngestReport {
        let owner = self.owner
        return try await write { db in
            var batch = IngestBatch(
                awaitingRoots: try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM message WHERE root_pending = 1)") ?? false)
            var outcomes: [IngestReport.Outcome] = []
            outcomes.reserveCapacity(messages.count)
            for incoming in messages {
                outcomes.append(try Self.ingest(incoming, owner: owner, into: &batch, db))
            }
            try Self.updateCounters(batch.conversations, db)
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
        /// The positions (sentAt, id) of the new messages that count as unread, if they come after the read mark.
        var counted: [(Int64, String)] = []
        /// The newest new message.
        var newest: (Int64, String)

        init(newest: (Int64, String)) { self.newest = newest }
    }

    private static func ingest(_ incoming: IncomingMessage, owner: String?, into batch: inout IngestBatch, _ db: Database) throws -> IngestReport.Outcome {
        let message = incoming.message
        let envelope = message.envelope
        let persistence = message.persistence
        guard persistence.isStored else { return .notStored(persistence) }
        for (name, value) in [
            ("id", envelope.id), ("conversationID", envelope.conversationID), ("senderID", envelope.senderID),
            ("objectName", message.content.objectName), ("parentID", envelope.parentID ?? ""),
        ] where value.utf8.contains(0) {
            return .refused("its \(name) holds U+0000, which the store cannot keep")
        }
        let counted = persistence == .counted && envelope.senderID != owner
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
        if counted { change.counted.append(position) }
        if position > change.newest { change.newest = position }
        batch.conversations[envelope.conversationID] = change
        return .stored
    }

    /// Applies a transaction's new messages to their conversations' counters: two statements per
    /// conversation (its read mark, its counters), whatever the number of messages.
    private static func updateCounters(_ changes: [String: ConversationChange], _ db: Database) throws {
        for (conversationID, change) in changes {
            let mark = try readMark(of: conversationID, db)
            let unread = mark.map { mark in change.counted.count { $0 > mark } } ?? change.counted.count
            try db.cachedStatement(
                sql: """
                    INSERT INTO conversation(id, unread, message_count, last_sent_at, last_message_id)
                    VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT(id) DO UPDATE SET
                        message_count = message_count + ?3,
                        unread = unread + ?2,
                        last_sent_at = CASE WHEN last_sent_at IS NULL OR ?4 > last_sent_at
                            OR (?4 = last_sent_at AND ?5 > last_message_id) THEN ?4 ELSE last_sent_at END,
                        last_message_id = CASE WHEN last_sent_at IS NULL OR ?4 > last_sent_at
                            OR (?4 = last_sent_at AND ?5 > last_message_id) THEN ?5 ELSE last_message_id END
                    """
            ).execute(arguments: [conversationID, unread, change.stored, change.newest.0, change.newest.1])
        }
    }

    // MARK: Reading

    public func message(id: String) async throws(StoreError) -> StoredMessage? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM message WHERE id = ?", arguments: [id]).map(Self.storedMessage)
        }
    }

    public func messages(inConversation conversationID: String, limit: Int?) async throws(StoreError) -> [StoredMessage] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.columns) FROM message WHERE conversation_id = ?
                    ORDER BY sent_at DESC, id DESC LIMIT ?
                    """,
                arguments: [conversationID, limit ?? -1])
            return rows.reversed().map(Self.storedMessage)
        }
    }

    public func conversations() async throws(StoreError) -> [ConversationSummary] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.columns), c.id, c.unread, c.message_count
                    FROM conversation c JOIN message ON message.id = c.last_message_id
                    WHERE c.message_count > 0
                    ORDER BY c.last_sent_at DESC, c.last_message_id DESC
                    """
            ).map { row in
                ConversationSummary(
                    id: row[Self.columnCount], unreadCount: row[Self.columnCount + 1], messageCount: row[Self.columnCount + 2],
                    lastMessage: Self.storedMessage(row))
            }
        }
    }

    public func readState(conversation conversationID: String) async throws(StoreError) -> ReadState {
        try await read { db in
            let row = try Row.fetchOne(db, sql: "SELECT read_message_id, unread FROM conversation WHERE id = ?", arguments: [conversationID])
            return ReadState(readUpTo: row?[0], unreadCount: row?[1] ?? 0)
        }
    }

    public func unreadCount(conversation conversationID: String) async throws(StoreError) -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT unread FROM conversation WHERE id = ?", arguments: [conversationID]) ?? 0 }
    }

    public func unreadCounts() async throws(StoreError) -> [String: Int] {
        try await read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, unread FROM conversation WHERE unread > 0") {
                counts[row[0]] = row[1]
            }
            return counts
        }
    }

    public func totalUnreadCount() async throws(StoreError) -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(unread), 0) FROM conversation") ?? 0 }
    }

    public func quotedOriginal(of message: StoredMessage) async throws(StoreError) -> QuotedOriginal? {
        guard let parentID = message.parentID else { return nil }
        return try await self.message(id: parentID).map(QuotedOriginal.found) ?? .notFound(parentID: parentID)
    }

    public func replies(to messageID: String) async throws(StoreError) -> [StoredMessage] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.columns) FROM message WHERE root_id = ? ORDER BY sent_at, id", arguments: [messageID]
            ).map(Self.storedMessage)
        }
    }

    // MARK: Read marks

    @discardableResult
    public func markRead(conversation conversationID: String, upTo messageID: String) async throws(StoreError) -> ReadState {
        try await write { db in
            guard
                let target = try Row.fetchOne(
                    db, sql: "SELECT sent_at FROM message WHERE id = ? AND conversation_id = ?", arguments: [messageID, conversationID])
            else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored in conversation '\(conversationID)'")
            }
            let sentAt: Int64 = target[0]
            let mark = try Row.fetchOne(db, sql: "SELECT read_sent_at, read_message_id, unread FROM conversation WHERE id = ?", arguments: [conversationID])
            if let mark, let markSentAt = mark[0] as Int64?, let markID = mark[1] as String?,
                (sentAt, messageID) <= (markSentAt, markID)
            {
                return ReadState(readUpTo: markID, unreadCount: mark[2] as Int)
            }
            // What is still unread after the new mark: an index range over the counted messages only.
            let unread =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT COUNT(*) FROM message INDEXED BY message_counted
                        WHERE conversation_id = :conversation AND counted = 1
                            AND (sent_at > :sentAt OR (sent_at = :sentAt AND id > :id))
                        """,
                    arguments: ["conversation": conversationID, "sentAt": sentAt, "id": messageID]) ?? 0
            try db.execute(
                sql: "UPDATE conversation SET read_sent_at = ?, read_message_id = ?, unread = ? WHERE id = ?",
                arguments: [sentAt, messageID, unread, conversationID])
            return ReadState(readUpTo: messageID, unreadCount: unread)
        }
    }

    // MARK: Search

    public func search(_ query: SearchQuery, conversation conversationID: String?, limit: Int) async throws(StoreError) -> [SearchHit] {
        let expression = query.matchExpression
        return try await read { db in
            let rows: [Row]
            do {
                // Ranked inside the index first, so that only the hits kept are read from the messages (a
                // common word matches a fifth of them). Equal ranks: the message stored last first.
                rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(Self.columns), hit.score
                        FROM (
                            SELECT rowid, bm25(message_search) AS score FROM message_search
                            WHERE message_search MATCH ?1
                                AND (?2 IS NULL OR rowid IN (SELECT seq FROM message WHERE conversation_id = ?2))
                            ORDER BY score, rowid DESC
                            LIMIT ?3
                        ) AS hit
                        JOIN message ON message.seq = hit.rowid
                        ORDER BY hit.score, message.seq DESC
                        """,
                    arguments: [expression, conversationID, max(0, limit)])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
                throw StoreError(.malformedQuery, "the query '\(query.description)' cannot be searched: \(error.message ?? "\(error)")")
            }
            return rows.map { row in
                let message = Self.storedMessage(row)
                return SearchHit(message: message, rank: row[Self.columnCount], snippet: query.snippet(of: message.searchableWords))
            }
        }
    }

    // MARK: Deleting

    public func delete(messageID: String) async throws(StoreError) {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.columns), seq, search_text FROM message WHERE id = ?", arguments: [messageID]) else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored")
            }
            let message = Self.storedMessage(row)
            guard message.replyCount == 0 else {
                throw StoreError(
                    .hasReplies,
                    "message '\(messageID)' has \(message.replyCount) \(message.replyCount == 1 ? "reply" : "replies"); delete \(message.replyCount == 1 ? "it" : "them") first")
            }
            let seq: Int64 = row[Self.columnCount]
            let searchText: String = row[Self.columnCount + 1]
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

    // MARK: Re-decoding

    public func redecode(with registry: MessageRegistry, progress: (@Sendable (Int, Int) -> Void)?) async throws(StoreError) -> RedecodeReport {
        let owner = self.owner
        return try await write { db in
            let rows = try Row.fetchAll(db, sql: "SELECT \(Self.columns), seq, search_text FROM message WHERE known = 0 ORDER BY seq")
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
                let seq: Int64 = row[Self.columnCount]
                let oldSearchText: String = row[Self.columnCount + 1]
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

    // MARK: Consistency

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
    private static func recount(_ db: Database, owner: String?) throws {
        try db.execute(sql: "UPDATE message SET counted = (persistence = 3 AND sender_id IS NOT ?)", arguments: [owner])
        for row in try Row.fetchAll(db, sql: recountSQL) {
            try db.execute(
                sql: "UPDATE conversation SET unread = ?, message_count = ? WHERE id = ?",
                arguments: [row["recount_unread"] as Int, row["recount_messages"] as Int, row["id"] as String])
            try refreshLastMessage(of: row["id"], db)
        }
    }

    // MARK: Helpers

    /// A conversation's read mark, as a position (sentAt, id), or `nil` when nothing is read.
    private static func readMark(of conversationID: String, _ db: Database) throws -> (Int64, String)? {
        guard
            let mark = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT read_sent_at, read_message_id FROM conversation WHERE id = ?"), arguments: [conversationID]),
            let sentAt = mark[0] as Int64?, let id = mark[1] as String?
        else { return nil }
        return (sentAt, id)
    }

    /// Whether `message` comes after its conversation's read mark.
    private static func isAfterReadMark(_ message: StoredMessage, _ db: Database) throws -> Bool {
        guard let mark = try readMark(of: message.conversationID, db) else { return true }
        return (message.sentAt, message.id) > mark
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

    /// The columns a ``StoredMessage`` is read from, in ``storedMessage(_:)``'s order.
    private static let columns = """
        message.id, message.conversation_id, message.sender_id, message.sent_at, message.object_name, message.business_id,
        message.known, message.digest, message.persistence, message.counted, message.words, message.parent_id, message.root_id,
        message.reply_count, message.reason, message.envelope
        """

    /// How many columns ``columns`` lists: the index of the first column a query adds after them.
    private static let columnCount = 16

    /// A stored message from a row that starts with ``columns``, read by position (GRDB's lookups by name
    /// fold the case of every name).
    private static func storedMessage(_ row: Row) -> StoredMessage {
        let words: String = row[10]
        let envelope: Data = row[15]
        return StoredMessage(
            id: row[0], conversationID: row[1], senderID: row[2], sentAt: row[3], objectName: row[4], businessID: row[5], isKnown: row[6],
            digest: row[7], persistence: Persistence(rawValue: row[8]) ?? .persisted, countsAsUnread: row[9],
            searchableWords: words.isEmpty ? [] : words.split(separator: wordSeparator, omittingEmptySubsequences: false).map(String.init),
            parentID: row[11], threadRootID: row[12], replyCount: row[13], reason: row[14], envelopeBytes: [UInt8](envelope))
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

    /// Searchable words are kept in one column, separated by U+001F (a control character, which no word
    /// needs: one inside a word becomes a space).
    private static let wordSeparator: Character = "\u{1F}"

    private static func joinWords(_ words: [String]) -> String {
        // A NUL would end the text in SQLite; U+001F separates words.
        words.map { $0.replacingOccurrences(of: "\u{1F}", with: " ").replacingOccurrences(of: "\u{0}", with: " ") }
            .joined(separator: String(wordSeparator))
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw storeError(error)
        }
    }

    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.write(body)
        } catch {
            throw storeError(error)
        }
    }

    /// A write that blocks the caller, for opening the store.
    private func writeNow(_ body: (Database) throws -> Void) throws(StoreError) {
        do {
            try pool.write(body)
        } catch {
            throw storeError(error)
        }
    }

    private func storeError(_ error: any Error) -> StoreError {
        if var error = error as? StoreError {
            error.path = error.path ?? path
            return error
        }
        return StoreError(.database, Self.reason(error), path: path)
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message.map { "\($0) (\(error.resultCode))" } ?? "\(error.resultCode)" }
        return "\(error)"
    }
}
