import Foundation
import Missive
import MissiveConformance
import MissiveRendering
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// `missive store`, run as a user runs it, on real SQLite files; and an ingest killed at random points.
@Suite struct StoreCLITests {
    static let conversation = Fixtures.repositoryRoot + "/SampleData/conversation.jsonl"

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    @Test func ingestListShowSearchReadDeleteInTextAndJSON() async throws {
        let db = try Fixtures.temporaryDirectory() + "/store.sqlite"
        let ingest = try await Fixtures.missive("store", "ingest", Self.conversation, "--db", db, "--me", "alice", "--format", "json")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let report = try Self.json(ingest.stdout)
        #expect(report["stored"] as? Int == 31)
        #expect((report["notStored"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["m04", "m31"])
        // Again: every message is a duplicate, nothing changes.
        let again = try await Fixtures.missive("store", "ingest", Self.conversation, "--db", db)
        #expect(again.stdout.contains("Stored 0, 31 already stored"), "\(again.stdout)")

        let list = try Self.json(try await Fixtures.missive("store", "conversations", "--db", db, "--format", "json").stdout)
        let team = try #require((list["conversations"] as? [[String: Any]])?.first)
        #expect(team["unreadCount"] as? Int == 19)
        #expect((team["lastMessage"] as? [String: Any])?["id"] as? String == "m33")
        let text = try await Fixtures.missive("store", "conversations", "--db", db)
        #expect(text.stdout.contains("team") && text.stdout.contains("19"))

        // The transcript: alice's messages, the thread counter of m25 and the quoted originals, from the store.
        let shown = try await Fixtures.missive("store", "show", "team", "--db", db, "--width", "80")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Lunch today?") && shown.stdout.contains("2 replies"))
        #expect(!shown.stdout.contains("\u{1B}"))
        // A page of the newest messages still quotes m25, which is outside the page.
        let page = try await Fixtures.missive("store", "show", "team", "--db", db, "--limit", "5", "--width", "80")
        // m28 quotes m25, found in the store although it is not on the page; m29 quotes m00, which no one has.
        #expect(page.stdout.contains("Lunch today?"))
        #expect(page.stdout.components(separatedBy: QuotedPreview.notFoundText).count == 2)
        #expect(!page.stdout.contains("Morning! Lunch plans?"))
        let html = try await Fixtures.missive("store", "show", "team", "--db", db, "--render", "html")
        #expect(html.stdout.hasPrefix("<!DOCTYPE html>") && !html.stdout.contains("<script"))

        let search = try Self.json(try await Fixtures.missive("store", "search", "大好き", "--db", db, "--format", "json").stdout)
        let hits = try #require(search["hits"] as? [[String: Any]])
        #expect(hits.compactMap { ($0["message"] as? [String: Any])?["id"] as? String } == ["m28"])
        #expect((hits.first?["snippet"] as? String)?.contains("[大好き]") == true)
        let searchText = try await Fixtures.missive("store", "search", "sushi", "--db", db, "--conversation", "team")
        #expect(searchText.status == 0 && searchText.stdout.contains("m05"))

        let read = try Self.json(try await Fixtures.missive("store", "read", "team", "--up-to", "m28", "--db", db, "--format", "json").stdout)
        #expect(read["unreadCount"] as? Int == 2)  // m29, m30
        // An earlier message leaves the mark where it is, and says so.
        let earlier = try Self.json(try await Fixtures.missive("store", "read", "team", "--up-to", "m05", "--db", db, "--format", "json").stdout)
        #expect(earlier["readUpTo"] as? String == "m28" && earlier["unreadCount"] as? Int == 2)
        // --output never writes over the store, nor its WAL files.
        for file in [db, db + "-wal"] {
            let over = try await Fixtures.missive("store", "show", "team", "--db", db, "--output", file)
            #expect(over.status == 2 && over.stderr.contains("it is the store's database"), "\(over.stderr)")
        }
        let exported = db + ".json"
        #expect(try await Fixtures.missive("store", "show", "team", "--db", db, "--format", "json", "--output", exported).stdout.isEmpty)
        #expect((try Self.json(String(decoding: try Data(contentsOf: URL(fileURLWithPath: exported)), as: UTF8.self))["messages"] as? [Any])?.count == 31)
        // A word that starts with '-' is a word.
        #expect(try await Fixtures.missive("store", "search", "-sushi", "--db", db).status == 0)

        let refused = try await Fixtures.missive("store", "delete", "m25", "--db", db)
        #expect(refused.status == 1 && refused.stderr.contains("'m25' has 2 replies; delete them first"), "\(refused.stderr)")
        let refusedJSON = try Self.json(try await Fixtures.missive("store", "delete", "m25", "--db", db, "--format", "json").stdout)
        #expect((refusedJSON["error"] as? [String: Any])?["code"] as? String == "has-replies")
        #expect(try await Fixtures.missive("store", "delete", "m27", "--db", db).status == 0)
        #expect(try await Fixtures.missive("store", "delete", "m27", "--db", db).status == 1)
        let check = try await Fixtures.missive("store", "check", "--db", db)
        #expect(check.status == 0 && check.stdout.hasPrefix("Consistent"), "\(check.stdout)\(check.stderr)")
    }

