import Foundation

/// The PostgreSQL server the store tests run against, and a fresh database on it for each test.
///
/// The server is the throwaway cluster `Scripts/postgres.sh` starts, found through `MISSIVE_TEST_POSTGRES` (or
/// started by the tests themselves when that is not set).
/// This target does not link a PostgreSQL driver: it makes and drops databases through Debian's `psql`.
extension Fixtures {
    /// The environment variable that holds the URL of the tests' PostgreSQL database, which
    /// `eval "$(bash Scripts/postgres.sh)"` exports.
    package static let postgresEnvironmentVariable = "MISSIVE_TEST_POSTGRES"

    /// Debian's PostgreSQL client, which makes and drops the tests' databases.
    package static let psqlPath = "/usr/bin/psql"

    /// How long one `psql` run may take before the harness gives up on it.
    private static let psqlTimeout: Duration = .seconds(60)

    /// The URL of the tests' PostgreSQL database, from `MISSIVE_TEST_POSTGRES`
    /// (`postgres://missive:missive@127.0.0.1:54329/missive_test`); when that is not set, the cluster that
    /// `Scripts/postgres.sh` starts (or finds already running) for this run, so that a plain `swift test` works on a
    /// machine with Debian's `postgresql-15`.
    ///
    /// - Throws: ``PostgresHarnessError`` when there is no server and none can be started: the store tests fail,
    ///   never skip, without a server.
    package static func postgresURL() throws(PostgresHarnessError) -> String {
        if let url = ProcessInfo.processInfo.environment[postgresEnvironmentVariable], !url.isEmpty { return url }
        return try startedServer.get()
    }

    /// The cluster `Scripts/postgres.sh` started for this test process, once.
    private static let startedServer: Result<String, PostgresHarnessError> = {
        let script = repositoryRoot + "/Scripts/postgres.sh"
        let started: Run
        do {
            started = try runBlocking("/bin/bash", [script], timeout: .seconds(120))
        } catch {
            return .failure(PostgresHarnessError(description: "no PostgreSQL for the tests: cannot run \(script): \(error)"))
        }
        let prefix = "export \(postgresEnvironmentVariable)="
        guard started.status == 0, let line = started.stdout.split(separator: "\n").last(where: { $0.hasPrefix(prefix) }) else {
            return .failure(
                PostgresHarnessError(
                    description: "no PostgreSQL for the tests: \(postgresEnvironmentVariable) is not set and `bash Scripts/postgres.sh` "
                        + "could not start one (exit status \(started.status)); the store tests fail rather than skip without it:\n"
                        + started.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        return .success(String(line.dropFirst(prefix.count)))
    }()

    /// Creates a new empty database with a unique name on the tests' server, for one test, and returns its URL:
    /// the URL of ``postgresURL()`` with the new database's name.
    ///
    /// The database belongs to the tests' role. ``dropPostgresDatabase(_:)`` removes it; one a failed test
    /// leaves behind goes with the cluster (`bash Scripts/postgres.sh stop`).
    package static func newPostgresDatabase() async throws -> String {
        let server = try await offThePool { try postgresURL() }
        let name = "missive_t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await psql(server, "CREATE DATABASE \(quotedIdentifier(name))")
        return try url(server, database: name)
    }

    /// Drops the database `url` names, and with it any connection still open to it, on a thread of its own: a
    /// test's `defer` starts it and does not wait. Best effort: a database that is already gone, a server that
    /// does not answer, or a test process that ends first is not an error, since the cluster is thrown away anyway.
    package static func dropPostgresDatabase(_ url: String) {
        guard let sql = dropStatement(url), let server = try? postgresURL() else { return }
        Thread { _ = try? psqlBlocking(server, sql) }.start()
    }

    /// Drops the database `url` names, as ``dropPostgresDatabase(_:)`` does, and returns once it is gone.
    package static func dropPostgresDatabaseNow(_ url: String) async {
        guard let sql = dropStatement(url), let server = try? postgresURL() else { return }
        _ = try? await psql(server, sql)
    }

    /// The statement that drops the database `url` names, and any connection still open to it.
    private static func dropStatement(_ url: String) -> String? {
        databaseName(url).map { "DROP DATABASE IF EXISTS \(quotedIdentifier($0)) WITH (FORCE)" }
    }

    /// Runs `sql` with `psql` on the database `url` names, stopping at the first error, and returns what it
    /// prints: unaligned rows, one a line, without headers or the trailing newline.
    ///
    /// - Throws: ``PostgresHarnessError`` with `psql`'s own message when it fails, or when it runs longer than
    ///   a minute.
    @discardableResult
    package static func psql(_ url: String, _ sql: String) async throws -> String {
        try await offThePool { try psqlBlocking(url, sql) }
    }

    /// ``psql(_:_:)``, blocking the calling thread until `psql` ends.
    private static func psqlBlocking(_ url: String, _ sql: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: psqlPath) else {
            throw PostgresHarnessError(description: "no \(psqlPath): the PostgreSQL tests need Debian's postgresql-client")
        }
        let result = try runBlocking(
            psqlPath, [url, "--no-psqlrc", "--quiet", "--no-align", "--tuples-only", "-v", "ON_ERROR_STOP=1", "-c", sql],
            environment: ["PGCONNECT_TIMEOUT": "10"], timeout: psqlTimeout)
        guard !result.timedOut else {
            throw PostgresHarnessError(description: "psql on \(redacted(url)) ran past \(psqlTimeout) for: \(sql)")
        }
        guard result.status == 0 else {
            let message = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            throw PostgresHarnessError(
                description: "psql on \(redacted(url)) failed (exit status \(result.status)) for: \(sql)\n\(message)")
        }
        return result.stdout.hasSuffix("\n") ? String(result.stdout.dropLast()) : result.stdout
    }

    /// The name of the database `url` names (its path without the slash), or `nil` when it names none.
    package static func databaseName(_ url: String) -> String? {
        guard let components = URLComponents(string: url) else { return nil }
        let name = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        return name.isEmpty ? nil : name
    }

    /// `url` with its database replaced by `database`; its user, password, host, port and options kept.
    private static func url(_ url: String, database: String) throws(PostgresHarnessError) -> String {
        guard var components = URLComponents(string: url), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresHarnessError(
                description: "\(postgresEnvironmentVariable) is not a postgres:// URL: \(redacted(url))")
        }
        components.path = "/" + database
        guard let result = components.string else {
            throw PostgresHarnessError(description: "cannot name the database \(database) in \(redacted(url))")
        }
        return result
    }

    /// `url` with its password, if any, replaced by `***`, for messages.
    private static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }

    /// `name` as an SQL identifier: in double quotes, with its own double quotes doubled.
    private static func quotedIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// Why the PostgreSQL test harness could not give a test its database: no server configured, or `psql`
/// failed (its message is in the description).
package struct PostgresHarnessError: Error, CustomStringConvertible {
    /// What went wrong, with `psql`'s own message when it failed.
    package let description: String
}
