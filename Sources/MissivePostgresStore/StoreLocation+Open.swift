import Logging
import MissiveStore

extension StoreLocation {
    /// Opens the store this location names, on either backend: a `SQLiteMessageStore` for a file, a
    /// ``PostgresMessageStore`` for a PostgreSQL database. What a host or the CLI calls with the store URL it was
    /// given: `try await StoreLocation(parsing: url).open(kind: .shared)`.
    ///
    /// - Parameters:
    ///   - kind: the kind the store must be; `nil` opens whatever kind it is (a new store is then personal,
    ///     without an owner). See `SQLiteMessageStore/init(path:kind:)` and
    ///     ``PostgresMessageStore/open(_:kind:logger:)``.
    ///   - logger: where postgres-nio's log goes, for a PostgreSQL store.
    /// - Throws: what the backend's opening throws.
    public func open(
        kind: StoreKind?, logger: Logger = Logger(label: "missive.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws(StoreError) -> any MessageStore {
        switch self {
        case .sqlite(let path):
            try SQLiteMessageStore(path: path, kind: kind)
        case .postgres(let postgres):
            try await PostgresMessageStore.open(postgres, kind: kind, logger: logger)
        }
    }
}

/// The opening of a store by its location, before it was `StoreLocation.open(kind:logger:)`.
@available(*, deprecated, message: "use StoreLocation.open(kind:logger:): `try await StoreLocation(parsing: url).open(kind: kind)`")
public enum MessageStores {
    /// Opens the store at `location` (`StoreLocation.open(kind:logger:)`).
    public static func open(
        _ location: StoreLocation, kind: StoreKind?, logger: Logger = Logger(label: "missive.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws(StoreError) -> any MessageStore {
        try await location.open(kind: kind, logger: logger)
    }

    /// Parses `url` (see `StoreLocation`) and opens the store it names.
    public static func open(_ url: String, kind: StoreKind?) async throws(StoreError) -> any MessageStore {
        try await StoreLocation(parsing: url).open(kind: kind)
    }
}
