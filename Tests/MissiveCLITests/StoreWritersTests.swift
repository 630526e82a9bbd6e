import Foundation
import Missive
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Several `missive store ingest` processes writing into one store at once.
@Suite struct StoreWritersTests {
    /// `count` text messages in 30 conversations from 7 senders, `counted` every third one from a sender flag of
    /// an unknown type, with replies to earlier messages.
    static func corpus(count: Int) -> [String] {
        (0..<count).map { index in
            let parent = index % 11 == 5 ? #","parentID":"w\#(index - 5)""# : ""
            let objectName = index % 3 == 0 ? #""acme:thing","persistence":3,"fallbackText":"thing \#(index)""# : #""MS:Text""#
            return #"{"id":"w\#(index)","conversationID":"c\#(index % 30)","senderID":"s\#(index % 7)","sentAt":\#(10_000 + index)"#
                + #","objectName":\#(objectName),"content":{"content":"writer text \#(index)"}\#(parent)}"#
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func fourWritersWithOverlappingBatchesStoreEachMessageOnce(backend: StoreBackend) async throws {
        let location = try await backend.newLocation()
        let folder = try Fixtures.temporaryDirectory()
        let lines = Self.corpus(count: 4_000)
        // Four files: each writer has its own quarter, plus half of the next writer's, in another order.
        var files: [String] = []
        for writer in 0..<4 {
            let own = Array(lines[(writer * 1_000)..<((writer + 1) * 1_000)])
            let next = (writer + 1) % 4
            let overlap = Array(lines[(next * 1_000)..<(next * 1_000 + 500)]).reversed()
            var mixed: [String] = []
            for (index, line) in own.enumerated() {
                mixed.append(line)
                if index % 2 == 0, index / 2 < overlap.count { mixed.append(overlap[overlap.index(overlap.startIndex, offsetBy: index / 2)]) }
            }
            let file = folder + "/writer\(writer).jsonl"
            try (mixed.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            files.append(file)
        }
        // The store exists before the writers start (a shared store, so that each sender joins its conversations).
        let create = try await Fixtures.missive("store", "ingest", "-", "--db", location, "--shared", input: "")
        #expect(create.status == 0, "\(create.stderr)")
        let writers = try files.map { file in
            try Self.start(["store", "ingest", file, "--db", location, "--batch-size", "50", "--format", "json"])
        }
        var stored = 0, duplicates = 0
        for writer in writers {
            // Waited for off Swift's cooperative pool, which a blocked test would hold from the others.
            let process = writer.process
            try await Fixtures.offThePool { process.waitUntilExit() }
            #expect(writer.process.terminationStatus == 0, "\(writer.stderr())")
            let report = try StoreCLITests.json(writer.stdout())
            stored += report["stored"] as? Int ?? 0
            duplicates += (report["duplicates"] as? [Any])?.count ?? 0
        }
        // Every message stored once, by exactly one writer; every overlap reported a duplicate by the others.
        #expect(stored == 4_000)
        #expect(duplicates == 2_000)
        let store = try await backend.open(location, kind: nil)
        var ids: [String] = []
        for conversation in 0..<30 { ids += try await store.messages(inConversation: "c\(conversation)").map(\.id) }
        #expect(ids.count == 4_000 && Set(ids).count == 4_000)
        #expect(try await store.checkConsistency().problems == [])
        // Every stored message is in the change feed once.
        var positions = Set<Int64>()
        var storedChanges = 0
        var after: Int64 = 0
        while true {
            let changes = try await store.changes(after: after, limit: 1_000)
            guard let last = changes.last else { break }
            for change in changes {
                positions.insert(change.position)
                if change.kind == .stored { storedChanges += 1 }
            }
            after = last.position
        }
        #expect(storedChanges == 4_000)
    }

    struct Started {
        var process: Process
        var out: Pipe
        var err: Pipe

        func stdout() -> String { String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        func stderr() -> String { String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
    }

    static func start(_ arguments: [String]) throws -> Started {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["MISSIVE_METADATA_CACHE": Fixtures.cliMetadataCache]) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return Started(process: process, out: out, err: err)
    }
}
