import Foundation
import MissivePostgresStore
import MissiveStore
import MissiveTestSupport

/// The backends every store test runs on. Each test that takes one makes its own store: a new SQLite file in
/// its own folder, or a new database on the test server (`Fixtures.postgresURL()`, which fails the test when no
/// server is running: the suite never skips a backend).
package enum StoreBackend: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqlite
    case postgres

    package var description: String { rawValue }

    /// Where a new, empty store of this backend is: a path or a URL, as `missive store --db` takes it.
    package func newLocation() async throws -> String {
        switch self {
        case .sqlite: try Fixtures.temporaryDirectory() + "/store.sqlite"
        // A small pool: tests run in parallel, each with a store of its own, against one server.
        case .postgres: try await Fixtures.newPostgresDatabase() + "?pool_size=3&connect_timeout=60"
        }
    }

    /// Opens the store at `location` as `kind` (`nil`: whatever it is).
    package func open(_ location: String, kind: StoreKind?) async throws -> any MessageStore {
        switch self {
        case .sqlite: try SQLiteMessageStore(path: location, kind: kind)
        case .postgres: try await StoreLocation(parsing: location).open(kind: kind)
        }
    }

    /// A new personal store owned by `owner`.
    package func newStore(owner: String? = "alice") async throws -> any MessageStore {
        try await open(try await newLocation(), kind: .personal(owner: owner))
    }

    /// A new shared store.
    package func newSharedStore() async throws -> any MessageStore {
        try await open(try await newLocation(), kind: .shared)
    }
}
