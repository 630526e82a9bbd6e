import GRDB

/// The SQLite schema of ``SQLiteMessageStore``, as migrations: a store written by an older version is
/// brought up to date when it is opened.
enum StoreSchema {
    /// The migrations, in order. Never edit a released one: add another.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Facts about the store itself: its kind and owner.
            try db.execute(sql: "CREATE TABLE store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
            // One row per stored message. `seq` is the order of ingestion and the search index's rowid.
            try db.execute(
                sql: """
                    CREATE TABLE message (
                        seq INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        conversation_id TEXT NOT NULL,
                        sender_id TEXT NOT NULL,
                        sent_at INTEGER NOT NULL,
                        object_name TEXT NOT NULL,
                        business_id TEXT,
                        known INTEGER NOT NULL,
                        digest TEXT NOT NULL,
                        persistence INTEGER NOT NULL,
                        counted INTEGER NOT NULL,
                        words TEXT NOT NULL,
                        search_text TEXT NOT NULL,
                        parent_id TEXT,
                        root_id TEXT,
                        root_pending INTEGER NOT NULL DEFAULT 0,
                        reply_count INTEGER NOT NULL DEFAULT 0,
                        reason TEXT,
                        envelope BLOB NOT NULL
                    )
                    """)
            try db.execute(sql: "CREATE INDEX message_by_conversation ON message(conversation_id, sent_at, id)")
            // Only the messages that count: unread counts after a read mark come from this index alone.
            try db.execute(sql: "CREATE INDEX message_counted ON message(conversation_id, sent_at, id) WHERE counted = 1")
            try db.execute(sql: "CREATE INDEX message_by_root ON message(root_id) WHERE root_id IS NOT NULL")
            // Replies whose thread's root is not stored yet, found again when it arrives.
            try db.execute(sql: "CREATE INDEX message_root_pending ON message(root_id) WHERE root_pending = 1")
            try db.execute(sql: "CREATE INDEX message_unknown ON message(object_name) WHERE known = 0")
            // Counters kept on every change, so that reading them never scans messages.
            try db.execute(
                sql: """
                    CREATE TABLE conversation (
                        id TEXT PRIMARY KEY,
                        unread INTEGER NOT NULL DEFAULT 0,
                        message_count INTEGER NOT NULL DEFAULT 0,
                        last_sent_at INTEGER,
                        last_message_id TEXT,
                        read_sent_at INTEGER,
                        read_message_id TEXT
                    ) WITHOUT ROWID
                    """)
            try db.execute(sql: "CREATE INDEX conversation_by_activity ON conversation(last_sent_at DESC, last_message_id DESC)")
            // The search index: external content (the words live in `message.search_text`), unicode61 with
            // diacritics folded; CJK runs arrive already split into pairs (see SearchText).
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE message_search USING fts5(
                        search_text, content='message', content_rowid='seq',
                        tokenize='unicode61 remove_diacritics 2'
                    )
                    """)
        }
        // Many members: per-member read marks and counters, and the change feed (design in StoreReference).
        migrator.registerMigration("v2-members") { db in
            // `counted` now says whether the persistence is `counted`: the message counts for every member but
            // its sender. (It said so for the owner alone before.)
            try db.execute(sql: "UPDATE message SET counted = (persistence = 3)")
            try db.execute(
                sql: """
                    CREATE TABLE conversation_v2 (
                        id TEXT PRIMARY KEY,
                        message_count INTEGER NOT NULL DEFAULT 0,
                        counted_total INTEGER NOT NULL DEFAULT 0,
                        last_sent_at INTEGER,
                        last_message_id TEXT
                    ) WITHOUT ROWID
                    """)
            // A member's unread count is `counted_total - seen`: `seen` counts the counted messages it has
            // read or sent, so reading a count is one row of each table.
            try db.execute(
                sql: """
                    CREATE TABLE member (
                        conversation_id TEXT NOT NULL,
                        member_id TEXT NOT NULL,
                        active INTEGER NOT NULL DEFAULT 1,
                        seen INTEGER NOT NULL DEFAULT 0,
                        read_sent_at INTEGER,
                        read_message_id TEXT,
                        PRIMARY KEY (conversation_id, member_id)
                    ) WITHOUT ROWID
                    """)
            // The store's reader (its owner, or '' for one without a name) keeps the read marks it had.
            try db.execute(
                sql: """
                    INSERT INTO conversation_v2(id, message_count, last_sent_at, last_message_id)
                    SELECT id, message_count, last_sent_at, last_message_id FROM conversation
                    """)
            try db.execute(
                sql: """
                    INSERT INTO member(conversation_id, member_id, read_sent_at, read_message_id)
                    SELECT id, COALESCE((SELECT value FROM store_info WHERE key = 'owner'), ''), read_sent_at, read_message_id
                    FROM conversation
                    """)
            try db.execute(sql: "DROP TABLE conversation")
            try db.execute(sql: "ALTER TABLE conversation_v2 RENAME TO conversation")
            try db.execute(sql: "CREATE INDEX conversation_by_activity ON conversation(last_sent_at DESC, last_message_id DESC)")
            try db.execute(sql: "CREATE INDEX member_by_member ON member(member_id) WHERE active = 1")
            // The members whose mark is at or after a message that arrives late: a range of this index.
            try db.execute(sql: "CREATE INDEX member_by_mark ON member(conversation_id, read_sent_at, read_message_id)")
            // The change feed: positions grow in commit order (writes are serialized), never reused.
            try db.execute(
                sql: """
                    CREATE TABLE change (
                        position INTEGER PRIMARY KEY AUTOINCREMENT,
                        kind TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        message_id TEXT,
                        member_id TEXT
                    )
                    """)
            // A store that already holds something was personal; a new one takes the kind it is opened with.
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO store_info(key, value) SELECT 'kind', 'personal'
                    WHERE EXISTS (SELECT 1 FROM message) OR EXISTS (SELECT 1 FROM store_info WHERE key = 'owner')
                    """)
            try SQLiteMessageStore.recount(db)
        }
        // Messages the store does not keep (`none`, `status`) ride the feed: a `transient` change carries the
        // envelope, its persistence and when it was published, so that it can be removed 10 minutes later.
        migrator.registerMigration("v3-transient") { db in
            try db.execute(sql: "ALTER TABLE change ADD COLUMN envelope BLOB")
            try db.execute(sql: "ALTER TABLE change ADD COLUMN persistence INTEGER")
            try db.execute(sql: "ALTER TABLE change ADD COLUMN published_at INTEGER")
            try db.execute(sql: "CREATE INDEX change_transient ON change(published_at) WHERE kind = 'transient'")
        }
        // The messages isolated plugins failed on (PluginFailure), so that another process on the store does not hand
        // them to the same plugin build again: keyed by the plugin file's SHA-256, the type, the content's SHA-256 and
        // the operation. `failed_at` is in milliseconds since 1970.
        migrator.registerMigration("v4-plugin-failures") { db in
            try db.execute(
                sql: """
                    CREATE TABLE plugin_failure (
                        plugin_sha256 TEXT NOT NULL,
                        object_name TEXT NOT NULL,
                        content_sha256 TEXT NOT NULL,
                        operation TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        plugin_file TEXT NOT NULL,
                        failed_at INTEGER NOT NULL,
                        PRIMARY KEY (plugin_sha256, object_name, content_sha256, operation)
                    ) WITHOUT ROWID
                    """)
        }
        // A thread stays in its conversation: a store written before replies were scoped may count a reply of one
        // conversation under a root of another, or take such a root as settled. Counted again from the rows.
        migrator.registerMigration("v5-threads-in-conversation") { db in
            try SQLiteMessageStore.recountThreads(db)
        }
        return migrator
    }
}
