import Foundation
import Logging
import Missive
import MissiveStore
import NIOCore
import PostgresNIO

/// A `MessageStore` in a PostgreSQL database, through postgres-nio's connection pool, for hosts that run as
/// several processes (on several machines) over one store.
///
/// It keeps the same model as `SQLiteMessageStore`, with the same outcomes, errors, counters and change feed
/// (docs/POSTGRES.md):
/// - Every call is one transaction on one connection of the pool; a writing call runs again when the server
///   aborts it as a serialization failure or a deadlock. Ingest is idempotent by id also when several processes
///   ingest the same messages at once.
/// - Search indexes the tokens SQLite's own tokenizer makes of a message (`SearchQuery/indexTokens(of:)`) in
///   a `tsvector` with a GIN index, so that a query finds the same messages on both backends.
/// - The change feed's positions grow in commit order (an advisory lock around the appending of changes), and
///   every commit that wrote changes sends one coalesced `NOTIFY missive_changes`, which
///   ``waitForChanges(after:timeout:)`` listens for.
/// - The server's failures are `StoreError` codes: `StoreError/Code/unavailable` when it cannot be reached
///   or the connection is lost (the call changed nothing), `StoreError/Code/timeout` past the URL's
///   `statement_timeout`, `StoreError/Code/cannotOpen` for a wrong password or another application's database.
///
/// Open one with ``open(_:kind:logger:)``, and ``close()`` it when done (releasing the store closes it too).
public final class PostgresMessageStore: MessageStore {
    /// Whether the store is personal (and whose) or shared, as the store remembers it.
    public let kind: StoreKind

    /// The store's URL without its password.
    public let location: String

    /// The pool.
    let client: PostgresClient
    /// The task that runs the pool; cancelling it closes the pool's connections.
    private let runTask: Task<Void, Never>
    /// Where the log of postgres-nio goes.
    let logger: Logger
    /// How long a connection attempt waits, from the URL.
    let connectTimeout: Duration
    /// The URL's statement timeout, for messages.
    let statementTimeout: Duration?
    /// Sends the coalesced notifications after commits.
    let notifier: ChangeNotifier
    /// Listens to the notifications for ``waitForChanges(after:timeout:)``.
    let listener: ChangeListener

    private init(kind: StoreKind, location: PostgresLocation, logger: Logger) {
        self.kind = kind
        self.location = location.description
        self.logger = logger
        self.connectTimeout = location.connectTimeout
        self.statementTimeout = location.statementTimeout
        let client = PostgresClient(configuration: Self.clientConfiguration(location), backgroundLogger: logger)
        self.client = client
        self.runTask = Task { await client.run() }
        self.notifier = ChangeNotifier(client: client, logger: logger)
        self.listener = ChangeListener(
            configuration: Self.connectionConfiguration(location, statementTimeout: false), location: location.description, logger: logger)
    }

    deinit {
        runTask.cancel()
        listener.stop()
    }

