import GRDB

/// The SQLite schema of ``SQLiteMessageStore``, as migrations: a store written by an older version is
/// brought up to date when it is opened.
enum StoreSchema {
    /// The migrations, in order. Never edit a released one: add another.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Facts about the store itself: its owner.
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
        return migrator
    }
}
