import Logging
import MissiveStore

/// Opens the store a store URL names, on either backend: what a host or the CLI calls with the URL it was given.
public enum MessageStores {
    /// Opens the store at `location`: a `SQLiteMessageStore` for a file, a ``PostgresMessageStore`` for a
    /// PostgreSQL database.
    ///
    /// - Parameters:
    ///   - location: the store: a SQLite file or a PostgreSQL database.
    ///   - kind: the kind the store must be; `nil` opens whatever kind it is (a new store is then personal,
    ///     without an owner). See `SQLiteMessageStore/init(path:kind:)` and
    ///     ``PostgresMessageStore/open(_:kind:logger:)``.
    ///   - logger: where postgres-nio's log goes, for a PostgreSQL store.
    /// - Throws: what the backend's opening throws.
    public static func open(
        _ location: StoreLocation, kind: StoreKind?, logger: Logger = Logger(label: "missive.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws(StoreError) -> any MessageStore {
        switch location {
        case .sqlite(let path):
            try SQLiteMessageStore(path: path, kind: kind)
        case .postgres(let postgres):
            try await PostgresMessageStore.open(postgres, kind: kind, logger: logger)
        }
    }

    /// Parses `url` (see `StoreLocation`) and opens the store it names.
    ///
    /// - Throws: `StoreError/Code/cannotOpen` for a malformed URL; otherwise what the backend's opening throws.
    public static func open(_ url: String, kind: StoreKind?) async throws(StoreError) -> any MessageStore {
        try await open(try StoreLocation(parsing: url), kind: kind)
    }
}
