import Foundation
import MissiveTestSupport
import Testing

/// A store URL without a password: `missive` finds it where PostgreSQL's own tools do, against the test server,
/// whose role logs in with a password over loopback.
@Suite struct PostgresPasswordTests {
    @Test func aURLWithoutAPasswordTakesItFromPGPASSWORDThenFromThePasswordFile() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        var components = try #require(URLComponents(string: url))
        let password = try #require(components.password)
        components.password = nil
        let bare = try #require(components.string)
        let user = try #require(components.user)
        let host = try #require(components.host)
        let port = try #require(components.port)
        let database = try #require(Fixtures.databaseName(url))
        let home = try Fixtures.temporaryDirectory()
        func ingest(_ environment: [String: String]) async throws -> Fixtures.Run {
            try await Fixtures.missive(
                ["store", "ingest", "/dev/null", "--db", bare, "--shared"], environment: ["HOME": home, "PGPASSWORD": ""].merging(environment) { $1 })
        }

        // Nowhere: refused, and the message says where a password is looked for.
        let nowhere = try await ingest([:])
        #expect(nowhere.status != 0)
        #expect(nowhere.stderr.contains("PGPASSWORD") && nowhere.stderr.contains(".pgpass"), "\(nowhere.stderr)")
        // From the environment.
        #expect(try await ingest(["PGPASSWORD": password]).status == 0)
        // A wrong one in the environment wins over a right one in the file, as in PostgreSQL's tools.
        let file = home + "/.pgpass"
        try "\(host):\(port):\(database):\(user):\(password)\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(chmod(file, 0o600) == 0)
        let wrong = try await ingest(["PGPASSWORD": "not-" + password])
        #expect(wrong.status != 0 && wrong.stderr.contains("password authentication failed"), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("(the password came from PGPASSWORD)"), "\(wrong.stderr)")
        // From ~/.pgpass, which only its owner may read.
        let fromHome = try await ingest([:])
        #expect(fromHome.status == 0, "\(fromHome.stderr)")
        // A password file others may read is not used, as PostgreSQL's tools do not use it.
        #expect(chmod(file, 0o644) == 0)
        let shared = try await ingest([:])
        #expect(shared.status != 0)
        #expect(shared.stderr.contains("\(file) was not used: its group or others may read it"), "\(shared.stderr)")

        // PGPASSFILE names another file: comments, lines for other databases, wildcards, and escaped colons.
        let other = home + "/passwords"
        let escaped = password.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:")
        try """
            # the test server
            \(host):\(port):another_database:\(user):wrong
            *:\(port):*:\(user):\(escaped)
            *:*:*:*:wrong

            """.write(toFile: other, atomically: true, encoding: .utf8)
        #expect(chmod(other, 0o600) == 0)
        let fromFile = try await ingest(["PGPASSFILE": other])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
    }
}
