import Foundation
import MissiveTestSupport
import Testing

/// The PostgreSQL harness the store tests stand on: the server `Scripts/postgres.sh` starts, reached through
/// `MISSIVE_TEST_POSTGRES`, and one fresh database per test. Without the server these tests fail, they never skip.
@Suite struct PostgresHarnessTests {
    @Test func aFreshDatabaseIsCreatedQueriedAndDropped() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        let name = try #require(Fixtures.databaseName(url))
        #expect(name.hasPrefix("missive_t_"))
        #expect(try await Fixtures.psql(url, "SELECT 1") == "1")
        // The test's own database, owned by the tests' role, which is no superuser.
        #expect(try await Fixtures.psql(url, "SELECT current_database()") == name)
        let owner = try await Fixtures.psql(
            url,
            """
            SELECT pg_get_userbyid(datdba) || ' ' || rolsuper FROM pg_database, pg_roles
            WHERE datname = current_database() AND rolname = current_user
            """)
        #expect(owner == "missive false")
        // A table made in it stays in it (the table is named after the database, so no other test has one).
        try await Fixtures.psql(url, "CREATE TABLE \(name) (id integer PRIMARY KEY); INSERT INTO \(name) VALUES (1), (2)")
        #expect(try await Fixtures.psql(url, "SELECT count(*) FROM \(name)") == "2")
        #expect(try await Fixtures.psql(try Fixtures.postgresURL(), "SELECT to_regclass('\(name)') IS NULL") == "t")

        await Fixtures.dropPostgresDatabaseNow(url)
        let gone = try await Fixtures.psql(try Fixtures.postgresURL(), "SELECT count(*) FROM pg_database WHERE datname = '\(name)'")
        #expect(gone == "0")
        let error = await #expect(throws: PostgresHarnessError.self) { try await Fixtures.psql(url, "SELECT 1") }
        #expect(error?.description.contains("database \"\(name)\" does not exist") == true, "\(String(describing: error))")
        // Dropping it again is no error.
        await Fixtures.dropPostgresDatabaseNow(url)
    }

    @Test func eachCallGivesADatabaseOfItsOwn() async throws {
        let first = try await Fixtures.newPostgresDatabase()
        let second = try await Fixtures.newPostgresDatabase()
        defer {
            Fixtures.dropPostgresDatabase(first)
            Fixtures.dropPostgresDatabase(second)
        }
        #expect(first != second)
        try await Fixtures.psql(first, "CREATE TABLE only_in_first (x integer)")
        #expect(try await Fixtures.psql(second, "SELECT to_regclass('only_in_first') IS NULL") == "t")
    }

    @Test func theServerRefusesAWrongPassword() async throws {
        var components = try #require(URLComponents(string: try Fixtures.postgresURL()))
        #expect(components.host == "127.0.0.1", "the tests reach the server over loopback, where passwords are checked")
        components.password = "not-the-password"
        let wrong = try #require(components.string)
        let error = await #expect(throws: PostgresHarnessError.self) { try await Fixtures.psql(wrong, "SELECT 1") }
        #expect(error?.description.contains("password authentication failed") == true, "\(String(describing: error))")
        // The message names the URL without the password.
        #expect(error?.description.contains("not-the-password") == false)
    }
}
