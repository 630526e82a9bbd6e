import Missive
import MissiveStore
import PostgresNIO

/// The PostgreSQL schema of ``PostgresMessageStore``, as numbered migrations recorded in `missive_schema`: a
/// store written by an older version is brought up to date when it is opened, one written by a newer version is
/// refused.
///
/// The tables and their columns are SQLite's (see docs/POSTGRES.md); identifiers are compared byte by byte
/// (`COLLATE "C"`), as SQLite compares them, so that the order (sent_at, id) is the same on both backends.
enum PostgresSchema {
    /// The migrations, in order: version `index + 1` runs `migrations[index]`. Never edit a released one: add
    /// another.
    static let migrations: [[String]] = [
        [
            // Facts about the store itself: its kind and owner.
            "CREATE TABLE store_info (key text COLLATE \"C\" PRIMARY KEY, value text COLLATE \"C\" NOT NULL)",
            // One row per stored message. `seq` is the order of ingestion; `search` the token stream of SQLite's
            // index (SearchQuery.indexTokens), with positions, for phrases.
            """
            CREATE TABLE message (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                id text COLLATE "C" NOT NULL UNIQUE,
                conversation_id text COLLATE "C" NOT NULL,
                sender_id text COLLATE "C" NOT NULL,
                sent_at bigint NOT NULL,
                object_name text COLLATE "C" NOT NULL,
                business_id text COLLATE "C",
                known boolean NOT NULL,
                digest text NOT NULL,
                persistence integer NOT NULL,
                counted boolean NOT NULL,
                words text NOT NULL,
                search_text text NOT NULL,
                search tsvector NOT NULL,
                parent_id text COLLATE "C",
                root_id text COLLATE "C",
                root_pending boolean NOT NULL DEFAULT false,
                reply_count bigint NOT NULL DEFAULT 0,
                reason text,
                envelope bytea NOT NULL
            )
            """,
            "CREATE INDEX message_by_conversation ON message (conversation_id, sent_at, id)",
            // Only the messages that count: unread counts after a read mark come from this index alone.
            "CREATE INDEX message_counted ON message (conversation_id, sent_at, id) WHERE counted",
            "CREATE INDEX message_by_root ON message (root_id) WHERE root_id IS NOT NULL",
            // Replies whose thread's root is not stored yet, found again when it arrives.
            "CREATE INDEX message_root_pending ON message (root_id) WHERE root_pending",
            "CREATE INDEX message_unknown ON message (object_name) WHERE NOT known",
            "CREATE INDEX message_search ON message USING gin (search)",
            // Counters kept on every change, so that reading them never scans messages.
            """
            CREATE TABLE conversation (
                id text COLLATE "C" PRIMARY KEY,
                message_count bigint NOT NULL DEFAULT 0,
                counted_total bigint NOT NULL DEFAULT 0,
                last_sent_at bigint,
                last_message_id text COLLATE "C"
            )
            """,
            "CREATE INDEX conversation_by_activity ON conversation (last_sent_at DESC, last_message_id DESC)",
            // A member's unread count is `counted_total - seen`.
            """
            CREATE TABLE member (
                conversation_id text COLLATE "C" NOT NULL,
                member_id text COLLATE "C" NOT NULL,
                active boolean NOT NULL DEFAULT true,
                seen bigint NOT NULL DEFAULT 0,
                read_sent_at bigint,
                read_message_id text COLLATE "C",
                PRIMARY KEY (conversation_id, member_id)
            )
            """,
            "CREATE INDEX member_by_member ON member (member_id) WHERE active",
            // The members whose mark is at or after a message that arrives late: a range of this index.
            "CREATE INDEX member_by_mark ON member (conversation_id, read_sent_at, read_message_id)",
            // The change feed: positions are handed out under an advisory lock, in commit order.
            """
            CREATE TABLE change (
                position bigserial PRIMARY KEY,
                kind text NOT NULL,
                conversation_id text COLLATE "C" NOT NULL,
                message_id text COLLATE "C",
                member_id text COLLATE "C"
            )
            """,
        ],
        // Messages the store does not keep (`none`, `status`) ride the feed: a `transient` change carries the
        // envelope, its persistence and when it was published, so that it can be removed 10 minutes later.
        [
            "ALTER TABLE change ADD COLUMN envelope bytea, ADD COLUMN persistence integer, ADD COLUMN published_at bigint",
            "CREATE INDEX change_transient ON change (published_at) WHERE kind = 'transient'",
        ],
        // The messages isolated plugins failed on (PluginFailure), shared by every process on the store: keyed by the
        // plugin file's SHA-256, the type, the content's SHA-256 and the operation. `failed_at` is in milliseconds.
        [
            """
            CREATE TABLE plugin_failure (
                plugin_sha256 text COLLATE "C" NOT NULL,
                object_name text COLLATE "C" NOT NULL,
                content_sha256 text COLLATE "C" NOT NULL,
                operation text COLLATE "C" NOT NULL,
                reason text NOT NULL,
                plugin_file text NOT NULL,
                failed_at bigint NOT NULL,
                PRIMARY KEY (plugin_sha256, object_name, content_sha256, operation)
            )
            """
        ],
        // A thread stays in its conversation: a store written before replies were scoped may count a reply of one
        // conversation under a root of another, or take such a root as settled. Counted again from the rows.
        recountThreads,
    ]

