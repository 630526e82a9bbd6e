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

    /// Whether the store is personal (and whose) or shared, as the store remembers it.
    public let kind: StoreKind

    /// The database file: ``path``.
    public var location: String { path }

    /// The owner of a personal store, as the store remembers it; `nil` for a shared store.
    public var owner: String? {
        if case .personal(let owner) = kind { return owner }
        return nil
    }

    private let pool: DatabasePool

    /// Opens the store at `path`, creating a personal store (but not its folder) if none exists there, and
    /// bringing an older schema up to date.
    ///
    /// - Parameters:
    ///   - path: the SQLite file. A relative path is made absolute against the working directory now, so
    ///     that the connections the pool opens later (and SQLite's journal files) stay on the same file
    ///     whatever changes the working directory meanwhile; ``path`` is the absolute path.
    ///   - owner: the account whose messages never count as unread. A store remembers its owner: `nil`
    ///     keeps the one it has; a personal store without one takes this one (and recounts). Naming another
    ///     owner than the store's is refused, and so is naming one for a shared store.
    /// - Throws: ``StoreError/Code/cannotOpen`` with SQLite's reason; ``StoreError/Code/ownerMismatch``;
    ///   ``StoreError/Code/kindMismatch``; ``StoreError/Code/newerSchema``.
    public convenience init(path: String, owner: String? = nil) throws(StoreError) {
        try self.init(path: path, kind: owner.map { StoreKind.personal(owner: $0) })
    }

    /// Opens the store at `path` as `kind`, creating it (but not its folder) if none exists there.
    ///
    /// - Parameters:
    ///   - path: the SQLite file, made absolute as in ``init(path:owner:)``.
    ///   - kind: the kind the store must be: a new store takes it; an existing one of the other kind is refused.
    ///     `nil` opens whatever kind the store is (a new store is then personal, without an owner).
    /// - Throws: ``StoreError/Code/cannotOpen``, ``StoreError/Code/kindMismatch``,
    ///   ``StoreError/Code/ownerMismatch``, ``StoreError/Code/newerSchema``.
    public init(path: String, kind: StoreKind?) throws(StoreError) {
        let path = Self.absolute(path)
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try db.execute(sql: Self.connectionSettings) }
        let migrator = StoreSchema.migrator
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw StoreError(.cannotOpen, "cannot open the store: \(Self.reason(error))", path: path)
        }
        let superseded: Bool
        do {
            superseded = try pool.read { db in try migrator.hasBeenSuperseded(db) }
        } catch {
            throw StoreError(.cannotOpen, "cannot open the store: \(Self.reason(error))", path: path)
        }
        guard !superseded else {
            throw StoreError(.newerSchema, "the store was written by a newer version of Missive; this version cannot open it", path: path)
        }
        do {
            try migrator.migrate(pool)
        } catch {
            throw StoreError(.cannotOpen, "cannot open the store: \(Self.reason(error))", path: path)
        }
        let stored: (kind: String?, owner: String?)
        do {
            stored = try pool.read { db in
                (
                    try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = 'kind'"),
                    try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = 'owner'")
                )
            }
        } catch {
            throw StoreError(.cannotOpen, "cannot read the store: \(Self.reason(error))", path: path)
        }
        let resolved = try StoreKind.resolve(stored: stored, requested: kind, location: path)
        self.kind = resolved.kind
        if resolved.write {
            try writeNow { db in
                try db.execute(sql: "INSERT OR REPLACE INTO store_info(key, value) VALUES ('kind', ?)", arguments: [resolved.kind.storedName])
                if let owner = resolved.claimedOwner {
                    try db.execute(sql: "INSERT OR REPLACE INTO store_info(key, value) VALUES ('owner', ?)", arguments: [owner])
                    // The account without a name becomes the owner: its marks stay, its own messages stop counting.
                    try db.execute(sql: "UPDATE OR IGNORE member SET member_id = ? WHERE member_id = ''", arguments: [owner])
                    try Self.recount(db)
                }
            }
        }
    }

    /// What every connection sets: WAL's usual durability, a page cache of 32 MiB and memory-mapped reads of
    /// up to 256 MiB (fewer system calls for the search index and the counters' pages).
    public static let connectionSettings = "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -32768; PRAGMA mmap_size = 268435456"

    // MARK: Reading

    public func message(id: String) async throws(StoreError) -> StoredMessage? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT \(MessageColumn.selection) FROM message WHERE id = ?", arguments: [id]).map(self.storedMessage)
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
            return rows.reversed().map(self.storedMessage)
        }
    }

    public func messages(inConversation conversationID: String, from cursor: HistoryCursor, limit: Int) async throws(StoreError) -> [StoredMessage] {
        let (id, comparison, order) =
            switch cursor {
            case .before(let id): (id, "<", "DESC")
            case .after(let id): (id, ">", "ASC")
            }
        return try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MessageColumn.selection) FROM message
                    WHERE conversation_id = ?1
                      AND (sent_at, id) \(comparison) (SELECT sent_at, id FROM message WHERE id = ?2 AND conversation_id = ?1)
                    ORDER BY sent_at \(order), id \(order) LIMIT ?3
                    """,
                arguments: [conversationID, id, Swift.max(0, limit)])
            let page = rows.map(self.storedMessage)
            return order == "DESC" ? page.reversed() : page
        }
    }

    public func conversations(member memberID: String) async throws(StoreError) -> [ConversationSummary] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MessageColumn.selection), c.id, c.counted_total - m.seen, c.message_count
                    FROM member m INDEXED BY member_by_member
                    JOIN conversation c ON c.id = m.conversation_id
                    JOIN message ON message.id = c.last_message_id
                    WHERE m.member_id = ? AND m.active = 1 AND c.message_count > 0
                    ORDER BY c.last_sent_at DESC, c.last_message_id DESC
                    """,
                arguments: [memberID]
            ).map { row in
                ConversationSummary(
                    id: row[MessageColumn.end], unreadCount: row[MessageColumn.end + 1], messageCount: row[MessageColumn.end + 2],
                    lastMessage: self.storedMessage(row))
            }
        }
    }

    public func readState(member memberID: String, conversation conversationID: String) async throws(StoreError) -> ReadState {
        try await read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT m.read_message_id, c.counted_total - m.seen FROM member m JOIN conversation c ON c.id = m.conversation_id
                    WHERE m.conversation_id = ? AND m.member_id = ? AND m.active = 1
                    """,
                arguments: [conversationID, memberID])
            return ReadState(readUpTo: row?[0], unreadCount: row?[1] ?? 0)
        }
    }

    public func unreadCount(member memberID: String, conversation conversationID: String) async throws(StoreError) -> Int {
        try await readState(member: memberID, conversation: conversationID).unreadCount
    }

    public func unreadCounts(member memberID: String) async throws(StoreError) -> [String: Int] {
        try await read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT c.id, c.counted_total - m.seen FROM member m INDEXED BY member_by_member
                    JOIN conversation c ON c.id = m.conversation_id
                    WHERE m.member_id = ? AND m.active = 1 AND c.counted_total > m.seen
                    """,
                arguments: [memberID])
            {
                counts[row[0]] = row[1]
            }
            return counts
        }
    }

    public func totalUnreadCount(member memberID: String) async throws(StoreError) -> Int {
        try await read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(SUM(c.counted_total - m.seen), 0) FROM member m INDEXED BY member_by_member
                    JOIN conversation c ON c.id = m.conversation_id WHERE m.member_id = ? AND m.active = 1
                    """,
                arguments: [memberID]) ?? 0
        }
    }

    public func members(ofConversation conversationID: String) async throws(StoreError) -> [String] {
        try await read { db in
            try String.fetchAll(
                db, sql: "SELECT member_id FROM member WHERE conversation_id = ? AND active = 1 ORDER BY member_id", arguments: [conversationID])
        }
    }

    public func conversationIDs(member memberID: String) async throws(StoreError) -> [String] {
        try await read { db in
            try String.fetchAll(
                db, sql: "SELECT conversation_id FROM member INDEXED BY member_by_member WHERE member_id = ? AND active = 1 ORDER BY conversation_id",
                arguments: [memberID])
        }
    }

    public func quotedOriginal(of message: StoredMessage) async throws(StoreError) -> QuotedOriginal? {
        guard let parentID = message.parentID else { return nil }
        // A message of another conversation is not quoted: it is not found, as one never stored.
        guard let parent = try await self.message(id: parentID), parent.conversationID == message.conversationID else {
            return .notFound(parentID: parentID)
        }
        return .found(parent)
    }

    public func replies(to messageID: String) async throws(StoreError) -> [StoredMessage] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MessageColumn.selection) FROM message
                    WHERE root_id = ?1 AND conversation_id IS (SELECT conversation_id FROM message WHERE id = ?1) ORDER BY sent_at, id
                    """, arguments: [messageID]
            ).map(self.storedMessage)
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