    @Test func badInputIsAClearErrorAndLosesNothing() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let db = folder + "/store.sqlite"
        let input = folder + "/mixed.jsonl"
        try Data(
            (#"{"id":"a","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{"content":"fine"}}"# + "\n"
                + "{not json\n"
                + #"{"id":"b","conversationID":"c","senderID":"s","sentAt":2,"objectName":"MS:Text","content":{"content":"also fine"}}"# + "\n").utf8
        ).write(to: URL(fileURLWithPath: input))
        let run = try await Fixtures.missive("store", "ingest", input, "--db", db)
        #expect(run.status == 1)
        #expect(run.stderr.contains("mixed.jsonl: line 2:"), "\(run.stderr)")
        #expect(run.stdout.contains("Stored 2"))
        // The malformed query, the unknown conversation, the wrong owner, a file that is not a store.
        let query = try await Fixtures.missive("store", "search", "\"open", "--db", db)
        #expect(query.status == 1 && query.stderr.contains("never closed"), "\(query.stderr)")
        #expect(try await Fixtures.missive("store", "show", "nope", "--db", db).stderr.contains("conversation 'nope' has no stored messages"))
        #expect(try await Fixtures.missive("store", "read", "c", "--up-to", "zzz", "--db", db).status == 1)
        // Only ingest gives a store its owner: a reading command's --me is checked, never kept.
        _ = try await Fixtures.missive("store", "conversations", "--db", db, "--me", "typo")
        #expect(try SQLiteMessageStore(path: db).owner == nil)
        _ = try await Fixtures.missive("store", "ingest", input, "--db", db, "--me", "alice")
        let owner = try await Fixtures.missive("store", "conversations", "--db", db, "--me", "bob")
        #expect(owner.status == 2 && owner.stderr.contains("belongs to 'alice'"), "\(owner.stderr)")
        let malformed = try Self.json(try await Fixtures.missive("store", "search", "\"", "--db", db, "--format", "json").stdout)
        #expect((malformed["error"] as? [String: Any])?["database"] as? String == db)
        let notAStore = try await Fixtures.missive("store", "conversations", "--db", input)
        #expect(notAStore.status == 2 && notAStore.stderr.contains(input), "\(notAStore.stderr)")
        #expect(try await Fixtures.missive("store", "ingest", input, "--db", db, "--batch-size", "0").status == 2)
    }

