import GRDB

/// The server's own SQLite files (the accounts file and the media index), made and upgraded by numbered
/// migrations (GRDB's `DatabaseMigrator`, which records the ones applied in the file's `grdb_migrations` table).
///
/// Each migration is applied once, in order, when the file is opened; a file made before the migrations were
/// numbered has their tables already, so each step makes its tables only when they are missing. A file that records
/// a migration this build does not know was made by a newer Missive and is refused rather than written to. A
/// change to the schema is a new migration at the end of the list, never an edit of one that shipped.
enum ServerSchema {
    /// The accounts file: members, tokens, the `none` messages kept for offline members, browser sessions, type
    /// reports, conversation claims, and who is online on which instance.
    static let accounts: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1 accounts, tokens, pending messages, sessions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS account(member TEXT PRIMARY KEY NOT NULL, created_at INTEGER NOT NULL);
                    CREATE TABLE IF NOT EXISTS token(
                        hash BLOB PRIMARY KEY NOT NULL, member TEXT NOT NULL REFERENCES account(member),
                        created_at INTEGER NOT NULL, revoked_at INTEGER);
                    CREATE INDEX IF NOT EXISTS token_member ON token(member);
                    CREATE TABLE IF NOT EXISTS pending(
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT, member TEXT NOT NULL, conversation TEXT NOT NULL,
                        envelope BLOB NOT NULL, kept_at INTEGER NOT NULL);
                    CREATE INDEX IF NOT EXISTS pending_member ON pending(member, sequence);
                    CREATE TABLE IF NOT EXISTS session(
                        hash BLOB PRIMARY KEY NOT NULL, token_hash BLOB NOT NULL REFERENCES token(hash),
                        created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
                    CREATE INDEX IF NOT EXISTS session_token ON session(token_hash);
                    """)
        }
        migrator.registerMigration("2 type reports") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS type_report(member TEXT PRIMARY KEY NOT NULL, reported_at INTEGER NOT NULL);
                    CREATE TABLE IF NOT EXISTS type_report_entry(
                        member TEXT NOT NULL REFERENCES type_report(member), object_name TEXT NOT NULL, version TEXT NOT NULL,
                        PRIMARY KEY(member, object_name)) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("3 conversation claims") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS conversation_claim(
                        id TEXT PRIMARY KEY NOT NULL, member TEXT NOT NULL, claimed_at INTEGER NOT NULL) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("4 presence") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS presence(
                        instance TEXT NOT NULL, member TEXT NOT NULL, connections INTEGER NOT NULL,
                        written_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
                        PRIMARY KEY (instance, member)) WITHOUT ROWID;
                    CREATE INDEX IF NOT EXISTS presence_member ON presence(member, expires_at);
                    """)
        }
        return migrator
    }()

    /// The media index: which conversation each uploaded file was uploaded to, by whom, as what type.
    static let media: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1 uploads") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS upload(
                        id INTEGER PRIMARY KEY, conversation TEXT NOT NULL, sha256 TEXT NOT NULL, mime_type TEXT NOT NULL,
                        size INTEGER NOT NULL, uploader TEXT NOT NULL, name TEXT, uploaded_at INTEGER NOT NULL);
                    CREATE INDEX IF NOT EXISTS upload_file ON upload(conversation, sha256, id);
                    """)
        }
        // Which stored messages name each file (kept when the server stores them), and the files their uploaders
        // deleted. The uploads made before references were kept count as referenced (message id ''), so that the
        // collection of unreferenced files never takes them.
        migrator.registerMigration("2 references, deletions, quota") { db in
            try db.execute(
                sql: """
                    CREATE TABLE media_reference(
                        conversation TEXT NOT NULL, sha256 TEXT NOT NULL, message_id TEXT NOT NULL,
                        PRIMARY KEY (conversation, sha256, message_id)) WITHOUT ROWID;
                    CREATE TABLE deleted_upload(
                        conversation TEXT NOT NULL, sha256 TEXT NOT NULL, deleted_at INTEGER NOT NULL, reason TEXT NOT NULL,
                        PRIMARY KEY (conversation, sha256)) WITHOUT ROWID;
                    CREATE INDEX upload_uploader ON upload(uploader);
                    CREATE INDEX upload_time ON upload(uploaded_at);
                    INSERT OR IGNORE INTO media_reference(conversation, sha256, message_id) SELECT DISTINCT conversation, sha256, '' FROM upload;
                    """)
        }
        return migrator
    }()

    /// Applies `migrator`'s migrations that `database` lacks; refuses a file made by a newer Missive.
    ///
    /// - Throws: `what` and the reason, when the file records migrations this build does not know, or one fails.
    static func upgrade(_ database: DatabaseQueue, with migrator: DatabaseMigrator, what: String) throws -> SchemaRefusal? {
        if try database.read({ try migrator.hasBeenSuperseded($0) }) {
            let known = Set(migrator.migrations)
            let applied = try database.read { try migrator.appliedIdentifiers($0) }
            return SchemaRefusal(
                message: "\(what) was made by a newer version of Missive (it records the migrations "
                    + applied.subtracting(known).sorted().map { "'\($0)'" }.joined(separator: ", ")
                    + ", which this version does not know); run that version, or a newer one, on it")
        }
        try migrator.migrate(database)
        return nil
    }

    /// Why a file cannot be opened by this version.
    struct SchemaRefusal: Error {
        let message: String
    }
}
