import Foundation
import Missive
import MissivePostgresStore
import MissiveStore
import MissiveTestSupport
import Synchronization
import Testing

/// What only the PostgreSQL store has: its schema in a shared database, several store objects (as several
/// processes have) over one database, and notifications that wake a follower up.
@Suite struct PostgresStoreTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    @Test func severalFirstOpensAtOnceCreateTheSchemaOnce() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let kinds = try await withThrowingTaskGroup(of: StoreKind.self) { group in
            for _ in 0..<6 {
                group.addTask { try await StoreLocation(parsing: url).open(kind: .shared).kind }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(kinds == Array(repeating: .shared, count: 6))
        #expect(
            try await Fixtures.psql(url, "SELECT string_agg(version || ' ' || written_by, ',' ORDER BY version) FROM missive_schema")
                == (1...4).map { "\($0) \(MissiveVersion.string)" }.joined(separator: ","))
        #expect(try await Fixtures.psql(url, "SELECT value FROM store_info WHERE key = 'kind'") == "shared")
        // Opened again as the other kind: refused.
        do {
            _ = try await StoreLocation(parsing: url).open(kind: .personal(owner: "alice"))
            Issue.record("a shared store opened as personal")
        } catch {
            #expect(error.code == .kindMismatch)
        }
    }

    @Test func aPersonalStoreTakesItsOwnerOnceAndRefusesAnother() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let anonymous = try await StoreLocation(parsing: url).open(kind: nil)
        #expect(anonymous.kind == .personal(owner: nil))
        _ = try await anonymous.ingest(
            [StoreTests.text("m1", "hi", in: "c1", from: "alice", at: 1), StoreTests.text("m2", "hello", in: "c1", from: "bob", at: 2)],
            registry: registry)
        #expect(try await anonymous.unreadCount(conversation: "c1") == 2)
        // Named now: the owner's own message stops counting.
        let owned = try await StoreLocation(parsing: url).open(kind: .personal(owner: "alice"))
        #expect(owned.kind == .personal(owner: "alice"))
        #expect(try await owned.unreadCount(conversation: "c1") == 1)
        #expect(try await owned.checkConsistency().problems == [])
        do {
            _ = try await StoreLocation(parsing: url).open(kind: .personal(owner: "carol"))
            Issue.record("another owner was accepted")
        } catch {
            #expect(error.code == .ownerMismatch)
            #expect(error.path == (try StoreLocation(parsing: url)).description)
        }
    }

    @Test func aFollowerInAnotherStoreObjectIsWokenByTheNotification() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let writer = try await StoreLocation(parsing: url).open(kind: .shared)
        let follower = try await StoreLocation(parsing: url).open(kind: .shared)
        let start = try await follower.lastChangePosition()
        let registry = self.registry
        // The writer writes 300 ms after the follower starts waiting for up to 60 s: the wait ends with the
        // notification, long before its timeout (even on a loaded machine, which may delay both by seconds).
        let write = Task {
            try await Task.sleep(for: .milliseconds(300))
            _ = try await writer.ingest([StoreTests.text("m1", "hello", in: "c1", from: "bob", at: 1)], registry: registry)
        }
        let clock = ContinuousClock()
        let began = clock.now
        try await follower.waitForChanges(after: start, timeout: .seconds(60))
        let waited = clock.now - began
        try await write.value
        #expect(waited >= .milliseconds(250))
        #expect(waited < .seconds(30), "woken after \(waited)")
        #expect(try await follower.changes(after: start, limit: 10).map(\.messageID) == ["m1"])
        // Already past the position: no wait at all.
        let again = clock.now
        try await follower.waitForChanges(after: start, timeout: .seconds(20))
        #expect(clock.now - again < .seconds(5))
        // Nothing new: the wait ends with its timeout.
        let quiet = clock.now
        try await follower.waitForChanges(after: try await follower.lastChangePosition(), timeout: .milliseconds(300))
        #expect(clock.now - quiet >= .milliseconds(250))
    }

    @Test func feedPositionsFollowTheCommitOrderOfConcurrentWriters() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let stores = try await withThrowingTaskGroup(of: (any MessageStore).self) { group in
            for _ in 0..<4 { group.addTask { try await StoreLocation(parsing: url).open(kind: .shared) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let registry = self.registry
        // A follower reads while four writers write: every change it sees is new and later than the last it
        // saw, and at the end it has seen every change once.
        let done = DoneFlag()
        let writers = Task {
            defer { done.set() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        for batch in 0..<10 {
                            let envelopes = (0..<5).map { n in
                                StoreTests.text("w\(index)-\(batch)-\(n)", "text", in: "c\(n % 3)", from: "bob", at: Int64(batch * 10 + n))
                            }
                            _ = try await store.ingest(envelopes, registry: registry)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var seen: [Int64] = []
        var position: Int64 = 0
        while true {
            let finished = done.isSet
            let changes = try await stores[0].changes(after: position, limit: 1_000)
            seen += changes.map(\.position)
            position = changes.last?.position ?? position
            if finished && changes.isEmpty { break }
            if changes.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        }
        try await writers.value
        #expect(seen == seen.sorted())
        #expect(Set(seen).count == seen.count)
        let stored = try await stores[0].changes(after: 0, limit: 10_000).filter { $0.kind == .stored }.count
        #expect(stored == 200)
        let all = try await stores[0].changes(after: 0, limit: 10_000)
        #expect(seen == all.map(\.position))
        #expect(try await stores[0].checkConsistency().problems == [])
    }
}

extension PostgresStoreTests {
    @Test func fourStoreObjectsIngestingOverlappingBatchesWithRepliesStoreEachMessageOnce() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let registry = self.registry
        // 2,000 messages in 12 conversations from 5 senders, a third of them counted, with replies to messages
        // five before (often in another writer's share), so that roots and their replies arrive in any order.
        var envelopes: [Envelope] = []
        for index in 0..<2_000 {
            let parent: String? = index % 11 == 5 ? "w\(index - 5)" : nil
            let persistence: Persistence = index % 3 == 0 ? .counted : .persisted
            let sentAt = Int64(10_000 + index)
            envelopes.append(
                StoreTests.text(
                    "w\(index)", "writer text \(index)", in: "c\(index % 12)", from: "s\(index % 5)", at: sentAt, replyingTo: parent,
                    persistence: persistence))
        }
        let all = envelopes
        let setup = try await StoreLocation(parsing: url).open(kind: .shared)
        for conversation in 0..<12 {
            for member in ["s0", "s1", "s2", "s3", "s4", "reader"] { try await setup.join(member: member, conversation: "c\(conversation)") }
        }
        // Each writer: its own quarter and half of the next one's, reversed, in batches of 50.
        let reports = try await withThrowingTaskGroup(of: (stored: Int, duplicates: Int).self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let store = try await StoreLocation(parsing: url).open(kind: .shared)
                    let next = (writer + 1) % 4
                    let own: [Envelope] = Array(all[(writer * 500)..<((writer + 1) * 500)])
                    let overlap: [Envelope] = Array(all[(next * 500)..<(next * 500 + 250)].reversed())
                    let mine = own + overlap
                    var stored = 0, duplicates = 0
                    for start in stride(from: 0, to: mine.count, by: 50) {
                        let report = try await store.ingest(Array(mine[start..<min(start + 50, mine.count)]), registry: registry)
                        stored += report.storedCount
                        duplicates += report.duplicateCount
                    }
                    return (stored, duplicates)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let stored = reports.reduce(0) { $0 + $1.stored }
        let duplicates = reports.reduce(0) { $0 + $1.duplicates }
        #expect(stored == 2_000)
        #expect(duplicates == 1_000)
        #expect(try await setup.checkConsistency().problems == [])
        #expect(try await Fixtures.psql(url, "SELECT count(*) FROM message") == "2000")
        #expect(try await Fixtures.psql(url, "SELECT count(*) FROM change WHERE kind = 'stored'") == "2000")
        // The counters equal what one writer alone gives.
        let alone = try SQLiteMessageStore(path: try Fixtures.temporaryDirectory() + "/alone.sqlite", kind: .shared)
        for conversation in 0..<12 {
            for member in ["s0", "s1", "s2", "s3", "s4", "reader"] { try await alone.join(member: member, conversation: "c\(conversation)") }
        }
        _ = try await alone.ingest(envelopes, registry: registry)
        for member in ["s0", "s3", "reader"] {
            #expect(try await setup.unreadCounts(member: member) == (try await alone.unreadCounts(member: member)), "\(member)")
        }
        #expect(try await setup.replies(to: "w0").map(\.id) == (try await alone.replies(to: "w0").map(\.id)))
    }
}

extension PostgresStoreTests {
    @Test func theStoreOpensOverTheServersUnixSocketInBothURLForms() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let components = try #require(URLComponents(string: url))
        let database = try #require(Fixtures.databaseName(url))
        let port = components.port ?? 5432
        // The socket's folder, from the state file of Scripts/postgres.sh (the tests' role may not read the
        // server's settings).
        let state = ProcessInfo.processInfo.environment["MISSIVE_PG_STATE"] ?? "/tmp/missive-postgres.env"
        let lines = try String(contentsOfFile: state, encoding: .utf8).split(separator: "\n")
        let folder = try #require(
            lines.first { $0.hasPrefix("MISSIVE_PG_DIR=") }.map { String($0.dropFirst("MISSIVE_PG_DIR=".count)) },
            "no MISSIVE_PG_DIR in \(state), the state file of Scripts/postgres.sh")
        let escaped = try #require(folder.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        for form in [
            "postgres://missive:missive@/\(database)?host=\(folder)&port=\(port)",
            "postgresql://missive:missive@\(escaped):\(port)/\(database)",
        ] {
            let store = try await StoreLocation(parsing: form).open(kind: .shared)
            try await store.join(member: "alice", conversation: "c\(form.count)")
            #expect(store.location == "postgres://missive@/\(database)?host=\(folder)&port=\(port)")
        }
        // Both reached the same database, through the socket (no client address).
        #expect(try await Fixtures.psql(url, "SELECT count(*) FROM member") == "2")
    }
}

/// Whether something has ended, for another task to see.
private final class DoneFlag: Sendable {
    private let state = Mutex(false)

    func set() { state.withLock { $0 = true } }

    var isSet: Bool { state.withLock { $0 } }
}

/// `missive store migrate`'s steps, from SQLite into PostgreSQL and back: the copy keeps every message byte for
/// byte, the members, marks and counts, and a second copy changes nothing.
@Suite struct PostgresMigrationTests {
    /// Copies `source` into `destination` as the command does, in batches of `batch`; how many were new.
    func copy(_ source: any MigratingStore, into destination: any MigratingStore, batch: Int) async throws -> Int {
        var position = try await destination.migrationProgress(source: source.location)
        var copied = 0
        while true {
            let messages = try await source.exportMessages(after: position, limit: batch)
            guard let last = messages.last else { break }
            copied += try await destination.importMessages(messages.map(\.message), source: source.location, through: last.sequence)
            position = last.sequence
        }
        try await destination.finishImport(members: try await source.exportMembers())
        return copied
    }

    @Test func aStoreIsCopiedIntoPostgreSQLAndBackWithItsCountsAndMarks() async throws {
        let registry = try Fixtures.sampleRegistry()
        let sqlite = try SQLiteMessageStore(path: try Fixtures.temporaryDirectory() + "/store.sqlite", kind: .personal(owner: "alice"))
        let lines = try Fixtures.conversationLines()
        _ = try await sqlite.ingest(try lines.map { line throws(MissiveError) in try IncomingMessage(line: line, registry: registry) })
        try await sqlite.markRead(conversation: "team", upTo: "m10")
        try await sqlite.join(member: "bob", conversation: "team")
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let postgres = try #require(try await StoreLocation(parsing: url).open(kind: .personal(owner: "alice")) as? PostgresMessageStore)

        let copied = try await copy(sqlite, into: postgres, batch: 7)
        let all = try await sqlite.exportMessages(after: 0, limit: 1_000).map(\.message)
        #expect(copied == all.count)
        #expect(try await postgres.checkConsistency().problems == [])
        #expect(try await postgres.unreadCounts(member: "alice") == (try await sqlite.unreadCounts(member: "alice")))
        #expect(try await postgres.readState(member: "bob", conversation: "team") == (try await sqlite.readState(member: "bob", conversation: "team")))
        #expect(try await postgres.exportMessages(after: 0, limit: 1_000).map(\.message) == all)
        #expect(Set(try await postgres.search("Salad").map(\.message.id)) == Set(try await sqlite.search("Salad").map(\.message.id)))
        #expect(try await postgres.lastChangePosition() == 0)
        // Again: nothing new.
        #expect(try await copy(sqlite, into: postgres, batch: 7) == 0)

        // And back into a new SQLite file.
        let back = try SQLiteMessageStore(path: try Fixtures.temporaryDirectory() + "/back.sqlite", kind: .personal(owner: "alice"))
        #expect(try await copy(postgres, into: back, batch: 100) == all.count)
        #expect(try await back.checkConsistency().problems == [])
        #expect(try await back.exportMessages(after: 0, limit: 1_000).map(\.message) == all)
        #expect(try await back.unreadCounts(member: "alice") == (try await sqlite.unreadCounts(member: "alice")))
    }
}