    @Test func aPipeIsIngestedAsItComesAndAMistypedStoreIsNotCreated() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let db = folder + "/store.sqlite"
        // A reading command never creates a store.
        let missing = try await Fixtures.missive("store", "conversations", "--db", folder + "/typo.sqlite")
        #expect(missing.status == 2 && missing.stderr.contains("no store there"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/typo.sqlite"))
        // Lines written to the pipe are committed before it is closed.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
        process.arguments = ["store", "ingest", "-", "--db", db, "--batch-size", "1", "-v"]
        process.environment = ProcessInfo.processInfo.environment.merging(["MISSIVE_METADATA_CACHE": Fixtures.cliMetadataCache]) { _, new in new }
        let input = Pipe()
        let log = folder + "/ingest.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardInput = input
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let line = #"{"id":"p1","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{"content":"first"}}"#
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
        var committed = false
        for _ in 0..<400 where !committed {
            committed = StoreCLITests.committedLines(in: log).contains(1...1)
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(committed, "the first line was not committed while the pipe stayed open")
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // /dev/null and a FIFO are read like files.
        #expect(try await Fixtures.missive("store", "ingest", "/dev/null", "--db", db).status == 0)
        let fifo = folder + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "printf '%s\\n' '\(line.replacingOccurrences(of: "p1", with: "p2"))' > '\(fifo)'"]
        try writer.run()
        let fromFIFO = try await Fixtures.missive("store", "ingest", fifo, "--db", db)
        writer.waitUntilExit()
        #expect(fromFIFO.status == 0 && fromFIFO.stdout.contains("Stored 1"), "\(fromFIFO.stdout)\(fromFIFO.stderr)")
        // decode, render and act read their input the same way.
        let decodeWriter = Process()
        decodeWriter.executableURL = URL(fileURLWithPath: "/bin/sh")
        decodeWriter.arguments = writer.arguments
        try decodeWriter.run()
        let decoded = try await Fixtures.missive("decode", fifo, "--format", "json")
        decodeWriter.waitUntilExit()
        #expect(decoded.status == 0 && decoded.stdout.contains(#""id":"p2""#), "\(decoded.stderr)")
    }

    @Test func tablesAlignWideCharactersByTerminalCells() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let lines = [("会話", "m1"), ("c", "m2")].map { conversation, id in
            #"{"id":"\#(id)","conversationID":"\#(conversation)","senderID":"s","sentAt":\#(id == "m1" ? 2 : 1),"objectName":"MS:Text","content":{"content":"x"}}"#
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: folder + "/wide.jsonl", atomically: true, encoding: .utf8)
        _ = try await Fixtures.missive("store", "ingest", folder + "/wide.jsonl", "--db", folder + "/store.sqlite")
        let rows = try await Fixtures.missive("store", "conversations", "--db", folder + "/store.sqlite").stdout.split(separator: "\n")
        // The UNREAD column starts at the same terminal cell on every row.
        let starts = rows.map { row in TerminalWidth.of(row[..<row.range(of: row.hasPrefix("  CONV") ? "UNREAD" : "1")!.lowerBound]) }
        #expect(Set(starts).count == 1, "\(rows)")
    }

    @Test func theDefaultDatabaseIsInTheUsersDataFolder() async throws {
        let home = try Fixtures.temporaryDirectory()
        let run = try await Fixtures.missive("store", "ingest", Self.conversation, environment: ["XDG_DATA_HOME": home + "/data"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: home + "/data/missive/store.sqlite"))
    }

    @Test func aStoreRedecodesAfterThePluginIsInstalled() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let db = folder + "/store.sqlite"
        // The CLI finds the sample plugins beside itself; an ingest through a registry without DemoMessages is
        // made by a host of the library, then the CLI redecodes with every plugin.
        let without = MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(["DemoMedia", "CRating", "MatrixBridge"])))
        let store = try SQLiteMessageStore(path: db, owner: "alice")
        _ = try await store.ingest(try Fixtures.conversationLines().map { line throws(MissiveError) in try IncomingMessage(line: line, registry: without.registry) })
        let run = try await Fixtures.missive("store", "redecode", "--db", db, "--format", "json")
        #expect(run.status == 0, "\(run.stderr)")
        let report = try Self.json(run.stdout)
        #expect(report["decoded"] as? Int == 5)  // m02, m23 (demo:link), m25 (demo:poll), m03, m20 (MS:Custom)
        let text = try await Fixtures.missive("store", "redecode", "--db", db)
        #expect(text.stdout.contains("0 decoded"), "\(text.stdout)")
        #expect(try await Fixtures.missive("store", "search", "menu", "--db", db).stdout.contains("m02"))
    }

    // MARK: Crash safety

    /// `count` envelopes over 40 conversations: counted texts, replies, the owner's own messages, and unknown
    /// types with each sender flag.
    static func crashCorpus(count: Int = 100_000) -> [String] {
        (0..<count).map { index in
            let flags = ["", #","persistence":0"#, #","persistence":1"#, #","persistence":3"#, #","persistence":16"#]
            let objectName = index % 9 == 4 ? "acme:thing" : "MS:Text"
            let flag = objectName == "MS:Text" ? "" : flags[index % flags.count]
            let parent = index % 13 == 7 ? #","parentID":"m\#(index - 5)""# : ""
            let sender = index % 11 == 0 ? "me" : "u\(index % 17)"
            return #"{"id":"m\#(index)","conversationID":"c\#(index % 40)","senderID":"\#(sender)","sentAt":\#(1_700_000_000_000 + Int64(index) * 1000),"objectName":"\#(objectName)","content":{"content":"message \#(index) 北京 café"}\#(parent)\#(flag)}"#
        }
    }

    // The limit guards against a hang. One backend's run takes about a minute of its own, but its last ingest waits for
    // a child slot behind every test that asked for one earlier (Fixtures.run): in a full run on 2 cores, many minutes.
    @Test(SanitizerRun.timeLimit(minutes: 25), arguments: StoreBackend.allCases)
    func anIngestKilledAtRandomPointsLeavesEveryCommittedBatchAndConsistentCounters(backend: StoreBackend) async throws {
        let folder = try Fixtures.temporaryDirectory()
        let db = try await backend.newLocation()
        let input = folder + "/big.jsonl"
        // PostgreSQL ingests a debug build's batches more slowly than SQLite: fewer of them, killed sooner. Each
        // backend's file holds some batches more than the latest kill, so that every kill lands mid-ingest.
        // Seconds of work in a debug build: off the cooperative pool, which the other tests' servers and streams need.
        let count = backend == .sqlite ? 40_000 : 15_000
        let keptIDs = try await Fixtures.offThePool { () throws -> [String?] in
            let lines = Self.crashCorpus(count: count)
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: input))
            let registry = MessageRegistry.Builder().build()
            return lines.map { line in
                let message = try! registry.decode(line: Array(line.utf8))
                return message.persistence.isStored ? message.envelope.id : nil
            }
        }
        let batch = 1_000
        var generator = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64(UInt32.max), using: &generator)
        var random = SeededGenerator(seed: seed)
        for attempt in 1...4 {
            // Kill after a random number of committed batches, plus a random few milliseconds: mid-transaction
            // or between two.
            let target = Int.random(in: 1...(backend == .sqlite ? 30 : 10), using: &random)
            let delay = Double.random(in: 0...0.03, using: &random)
            let log = folder + "/ingest-\(attempt).log"
            let process = try Self.startIngest(input: input, db: db, log: log)
            var committed: [ClosedRange<Int>] = []
            while process.isRunning {
                committed = Self.committedLines(in: log)
                if committed.count >= target { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            try await Task.sleep(for: .seconds(delay))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            committed = Self.committedLines(in: log)
            let context = "\(backend): seed \(seed), attempt \(attempt), killed after \(target) batches + \(delay) s"

            let store = try await backend.open(db, kind: nil)
            let consistency = try await store.checkConsistency()
            #expect(consistency.problems == [], "\(context)")
            let stored = try await Self.storedIDs(store)
            #expect(stored.count == Set(stored).count, "\(context): a message stored twice")
            // Every batch reported committed is there, and what is there is whole batches, in order.
            let reported = committed.map(\.upperBound).max() ?? 0
            let storedSet = Set(stored)
            let lastStored = keptIDs.lastIndex { $0.map(storedSet.contains) == true }
            let wholeBatches = lastStored.map { $0 / batch + 1 } ?? 0
            #expect(wholeBatches * batch >= reported, "\(context)")
            #expect(storedSet == Set(keptIDs.prefix(wholeBatches * batch).compactMap { $0 }), "\(context)")
        }
        // Ingesting the same file again stores the rest, each message once.
        let finish = try await Fixtures.missive("store", "ingest", input, "--db", db, "--me", "me", "--format", "json")
        #expect(finish.status == 0, "\(finish.stderr)")
        let store = try await backend.open(db, kind: nil)
        #expect(try await Self.storedIDs(store).count == keptIDs.compactMap { $0 }.count)
        #expect(try await store.checkConsistency().problems == [])
        #expect(try await store.search(SearchQuery(parsing: "北京"), conversation: "c7", limit: 20).count == 20)
    }

    static func startIngest(input: String, db: String, log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
        process.arguments = ["store", "ingest", input, "--db", db, "--me", "me", "--batch-size", "1000", "-v"]
        process.environment = ProcessInfo.processInfo.environment.merging(["MISSIVE_METADATA_CACHE": Fixtures.cliMetadataCache]) { _, new in new }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The line ranges `ingest -v` reported committed.
    static func committedLines(in log: String) -> [ClosedRange<Int>] {
        let text = String(decoding: FileManager.default.contentsOfFile(atPath: log) ?? Data(), as: UTF8.self)
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "committed lines ") else { return nil }
            let numbers = line[range.upperBound...].split(separator: " ").first?.split(separator: "-").compactMap { Int($0) } ?? []
            return numbers.count == 2 ? numbers[0]...numbers[1] : nil
        }
    }

    /// The ids stored: the store's messages of every conversation.
    static func storedIDs(_ store: any MessageStore) async throws -> [String] {
        var ids: [String] = []
        for conversation in 0..<40 { ids += try await store.messages(inConversation: "c\(conversation)").map(\.id) }
        return ids
    }
}
