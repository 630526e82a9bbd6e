import Foundation
import GRDB
import MissiveServer
import MissiveTestSupport
import Testing

/// The server's own files are made and upgraded by numbered migrations: a file made before they were numbered opens
/// with everything in it, and a file from a newer version is refused with the reason, never written to.
@Suite struct ServerSchemaTests {
    /// An accounts file as versions before the migrations made it (tables made if missing, nothing recorded).
    @Test func anAccountsFileFromBeforeTheMigrationsOpensWithItsMembersAndIsUpgraded() async throws {
        let path = try Fixtures.temporaryDirectory() + "/accounts.sqlite"
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE account(member TEXT PRIMARY KEY NOT NULL, created_at INTEGER NOT NULL);
                    CREATE TABLE token(
                        hash BLOB PRIMARY KEY NOT NULL, member TEXT NOT NULL REFERENCES account(member),
                        created_at INTEGER NOT NULL, revoked_at INTEGER);
                    CREATE TABLE pending(
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT, member TEXT NOT NULL, conversation TEXT NOT NULL,
                        envelope BLOB NOT NULL, kept_at INTEGER NOT NULL);
                    CREATE TABLE session(
                        hash BLOB PRIMARY KEY NOT NULL, token_hash BLOB NOT NULL REFERENCES token(hash),
                        created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
                    INSERT INTO account(member, created_at) VALUES ('alice', 1);
                    """)
        }
        try old.close()
        let accounts = try ServerAccounts(path: path)
        #expect(try accounts.list().map(\.member) == ["alice"])
        // The tables of later steps are there now, and a token works.
        let token = try accounts.add(member: "bob")
        #expect(try await accounts.member(forToken: token) == "bob")
        let recorded = try await DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        #expect(recorded.count == 4 && recorded.first?.hasPrefix("1 ") == true, "\(recorded)")
        // Opened again, nothing is applied twice.
        #expect(try ServerAccounts(path: path).list().map(\.member) == ["alice", "bob"])
    }

    @Test func anAccountsFileFromANewerVersionIsRefusedWithTheReasonAndLeftAlone() async throws {
        let path = try Fixtures.temporaryDirectory() + "/accounts.sqlite"
        _ = try ServerAccounts(path: path).add(member: "alice")
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations(identifier) VALUES ('5 something to come')")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let refused = #expect(throws: AccountError.self) { try ServerAccounts(path: path) }
        #expect(refused?.code == .cannotOpen)
        #expect(refused?.message.contains(path) == true && refused?.message.contains("'5 something to come'") == true, "\(refused?.message ?? "")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
