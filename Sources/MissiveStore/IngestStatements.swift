import GRDB
import GRDBSQLite
import Missive

/// The statements of one ingest transaction, taken from GRDB's statement cache once per batch and bound and
/// stepped through SQLite's C API: binding through GRDB boxes every argument into a value array and checks it,
/// which costs more than SQLite's own work on these small rows. Strings are bound as GRDB binds them (copied,
/// up to their first U+0000), so the stored values are the same.
struct IngestStatements {
    private let insertMessageStatement: IngestStatement
    private let parentStatement: IngestStatement
    private let addRepliesStatement: IngestStatement
    private let waitingRepliesStatement: IngestStatement
    private let adoptRepliesStatement: IngestStatement
    private let searchEntry: IngestStatement
    private let searchEntries: IngestStatement
    private let storedChange: IngestStatement
    private let storedChanges: IngestStatement
    private let conversationExistsStatement: IngestStatement
    private let existsAndMarkStatement: IngestStatement
    private let addToConversationStatement: IngestStatement
    private let joinStatement: IngestStatement
    private let joinedChange: IngestStatement
    private let addSeenStatement: IngestStatement
    private let furthestMarkStatement: IngestStatement
    private let addSeenBehindStatement: IngestStatement

    /// How many rows one multi-row `INSERT` of search entries or feed entries writes (the rest one by one).
    static let rowsPerInsert = 100

