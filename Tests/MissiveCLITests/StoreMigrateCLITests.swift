import Foundation
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// `missive store migrate`: a copy with its counts and marks, resumed after a kill, and idempotent.
@Suite struct StoreMigrateCLITests {
    /// A personal store of `count` text messages in 20 conversations from 5 senders, with a few read marks.
    static func sourceStore(count: Int) async throws -> String {
        let folder = try Fixtures.temporaryDirectory()
        var lines = ""
        for index in 0..<count {
            let content = #"{"content":"message number \#(index) about sushi"}"#
            lines += #"{"id":"m\#(index)","conversationID":"c\#(index % 20)","senderID":"s\#(index % 5)","sentAt":\#(1_000 + index),"objectName":"MS:Text","content":\#(content)}"# + "\n"
        }
        try lines.write(toFile: folder + "/in.jsonl", atomically: true, encoding: .utf8)
        let db = folder + "/source.sqlite"
        let ingest = try await Fixtures.missive("store", "ingest", folder + "/in.jsonl", "--db", db, "--me", "s0")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        for conversation in 0..<3 {
            #expect(try await Fixtures.missive("store", "read", "c\(conversation)", "--up-to", "m\(conversation + 40)", "--db", db).status == 0)
        }
        return db
    }

    /// SQLite to SQLite, and SQLite to PostgreSQL, the way a service moves up.
    @Test(arguments: StoreBackend.allCases)
    func aMigrationCopiesCountsAndMarksAndRunningItAgainChangesNothing(to backend: StoreBackend) async throws {
        let source = try await Self.sourceStore(count: 500)
        let destination = try await backend.newLocation()
        let first = try await Fixtures.missive("store", "migrate", "--from", source, "--to", destination, "--batch-size", "64", "--format", "json")
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let report = try StoreCLITests.json(first.stdout)
        #expect(report["copied"] as? Int == 500 && report["consistent"] as? Bool == true)
        let copy = try await backend.open(destination, kind: nil)
        let original = try SQLiteMessageStore(path: source)
        #expect(copy.kind == .personal(owner: "s0"))
        #expect(try await copy.unreadCounts() == original.unreadCounts())
        #expect(try await copy.readState(conversation: "c1") == original.readState(conversation: "c1"))
        #expect(try await copy.conversations().map(\.id) == original.conversations().map(\.id))
        #expect(try await copy.message(id: "m77")?.envelopeBytes == original.message(id: "m77")?.envelopeBytes)
        #expect(try await copy.search("sushi").count == 50)
        // Again: nothing new.
        let second = try StoreCLITests.json(
            try await Fixtures.missive("store", "migrate", "--from", source, "--to", destination, "--format", "json").stdout)
        #expect(second["copied"] as? Int == 0 && second["alreadyThere"] as? Int == 0 && second["consistent"] as? Bool == true)
        // A message stored since is copied by the next run.
        let more = try Fixtures.temporaryDirectory() + "/more.jsonl"
        try (#"{"id":"late","conversationID":"c1","senderID":"s1","sentAt":999999,"objectName":"MS:Text","content":{"content":"late"}}"# + "\n")
            .write(toFile: more, atomically: true, encoding: .utf8)
        #expect(try await Fixtures.missive("store", "ingest", more, "--db", source).status == 0)
        let third = try StoreCLITests.json(try await Fixtures.missive("store", "migrate", "--from", source, "--to", destination, "--format", "json").stdout)
        #expect(third["copied"] as? Int == 1)
        #expect(try await copy.unreadCount(conversation: "c1") == original.unreadCount(conversation: "c1"))
    }

    @Test(arguments: StoreBackend.allCases)
    func aMigrationKilledMidwayResumesWhereItStopped(to backend: StoreBackend) async throws {
        let source = try await Self.sourceStore(count: 6_000)
        let destination = try await backend.newLocation()
        // Small batches, killed after the first ones committed.
        var copiedBeforeKill = 0
        for attempt in 0..<10 {
            let run = try await Fixtures.run(
                Fixtures.buildDirectory + "/missive", ["store", "migrate", "--from", source, "--to", destination, "--batch-size", "20"],
                timeout: .milliseconds(300 + 200 * attempt))
            if !run.timedOut { break }
            let copy = try #require(try await backend.open(destination, kind: nil) as? any MigratingStore)
            copiedBeforeKill = try await copy.exportMessages(after: 0, limit: 10_000).count
            if copiedBeforeKill > 0 { break }
        }
        try #require(copiedBeforeKill > 0 && copiedBeforeKill < 6_000, "the migration was not caught midway")
        let resumed = try StoreCLITests.json(
            try await Fixtures.missive("store", "migrate", "--from", source, "--to", destination, "--format", "json").stdout)
        // Resumed after the last committed batch: nothing copied twice, nothing skipped.
        #expect(resumed["copied"] as? Int == 6_000 - copiedBeforeKill)
        #expect(resumed["alreadyThere"] as? Int == 0)
        #expect(resumed["consistent"] as? Bool == true, "\(resumed)")
        let copy = try await backend.open(destination, kind: nil)
        #expect(try await copy.unreadCounts() == SQLiteMessageStore(path: source).unreadCounts())
    }
}
