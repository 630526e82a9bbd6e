import Foundation
import Missive
import MissivePostgresStore
import MissiveStore
import MissiveTestSupport
import Testing

/// What goes wrong with a PostgreSQL store, against the real test server: each fault gives its code, a reason
/// that names the store, and never the password; a call that fails changes nothing and can be retried.
@Suite struct PostgresFaultTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    /// The store error `body` throws; a failed expectation when it throws none, or another error.
    func failure(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> StoreError? {
        do {
            try await body()
            Issue.record("no error", sourceLocation: sourceLocation)
            return nil
        } catch let error as StoreError {
            return error
        } catch {
            Issue.record("not a StoreError: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// `url` with its user's password replaced, or its port, or parameters added.
    func variant(of url: String, password: String? = nil, port: Int? = nil, parameters: String? = nil) throws -> String {
        var components = try #require(URLComponents(string: url))
        if let password { components.password = password }
        if let port { components.port = port }
        if let parameters { components.query = parameters }
        return try #require(components.string)
    }

    /// The PostgreSQL location of `url`.
    func postgresLocation(_ url: String) throws -> PostgresLocation {
        guard case .postgres(let location) = try StoreLocation(parsing: url) else { throw StoreError(.cannotOpen, "not PostgreSQL: \(url)") }
        return location
    }

    @Test func aMalformedURLIsRefusedBeforeAnythingIsOpened() async throws {
        let error = await failure { _ = try await StoreLocation(parsing: "postgres://missive:secret@127.0.0.1:99999/chat").open(kind: nil) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.contains("bad port '99999'") == true, "\(String(describing: error))")
        #expect(error?.path == "postgres://missive@127.0.0.1:99999/chat")
        #expect(error.map { "\($0)" }?.contains("secret") == false)
    }

    @Test func anUnreachableServerIsUnavailableAtOnce() async throws {
        let url = try variant(of: try await Fixtures.newPostgresDatabase(), port: 1, parameters: "connect_timeout=60")  // tcpmux: nothing listens there
        let started = ContinuousClock.now
        let error = await failure { _ = try await StoreLocation(parsing: url).open(kind: .shared) }
        #expect(error?.code == .unavailable)
        #expect(error?.message == "cannot open the store: the server cannot be reached: connection refused", "\(String(describing: error))")
        #expect(error?.path == (try StoreLocation(parsing: url)).description)
        #expect(error?.path?.contains(":missive@") == false)
        // Refused, not waited for until the connection timeout (a minute here).
        #expect(ContinuousClock.now - started < .seconds(30))

        // Through a socket folder that does not exist, the socket's path is named: the URL does not spell it out.
        let socket = await failure { _ = try await StoreLocation(parsing: "postgres://missive@/chat?host=/nonexistent-missive").open(kind: .shared) }
        #expect(socket?.code == .unavailable)
        #expect(socket?.message.hasSuffix("(socket /nonexistent-missive/.s.PGSQL.5432)") == true, "\(String(describing: socket))")
    }

    @Test func aWrongPasswordIsNamedWithoutThePassword() async throws {
        let url = try variant(of: try await Fixtures.newPostgresDatabase(), password: "not-the-password")
        let error = await failure { _ = try await StoreLocation(parsing: url).open(kind: .shared) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.contains("password authentication failed for user \"missive\"") == true, "\(String(describing: error))")
        #expect(error.map { "\($0)" }?.contains("not-the-password") == false)
    }

    @Test func aDatabaseOfAnotherApplicationIsLeftAlone() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        try await Fixtures.psql(url, "CREATE TABLE invoices (id integer PRIMARY KEY); CREATE TABLE customers (id integer)")
        let error = await failure { _ = try await StoreLocation(parsing: url).open(kind: .shared) }
        #expect(error?.code == .cannotOpen)
        let name = try #require(Fixtures.databaseName(url))
        #expect(error?.message == "database \(name) holds tables of another application: customers, invoices; a Missive store needs a database of its own")
        // Nothing of the store was created beside them.
        #expect(try await Fixtures.psql(url, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'") == "2")
    }

    @Test func aStoreOfANewerSchemaIsRefused() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let store = try await StoreLocation(parsing: url).open(kind: .shared)
        try await store.join(member: "alice", conversation: "team")
        try await Fixtures.psql(url, "INSERT INTO missive_schema(version, written_by) VALUES (99, '9.1.0')")
        let error = await failure { _ = try await StoreLocation(parsing: url).open(kind: .shared) }
        #expect(error?.code == .newerSchema)
        #expect(error?.message.contains("written by Missive 9.1.0 (schema version 99)") == true, "\(String(describing: error))")
        // Refused as it is: the newer store is not touched.
        #expect(try await Fixtures.psql(url, "SELECT count(*) FROM member") == "1")
    }

    @Test func aStatementPastTheTimeoutFailsAsTimeout() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let store = try await StoreLocation(parsing: url).open(kind: .shared)
        // Many rows whose words share a prefix, made by the server itself: a prefix search ranks them all.
        try await Fixtures.psql(
            url,
            """
            INSERT INTO message (id, conversation_id, sender_id, sent_at, object_name, known, digest, persistence, counted, words,
                search_text, search, envelope)
            SELECT 'm' || n, 'c' || (n % 50), 'bob', n, 'MS:Text', true, 'w' || n, 1, false, 'word' || n, 'word' || n,
                ('''word' || n || ''':1 ''wordy'':2 ''wordier'':3')::tsvector, '\\x7b7d'::bytea
            FROM generate_series(1, 200000) AS n
            """)
        let slow = try postgresLocation(try variant(of: url, parameters: "statement_timeout=1"))
        let impatient = try await PostgresMessageStore.open(slow, kind: .shared)
        let error = await failure { _ = try await impatient.search(SearchQuery(parsing: "word*"), member: nil, conversation: nil, limit: 10) }
        #expect(error?.code == .timeout)
        #expect(error?.message.contains("statement timeout (1 ms)") == true, "\(String(describing: error))")
        #expect(error?.path == slow.description)
        // Without the limit the same search runs.
        #expect(try await store.search(SearchQuery(parsing: "wordier"), member: nil, conversation: nil, limit: 3).count == 3)
        await impatient.close()
    }

    @Test func aConnectionKilledMidTransactionChangesNothingAndARetryWorks() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let application = "missive-kill-\(UUID().uuidString.prefix(8).lowercased())"
        let location = try postgresLocation(try variant(of: url, parameters: "application_name=\(application)"))
        let store = try await PostgresMessageStore.open(location, kind: .shared)
        try await store.join(member: "alice", conversation: "team")
        let batch = (1...20).map { StoreTests.text("m\($0)", "message \($0)", in: "team", from: "bob", at: Int64($0)) }

        // Another session holds the conversation table, so the ingest stops mid-transaction, after its message rows.
        let holder = application + "-holder"
        let locker = Task.detached {
            try? await Fixtures.psql(
                url, "SET application_name = '\(holder)'; BEGIN; LOCK TABLE conversation IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(180); COMMIT")
        }
        try await waitUntil("the other session holds the lock") {
            try await Fixtures.psql(
                url,
                """
                SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                WHERE c.relname = 'conversation' AND l.mode = 'AccessExclusiveLock' AND l.granted
                """) == "1"
        }
        let registry = self.registry
        let ingest = Task { try await store.ingest(batch, registry: registry) }
        try await waitUntil("the ingest waits for the lock, its messages written") {
            try await Fixtures.psql(
                url, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(application)' AND wait_event_type = 'Lock'") == "1"
        }
        let killed = try await Fixtures.psql(
            url,
            """
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE application_name = '\(application)' AND wait_event_type = 'Lock'
            """)
        #expect(killed == "1")

        var error: StoreError?
        if case .failure(let failure) = await ingest.result { error = failure as? StoreError }
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        #expect(error?.message.contains("can be retried") == true, "\(String(describing: error))")
        #expect(error?.path == location.description)

        // The other session ends; nothing was half-written: no message, no counter, no feed entry of the batch.
        try await Fixtures.psql(url, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '\(holder)'")
        _ = await locker.value
        #expect(try await Fixtures.psql(url, "SELECT count(*) FROM message") == "0")
        #expect(try await Fixtures.psql(url, "SELECT message_count FROM conversation WHERE id = 'team'") == "0")
        #expect(try await Fixtures.psql(url, "SELECT string_agg(kind, ',') FROM change") == "joined")

        // The same call again stores the whole batch, on a new connection.
        let report = try await store.ingest(batch, registry: registry)
        #expect(report.storedCount == 20)
        #expect(try await store.unreadCount(member: "alice", conversation: "team") == 20)
        #expect(try await store.checkConsistency().problems == [])
        await store.close()
    }

    /// Polls `condition` every 50 ms for up to 60 s (a loaded machine starts `psql` slowly).
    func waitUntil(_ what: String, _ condition: @Sendable () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("timed out waiting until \(what)", sourceLocation: sourceLocation)
        throw CancellationError()
    }
}