    init(_ db: Database) throws {
        func statement(_ sql: String) throws -> IngestStatement { try IngestStatement(db, sql) }
        insertMessageStatement = try statement(
            """
            INSERT OR IGNORE INTO message(
                id, conversation_id, sender_id, sent_at, object_name, business_id, known, digest, persistence,
                counted, words, search_text, parent_id, root_id, root_pending, reason, envelope)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        // A thread stays in its conversation: a parent, or a waiting reply, of another conversation is not seen.
        parentStatement = try statement("SELECT root_id, root_pending FROM message WHERE id = ? AND conversation_id = ?")
        addRepliesStatement = try statement("UPDATE message SET reply_count = reply_count + ? WHERE id = ? AND conversation_id = ?")
        waitingRepliesStatement = try statement("SELECT COUNT(*) FROM message WHERE root_id = ? AND conversation_id = ? AND root_pending = 1")
        adoptRepliesStatement = try statement(
            "UPDATE message SET root_id = ?, root_pending = ? WHERE root_id = ? AND conversation_id = ? AND root_pending = 1")
        searchEntry = try statement("INSERT INTO message_search(rowid, search_text) VALUES (?, ?)")
        searchEntries = try statement(
            "INSERT INTO message_search(rowid, search_text) VALUES " + Array(repeating: "(?, ?)", count: Self.rowsPerInsert).joined(separator: ", "))
        let stored = StoreChange.Kind.stored.description
        storedChange = try statement("INSERT INTO change(kind, conversation_id, message_id) VALUES ('\(stored)', ?, ?)")
        storedChanges = try statement(
            "INSERT INTO change(kind, conversation_id, message_id) VALUES "
                + Array(repeating: "('\(stored)', ?, ?)", count: Self.rowsPerInsert).joined(separator: ", "))
        conversationExistsStatement = try statement("SELECT 1 FROM conversation WHERE id = ?")
        existsAndMarkStatement = try statement(
            """
            SELECT EXISTS(SELECT 1 FROM conversation WHERE id = ?1), mark.read_sent_at, mark.read_message_id
            FROM (SELECT 1) LEFT JOIN (
                SELECT read_sent_at, read_message_id FROM member INDEXED BY member_by_mark
                WHERE conversation_id = ?1 AND read_sent_at IS NOT NULL
                ORDER BY read_sent_at DESC, read_message_id DESC LIMIT 1
            ) AS mark
            """)
        addToConversationStatement = try statement(
            """
            INSERT INTO conversation(id, message_count, counted_total, last_sent_at, last_message_id)
            VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT(id) DO UPDATE SET
                message_count = message_count + ?2,
                counted_total = counted_total + ?3,
                last_sent_at = CASE WHEN last_sent_at IS NULL OR ?4 > last_sent_at
                    OR (?4 = last_sent_at AND ?5 > last_message_id) THEN ?4 ELSE last_sent_at END,
                last_message_id = CASE WHEN last_sent_at IS NULL OR ?4 > last_sent_at
                    OR (?4 = last_sent_at AND ?5 > last_message_id) THEN ?5 ELSE last_message_id END
            """)
        joinStatement = try statement("INSERT OR IGNORE INTO member(conversation_id, member_id) VALUES (?, ?)")
        joinedChange = try statement(
            "INSERT INTO change(kind, conversation_id, member_id) VALUES ('\(StoreChange.Kind.joined.description)', ?, ?)")
        addSeenStatement = try statement("UPDATE member SET seen = seen + ? WHERE conversation_id = ? AND member_id = ? AND active = 1")
        furthestMarkStatement = try statement(
            """
            SELECT read_sent_at, read_message_id FROM member INDEXED BY member_by_mark
            WHERE conversation_id = ? AND read_sent_at IS NOT NULL
            ORDER BY read_sent_at DESC, read_message_id DESC LIMIT 1
            """)
        addSeenBehindStatement = try statement(
            """
            UPDATE member SET seen = seen + ?1
            WHERE conversation_id = ?2 AND member_id != ?3 AND active = 1
                AND (read_sent_at > ?4 OR (read_sent_at = ?4 AND read_message_id >= ?5))
            """)
    }

    /// Inserts a message's row unless its id is stored; returns its `seq`, or `nil` for a duplicate.
    func insertMessage(
        _ incoming: IncomingMessage, envelope: Envelope, counted: Bool, words: String, searchText: String, rootID: String?, rootPending: Bool
    ) throws -> Int64? {
        let message = incoming.message
        let statement = insertMessageStatement
        try statement.bind(1, envelope.id)
        try statement.bind(2, envelope.conversationID)
        try statement.bind(3, envelope.senderID)
        try statement.bind(4, envelope.sentAt)
        try statement.bind(5, message.content.objectName)
        try statement.bind(6, message.content.businessID)
        try statement.bind(7, message.isKnown)
        try statement.bind(8, message.digest)
        try statement.bind(9, Int64(message.persistence.rawValue))
        try statement.bind(10, counted)
        try statement.bind(11, words)
        try statement.bind(12, searchText)
        try statement.bind(13, envelope.parentID)
        try statement.bind(14, rootID)
        try statement.bind(15, rootPending)
        try statement.bind(16, message.unknown.map { "\($0.reason)" })
        try statement.bind(17, bytes: incoming.envelopeBytes)
        try statement.run()
        return statement.changes > 0 ? statement.lastInsertedRowID : nil
    }

    /// The thread root a stored message belongs to, and whether that root is still awaited; `nil` when no
    /// message `id` is stored in `conversation` (one of another conversation is not a parent).
    func parent(of id: String, in conversation: String) throws -> (rootID: String?, rootPending: Bool)? {
        let statement = parentStatement
        try statement.bind(1, id)
        try statement.bind(2, conversation)
        return try statement.firstRow { row in (row.string(0), row.int64(1) != 0) }
    }

    /// Adds `count` replies to the reply count of message `id`.
    func addReplies(_ count: Int, to id: String, in conversation: String) throws {
        try addRepliesStatement.bind(1, Int64(count))
        try addRepliesStatement.bind(2, id)
        try addRepliesStatement.bind(3, conversation)
        try addRepliesStatement.run()
    }

    /// How many stored replies of `conversation` wait for message `id` as their root.
    func waitingReplies(for id: String, in conversation: String) throws -> Int {
        try waitingRepliesStatement.bind(1, id)
        try waitingRepliesStatement.bind(2, conversation)
        return try waitingRepliesStatement.firstRow { row in Int(row.int64(0)) } ?? 0
    }

    /// Moves the replies of `conversation` waiting for message `id` to the thread of `root`.
    func adoptReplies(of id: String, in conversation: String, root: String, pending: Bool) throws {
        try adoptRepliesStatement.bind(1, root)
        try adoptRepliesStatement.bind(2, pending)
        try adoptRepliesStatement.bind(3, id)
        try adoptRepliesStatement.bind(4, conversation)
        try adoptRepliesStatement.run()
    }

    /// Writes the search entries of the messages stored, a hundred rows a statement.
    func insertSearchEntries(_ rows: [SQLiteMessageStore.StoredRow]) throws {
        try insertInChunks(rows, many: searchEntries, one: searchEntry) { statement, index, row in
            try statement.bind(index, row.seq)
            try statement.bind(index + 1, row.searchText)
        }
    }

    /// Appends a `stored` entry to the change feed for each message stored, in order.
    func appendStoredChanges(_ rows: [SQLiteMessageStore.StoredRow]) throws {
        try insertInChunks(rows, many: storedChanges, one: storedChange) { statement, index, row in
            try statement.bind(index, row.conversationID)
            try statement.bind(index + 1, row.id)
        }
    }

    /// Runs `many` (``rowsPerInsert`` rows of two parameters) for each full chunk of `rows`, in order, then
    /// `one` for each row left.
    private func insertInChunks(
        _ rows: [SQLiteMessageStore.StoredRow], many: IngestStatement, one: IngestStatement,
        bind: (IngestStatement, Int32, SQLiteMessageStore.StoredRow) throws -> Void
    ) throws {
        var start = 0
        while rows.count - start >= Self.rowsPerInsert {
            for offset in 0..<Self.rowsPerInsert {
                try bind(many, Int32(offset * 2 + 1), rows[start + offset])
            }
            try many.run()
            start += Self.rowsPerInsert
        }
        for row in rows[start...] {
            try bind(one, 1, row)
            try one.run()
        }
    }

    /// Whether conversation `id` has a row (when `existence`; `false` otherwise), and the furthest read mark among
    /// its members, if any has one (when `furthestMark`; `nil` otherwise), in one statement when both are asked.
    func conversationState(_ id: String, existence: Bool, furthestMark: Bool) throws -> (exists: Bool, furthestMark: (Int64, String)?) {
        switch (existence, furthestMark) {
        case (false, false):
            return (false, nil)
        case (true, false):
            try conversationExistsStatement.bind(1, id)
            return (try conversationExistsStatement.firstRow { _ in true } ?? false, nil)
        case (false, true):
            return (false, try self.furthestMark(of: id))
        case (true, true):
            try existsAndMarkStatement.bind(1, id)
            return try existsAndMarkStatement.firstRow { row in (row.int64(0) != 0, Self.mark(row, 1)) } ?? (false, nil)
        }
    }

    /// The read mark in columns `column` and `column + 1` of `row`, if there is one.
    private static func mark(_ row: IngestRow, _ column: Int32) -> (Int64, String)? {
        guard !row.isNull(column), let id = row.string(column + 1) else { return nil }
        return (row.int64(column), id)
    }

    /// Adds new messages to a conversation's counts, creating its row if needed, and moves its newest message.
    func addToConversation(_ id: String, stored: Int, counted: Int, newest: (Int64, String)) throws {
        let statement = addToConversationStatement
        try statement.bind(1, id)
        try statement.bind(2, Int64(stored))
        try statement.bind(3, Int64(counted))
        try statement.bind(4, newest.0)
        try statement.bind(5, newest.1)
        try statement.run()
    }

    /// Makes `memberID` a member of the new conversation `conversationID` with nothing read, and says so in the feed.
    func joinWithNothingRead(_ memberID: String, _ conversationID: String) throws {
        try joinStatement.bind(1, conversationID)
        try joinStatement.bind(2, memberID)
        try joinStatement.run()
        try joinedChange.bind(1, conversationID)
        try joinedChange.bind(2, memberID)
        try joinedChange.run()
    }

    /// Adds `count` to `seen` of the sender's row, if it is an active member: its own messages are read.
    func addSeen(_ count: Int, sender: String, _ conversationID: String) throws {
        try addSeenStatement.bind(1, Int64(count))
        try addSeenStatement.bind(2, conversationID)
        try addSeenStatement.bind(3, sender)
        try addSeenStatement.run()
    }

    /// The furthest read mark among the conversation's members, if any has one (as
    /// ``SQLiteMessageStore/furthestMark(of:_:)``).
    func furthestMark(of conversationID: String) throws -> (Int64, String)? {
        try furthestMarkStatement.bind(1, conversationID)
        return try furthestMarkStatement.firstRow { row in Self.mark(row, 0) } ?? nil
    }

    /// Adds `delta` to `seen` of the active members other than `sender` whose mark is at or after `position`
    /// (as ``SQLiteMessageStore/adjustSeen(conversation:position:sender:by:includingSender:_:)``).
    func addSeenBehind(_ delta: Int, position: (Int64, String), sender: String, _ conversationID: String) throws {
        let statement = addSeenBehindStatement
        try statement.bind(1, Int64(delta))
        try statement.bind(2, conversationID)
        try statement.bind(3, sender)
        try statement.bind(4, position.0)
        try statement.bind(5, position.1)
        try statement.run()
    }
}

/// One statement of GRDB's cache, bound and stepped through SQLite's C API. It is reset when it is taken and after
/// each run.
struct IngestStatement {
    /// GRDB's statement, held so that its handle stays valid for this batch even when GRDB empties its cache (it
    /// does when the schema cache is cleared): the handle is the statement's, and lives as long as it.
    private let statement: Statement
    private let handle: SQLiteStatement
    private let connection: SQLiteConnection

    init(_ db: Database, _ sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
        handle = statement.sqliteStatement
        // GRDB steps the statements of its cache and leaves them so (it resets one before it binds it again): one
        // it ran last, such as the search entry an edit rewrites, must be reset before it is bound here, or SQLite
        // refuses the binding as a misuse.
        sqlite3_reset(handle)
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the connection is closed") }
        self.connection = connection
    }

    /// SQLite copies the bytes, as GRDB has it do.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self) }

    func bind(_ index: Int32, _ value: String?) throws {
        guard let value else { return try check(sqlite3_bind_null(handle, index)) }
        try check(sqlite3_bind_text(handle, index, value, -1, Self.transient))
    }

    func bind(_ index: Int32, _ value: Int64) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ index: Int32, _ value: Bool) throws {
        try check(sqlite3_bind_int64(handle, index, value ? 1 : 0))
    }

    func bind(_ index: Int32, bytes: [UInt8]) throws {
        let code = bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob(handle, index, base, Int32(buffer.count), Self.transient)
        }
        try check(code)
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else { throw failure(code) }
        sqlite3_reset(handle)
    }

    /// Runs a query and reads its first row, if it has one.
    func firstRow<T>(_ read: (IngestRow) -> T) throws -> T? {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW:
            let value = read(IngestRow(handle: handle))
            sqlite3_reset(handle)
            return value
        case SQLITE_DONE:
            sqlite3_reset(handle)
            return nil
        default:
            throw failure(code)
        }
    }

    /// The rows the last run changed.
    var changes: Int32 { sqlite3_changes(connection) }

    /// The rowid of the last row inserted.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(connection) }

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// SQLite's error, as GRDB reports it; the statement is reset for its next use.
    private func failure(_ code: Int32) -> DatabaseError {
        let message = String(cString: sqlite3_errmsg(connection))
        let sql = String(cString: sqlite3_sql(handle))
        sqlite3_reset(handle)
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }
}

/// The current row of an ``IngestStatement``.
struct IngestRow {
    let handle: SQLiteStatement

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: text)
    }
}