    /// Opens the store in the database at `location`, creating its tables in an empty database and bringing an
    /// older schema up to date (once, when several processes open it at the same time).
    ///
    /// A URL without a password takes it from where PostgreSQL's own tools do: the environment variable
    /// `PGPASSWORD`, then the password file (`PGPASSFILE`, or `~/.pgpass` when only its owner may read it).
    ///
    /// - Parameters:
    ///   - location: the database, as a parsed `postgres://` URL.
    ///   - kind: the kind the store must be: a new store takes it; an existing one of the other kind is refused.
    ///     `nil` opens whatever kind the store is (a new store is then personal, without an owner). A personal
    ///     store without an owner takes the one named (and recounts); naming another owner is refused.
    ///   - logger: where postgres-nio's log goes (nothing by default).
    /// - Throws: `StoreError/Code/unavailable` when the server cannot be reached; `StoreError/Code/cannotOpen`
    ///   for a wrong user or password, a missing database, or a database that holds another application's
    ///   tables; `StoreError/Code/newerSchema`; `StoreError/Code/kindMismatch`; `StoreError/Code/ownerMismatch`.
    public static func open(
        _ location: PostgresLocation, kind: StoreKind?, logger: Logger = Logger(label: "missive.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws(StoreError) -> PostgresMessageStore {
        let (location, passwordNote) = PasswordSources.filling(location, environment: ProcessInfo.processInfo.environment)
        let shown = location.description
        let resolved: StoreKind
        do {
            let connection = try await PostgresConnection.connect(
                configuration: connectionConfiguration(location, statementTimeout: false), id: 0, logger: logger)
            do {
                resolved = try await prepare(connection, location: location, kind: kind, logger: logger)
            } catch {
                try? await connection.close()
                throw error
            }
            try? await connection.close()
        } catch {
            var error = storeError(error, location: shown, statementTimeout: location.statementTimeout)
            if error.code == .unavailable { error.message = "cannot open the store: " + error.message }
            if let passwordNote, error.code == .cannotOpen, error.message.hasPrefix("cannot log in") { error.message += " (\(passwordNote))" }
            throw error
        }
        return PostgresMessageStore(kind: resolved, location: location, logger: logger)
    }

    /// Creates or upgrades the schema and settles the store's kind, in one transaction under the schema lock.
    private static func prepare(_ connection: PostgresConnection, location: PostgresLocation, kind: StoreKind?, logger: Logger) async throws -> StoreKind {
        let transaction = Transaction(connection: connection, logger: logger)
        try await transaction.query("BEGIN")
        do {
            try await transaction.query("SELECT pg_advisory_xact_lock(\(schemaLock))")
            try await PostgresSchema.migrate(transaction, database: location.database, location: location.description)
            var stored: (kind: String?, owner: String?) = (nil, nil)
            for row in try await transaction.query("SELECT key, value FROM store_info WHERE key IN ('kind', 'owner')") {
                let (key, value) = try row.decode((String, String).self)
                if key == "kind" { stored.kind = value } else { stored.owner = value }
            }
            let resolved = try StoreKind.resolve(stored: stored, requested: kind, location: location.description)
            if resolved.write {
                try await transaction.query(
                    """
                    INSERT INTO store_info(key, value) VALUES ('kind', \(resolved.kind.storedName))
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """)
                if let owner = resolved.claimedOwner {
                    try await transaction.query(
                        "INSERT INTO store_info(key, value) VALUES ('owner', \(owner)) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                    // The account without a name becomes the owner: its marks stay, its own messages stop counting.
                    try await transaction.query(
                        """
                        UPDATE member SET member_id = \(owner) WHERE member_id = ''
                            AND NOT EXISTS (SELECT 1 FROM member o WHERE o.conversation_id = member.conversation_id AND o.member_id = \(owner))
                        """)
                    try await recount(transaction)
                }
            }
            try await transaction.query("COMMIT")
            return resolved.kind
        } catch {
            _ = try? await transaction.query("ROLLBACK")
            throw error
        }
    }

    /// Closes the pool and the listening connection. Calls after it fail with `StoreError/Code/unavailable`.
    public func close() async {
        listener.stop()
        runTask.cancel()
        await runTask.value
    }

    // MARK: Reading

    public func message(id: String) async throws(StoreError) -> StoredMessage? {
        let reader = self.reader
        return try await read { transaction in
            try await transaction.query("SELECT \(unescaped: MessageColumns.selection) FROM message WHERE id = \(id)")
                .first.map { try MessageColumns.storedMessage($0, reader: reader) }
        }
    }

    /// A negative `limit` is no limit, as on SQLite.
    public func messages(inConversation conversationID: String, limit: Int?) async throws(StoreError) -> [StoredMessage] {
        let reader = self.reader
        return try await read { transaction in
            try await transaction.query(
                """
                SELECT \(unescaped: MessageColumns.selection) FROM message WHERE conversation_id = \(conversationID)
                ORDER BY sent_at DESC, id DESC LIMIT \(limit.flatMap { $0 < 0 ? nil : $0 })
                """
            ).reversed().map { try MessageColumns.storedMessage($0, reader: reader) }
        }
    }

    public func messages(inConversation conversationID: String, from cursor: HistoryCursor, limit: Int) async throws(StoreError) -> [StoredMessage] {
        let reader = self.reader
        let limit = Swift.max(0, limit)
        return try await read { transaction in
            switch cursor {
            case .before(let id):
                try await transaction.query(
                    """
                    SELECT \(unescaped: MessageColumns.selection) FROM message
                    WHERE conversation_id = \(conversationID)
                      AND (sent_at, id) < (SELECT sent_at, id FROM message WHERE id = \(id) AND conversation_id = \(conversationID))
                    ORDER BY sent_at DESC, id DESC LIMIT \(limit)
                    """
                ).reversed().map { try MessageColumns.storedMessage($0, reader: reader) }
            case .after(let id):
                try await transaction.query(
                    """
                    SELECT \(unescaped: MessageColumns.selection) FROM message
                    WHERE conversation_id = \(conversationID)
                      AND (sent_at, id) > (SELECT sent_at, id FROM message WHERE id = \(id) AND conversation_id = \(conversationID))
                    ORDER BY sent_at ASC, id ASC LIMIT \(limit)
                    """
                ).map { try MessageColumns.storedMessage($0, reader: reader) }
            }
        }
    }

    public func conversations(member memberID: String) async throws(StoreError) -> [ConversationSummary] {
        let reader = self.reader
        return try await read { transaction in
            try await transaction.query(
                """
                SELECT \(unescaped: MessageColumns.selection), c.id, c.counted_total - m.seen, c.message_count
                FROM member m
                JOIN conversation c ON c.id = m.conversation_id
                JOIN message ON message.id = c.last_message_id
                WHERE m.member_id = \(memberID) AND m.active AND c.message_count > 0
                ORDER BY c.last_sent_at DESC, c.last_message_id DESC
                """
            ).map { row in
                let extra = row.makeRandomAccess()
                let end = MessageColumns.count
                return ConversationSummary(
                    id: try extra[end].decode(String.self), unreadCount: try extra[end + 1].decode(Int.self),
                    messageCount: try extra[end + 2].decode(Int.self), lastMessage: try MessageColumns.storedMessage(row, reader: reader))
            }
        }
    }

    public func readState(member memberID: String, conversation conversationID: String) async throws(StoreError) -> ReadState {
        try await read { transaction in
            guard
                let row = try await transaction.query(
                    """
                    SELECT m.read_message_id, c.counted_total - m.seen FROM member m JOIN conversation c ON c.id = m.conversation_id
                    WHERE m.conversation_id = \(conversationID) AND m.member_id = \(memberID) AND m.active
                    """
                ).first
            else { return ReadState(readUpTo: nil, unreadCount: 0) }
            let (mark, unread) = try row.decode((String?, Int).self)
            return ReadState(readUpTo: mark, unreadCount: unread)
        }
    }

    public func unreadCount(member memberID: String, conversation conversationID: String) async throws(StoreError) -> Int {
        try await readState(member: memberID, conversation: conversationID).unreadCount
    }

    public func unreadCounts(member memberID: String) async throws(StoreError) -> [String: Int] {
        try await read { transaction in
            var counts: [String: Int] = [:]
            for row in try await transaction.query(
                """
                SELECT c.id, c.counted_total - m.seen FROM member m JOIN conversation c ON c.id = m.conversation_id
                WHERE m.member_id = \(memberID) AND m.active AND c.counted_total > m.seen
                """)
            {
                let (id, count) = try row.decode((String, Int).self)
                counts[id] = count
            }
            return counts
        }
    }

    public func totalUnreadCount(member memberID: String) async throws(StoreError) -> Int {
        try await read { transaction in
            try await transaction.query(
                """
                SELECT COALESCE(SUM(c.counted_total - m.seen), 0)::bigint FROM member m JOIN conversation c ON c.id = m.conversation_id
                WHERE m.member_id = \(memberID) AND m.active
                """
            )[0].decode(Int.self)
        }
    }

    public func members(ofConversation conversationID: String) async throws(StoreError) -> [String] {
        try await read { transaction in
            try await transaction.query(
                "SELECT member_id FROM member WHERE conversation_id = \(conversationID) AND active ORDER BY member_id"
            ).map { try $0.decode(String.self) }
        }
    }

    public func conversationIDs(member memberID: String) async throws(StoreError) -> [String] {
        try await read { transaction in
            try await transaction.query(
                "SELECT conversation_id FROM member WHERE member_id = \(memberID) AND active ORDER BY conversation_id"
            ).map { try $0.decode(String.self) }
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
        let reader = self.reader
        return try await read { transaction in
            try await transaction.query(
                """
                SELECT \(unescaped: MessageColumns.selection) FROM message
                WHERE root_id = \(messageID) AND conversation_id = (SELECT conversation_id FROM message WHERE id = \(messageID))
                ORDER BY sent_at, id
                """
            ).map { try MessageColumns.storedMessage($0, reader: reader) }
        }
    }
}
