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
    /// The database file, as an absolute path.
    public let path: String

    /// The account whose own messages never count as unread, as the store remembers it.
    public let owner: String?

    private let pool: DatabasePool

    /// Opens the store at `path`, creating it (but not its folder) if it does not exist, and bringing an
    /// older schema up to date.
    ///
    /// - Parameters:
    ///   - path: the SQLite file. A relative path is made absolute against the working directory now, so
    ///     that the connections the pool opens later (and SQLite's journal files) stay on the same file
    ///     whatever changes the working directory meanwhile; ``path`` is the absolute path.
    ///   - owner: the account whose messages never count as unread. A store remembers its owner: `nil`
    ///     keeps the one it has; a store without one takes this one (and recounts). Naming another owner
    ///     than the store's is refused.
    /// - Throws: ``StoreError/Code/cannotOpen`` with SQLite's reason; ``StoreError/Code/ownerMismatch``.
    public init(path: String, owner: String? = nil) throws(StoreError) {
        let path = Self.absolute(path)
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

    // MARK: Reading

    public func message(id: String) async throws(StoreError) -> StoredMessage? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT \(MessageColumn.selection) FROM message WHERE id = ?", arguments: [id]).map(Self.storedMessage)
        }
    }

    public func messages(inConversation conversationID: String, limit: Int?) async throws(StoreError) -> [StoredMessage] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MessageColumn.selection) FROM message WHERE conversation_id = ?
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
                    SELECT \(MessageColumn.selection), c.id, c.unread, c.message_count
                    FROM conversation c JOIN message ON message.id = c.last_message_id
                    WHERE c.message_count > 0
                    ORDER BY c.last_sent_at DESC, c.last_message_id DESC
                    """
            ).map { row in
                ConversationSummary(
                    id: row[MessageColumn.end], unreadCount: row[MessageColumn.end + 1], messageCount: row[MessageColumn.end + 2],
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
                db, sql: "SELECT \(MessageColumn.selection) FROM message WHERE root_id = ? ORDER BY sent_at, id", arguments: [messageID]
            ).map(Self.storedMessage)
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw storeError(error)
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.write(body)
        } catch {
            throw storeError(error)
        }
    }

    /// A write that blocks the caller, for opening the store.
    func writeNow(_ body: (Database) throws -> Void) throws(StoreError) {
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

    /// `path` joined to the working directory when it is relative (not for SQLite's special names, such as
    /// `:memory:`); unchanged when the working directory cannot be read.
    package static func absolute(_ path: String) -> String {
        guard !path.isEmpty, !path.hasPrefix("/"), !path.hasPrefix(":"), !path.hasPrefix("file:") else { return path }
        let directory = FileManager.default.currentDirectoryPath
        guard directory.hasPrefix("/") else { return path }
        return directory == "/" ? "/" + path : directory + "/" + path
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message.map { "\($0) (\(error.resultCode))" } ?? "\(error.resultCode)" }
        return "\(error)"
    }
}