    /// Sets every message's reply count and whether it waits for its thread's root, from the rows: a reply's root
    /// counts only in the reply's own conversation.
    static let recountThreads = [
        """
        UPDATE message m SET root_pending = NOT m.root_pending
        WHERE m.root_pending <> (m.root_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM message p WHERE p.id = m.root_id AND p.conversation_id = m.conversation_id))
        """,
        """
        UPDATE message m SET reply_count = r.replies
        FROM (SELECT p.id, (SELECT COUNT(*) FROM message c WHERE c.root_id = p.id AND c.conversation_id = p.conversation_id) AS replies
            FROM message p) AS r
        WHERE r.id = m.id AND m.reply_count <> r.replies
        """,
    ]

    /// The newest schema this version knows.
    static var currentVersion: Int { migrations.count }

    /// Creates or upgrades the schema on `connection`, under ``PostgresMessageStore/schemaLock`` (which the
    /// caller holds).
    ///
    /// - Throws: `StoreError/Code/newerSchema` for a store of a newer version; `StoreError/Code/cannotOpen`
    ///   for a database that holds another application's tables.
    static func migrate(_ transaction: Transaction, database: String, location: String) async throws {
        let hasSchema = try await transaction.query("SELECT to_regclass('missive_schema') IS NOT NULL")[0].decode(Bool.self)
        if !hasSchema {
            let others = try await transaction.query(
                """
                SELECT table_name::text FROM information_schema.tables
                WHERE table_schema = current_schema() ORDER BY table_name LIMIT 6
                """
            ).map { try $0.decode(String.self) }
            guard others.isEmpty else {
                let listed = others.prefix(5).joined(separator: ", ") + (others.count > 5 ? ", ..." : "")
                throw StoreError(
                    .cannotOpen,
                    "database \(database) holds tables of another application: \(listed); a Missive store needs a database of its own",
                    path: location)
            }
            try await transaction.query(
                """
                CREATE TABLE missive_schema (
                    version integer PRIMARY KEY,
                    written_by text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
        }
        let newest = try await transaction.query("SELECT version, written_by FROM missive_schema ORDER BY version DESC LIMIT 1").first
            .map { try $0.decode((Int, String).self) }
        let version = newest?.0 ?? 0
        guard version <= currentVersion else {
            throw StoreError(
                .newerSchema,
                "the store was written by Missive \(newest?.1 ?? "?") (schema version \(version)); this version (\(MissiveVersion.string)) knows up to version \(currentVersion) and cannot open it",
                path: location)
        }
        for index in version..<currentVersion {
            for statement in migrations[index] { try await transaction.query(PostgresQuery(unsafeSQL: statement)) }
            try await transaction.query("INSERT INTO missive_schema(version, written_by) VALUES (\(index + 1), \(MissiveVersion.string))")
        }
    }
}
