import Foundation
import GRDB
import Missive
import MissiveStore

/// The store: ingest against raw inserts of the same rows, search latency, reading unread counts,
/// re-decoding unknown messages after an install, and what a conversation's members cost ingest.
enum StoreBench {
    struct Result {
        var messages = 0
        var ingest = Samples(values: [])
        var floor = Samples(values: [])
        var searches: [(query: String, hits: Int, median: Double, p99: Double)] = []
        var unreadCounts = Samples(values: [])
        var totalUnread = Samples(values: [])
        var conversations = 0
        var redecode = Samples(values: [])
        var redecoded = 0
        var fileBytes = 0
        /// Ingest into one conversation of a shared store with one member, and with ``manyMembers``.
        var oneMember = Samples(values: [])
        var manyMembersIngest = Samples(values: [])
    }

    static let batchSize = 1_000
    static let conversationCount = 1_000
    /// The messages ingested into one conversation of a shared store, once with one member and once with
    /// ``manyMembers``.
    static let memberMessages = 100_000
    static let manyMembers = 1_000

    static func measure(registry: MessageRegistry, withoutDemoMessages: MessageRegistry, corpus: Corpus, messages: Int, runs: Int, work: String) async throws -> Result {
        var result = Result()
        result.messages = messages
        // The corpus's lines under unique ids, in 1,000 conversations, one second apart; malformed envelopes
        // are left out (a store never sees them).
        let valid = validLines(corpus)
        // For re-decoding: only the lines of DemoMessages' types (links and polls, as themselves or in
        // MS:Custom), so that every message stored without the plugin is unknown until it is installed.
        let demo = valid.filter { line in
            [#""objectName":"demo:link""#, #""objectName":"demo:poll""#, #""businessID":"poll""#].contains { line.missive.firstRange(of: Array($0.utf8)) != nil }
                && line.kind == .known
        }
        func lines(_ range: Range<Int>, from source: [Corpus.Line]? = nil, conversations: Int = conversationCount) -> [[UInt8]] {
            storeLines(range, of: source ?? valid, conversations: conversations)
        }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        var lastStore: SQLiteMessageStore?
        for run in 0...runs {
            // Missive: decoded outside the clock, then ingested a batch (one transaction) at a time.
            let storePath = work + "/store-\(run).sqlite"
            let floorPath = work + "/floor-\(run).sqlite"
            for path in [storePath, floorPath] { removeDatabase(path) }
            let store = try SQLiteMessageStore(path: storePath, owner: "u3")
            var ingestTime = 0.0
            var floorTime = 0.0
            let floor = try Floor(path: floorPath)
            for start in stride(from: 0, to: messages, by: batchSize) {
                let batch = try lines(start..<min(start + batchSize, messages)).map { line throws(MissiveError) in try IncomingMessage(line: line, registry: registry) }
                let rows = batch.compactMap(Floor.Row.init)
                // Alternate which goes first, so that neither always runs on a warmer cache.
                if start / batchSize % 2 == 0 {
                    ingestTime += try await time { _ = try await store.ingest(batch) }
                    floorTime += try time { try floor.insert(rows) }
                } else {
                    floorTime += try time { try floor.insert(rows) }
                    ingestTime += try await time { _ = try await store.ingest(batch) }
                }
            }
            if run > 0 {
                result.ingest.values.append(ingestTime)
                result.floor.values.append(floorTime)
            }
            if let previous = lastStore { removeDatabase(previous.path) }
            removeDatabase(floorPath)
            lastStore = store
        }
        guard let store = lastStore else { return result }
        result.fileBytes = (try? FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int) ?? 0

        // Search: each query 200 times on the last store.
        for query in ["sushi", "déjà vu", "CAFE", "日本", "launch review", "invoice*", "\"friday coffee\"", "zzzz"] {
            let parsed = try SearchQuery(parsing: query)
            var hits = 0
            var latencies: [Double] = []
            for _ in 0..<200 {
                latencies.append(try await time { hits = try await store.search(parsed, conversation: nil, limit: 20).count })
            }
            latencies.sort()
            result.searches.append((query, hits, latencies[latencies.count / 2], latencies[Int(Double(latencies.count) * 0.99)]))
        }

        // Unread counts of the owner, a member of every conversation: each conversation's, and the total.
        for _ in 0..<(runs * 20) {
            result.unreadCounts.values.append(try await time { result.conversations = try await store.unreadCounts(member: "u3").count })
            result.totalUnread.values.append(try await time { _ = try await store.totalUnreadCount(member: "u3") })
        }

        // Re-decoding: 100,000 links and polls ingested by a host without DemoMessages, then redecoded with it.
        let unknownCount = 100_000
        for run in 0...runs {
            let path = work + "/redecode-\(run).sqlite"
            removeDatabase(path)
            let before = try SQLiteMessageStore(path: path, owner: "u3")
            for start in stride(from: 0, to: unknownCount, by: batchSize) {
                _ = try await before.ingest(
                    lines(start..<min(start + batchSize, unknownCount), from: demo).map { line throws(MissiveError) in
                        try IncomingMessage(line: line, registry: withoutDemoMessages)
                    })
            }
            var report: RedecodeReport?
            let elapsed = try await time { report = try await before.redecode(with: registry) }
            if run > 0 {
                result.redecode.values.append(elapsed)
                result.redecoded = report?.decodedCount ?? 0
            }
            removeDatabase(path)
        }
        removeDatabase(store.path)

        // Members: the same messages into one conversation of a shared store with one member (u3, one of the
        // senders) and with a thousand (the 17 senders and 983 others), alternating batch by batch as above.
        // The members join after a first batch, so each has a read mark, older than every message timed (as
        // members that keep up have); that batch is not timed.
        for run in 0...runs {
            var stores: [SQLiteMessageStore] = []
            for (index, count) in [1, manyMembers].enumerated() {
                let path = work + "/members-\(index)-\(run).sqlite"
                removeDatabase(path)
                let store = try SQLiteMessageStore(path: path, kind: .shared)
                _ = try await store.ingest(
                    lines(0..<batchSize, conversations: 1).map { line throws(MissiveError) in
                        try IncomingMessage(line: line, registry: registry)
                    })
                let members = count == 1 ? ["u3"] : (0..<17).map { "u\($0)" } + (17..<count).map { "m\($0)" }
                for member in members { try await store.join(member: member, conversation: "c0") }
                stores.append(store)
            }
            var times = [0.0, 0.0]
            for start in stride(from: batchSize, to: batchSize + memberMessages, by: batchSize) {
                let batch = try lines(start..<min(start + batchSize, batchSize + memberMessages), conversations: 1).map { line throws(MissiveError) in
                    try IncomingMessage(line: line, registry: registry)
                }
                for index in start / batchSize % 2 == 0 ? [0, 1] : [1, 0] {
                    let store = stores[index]
                    times[index] += try await time { _ = try await store.ingest(batch) }
                }
            }
            if run > 0 {
                result.oneMember.values.append(times[0])
                result.manyMembersIngest.values.append(times[1])
            }
            for store in stores { removeDatabase(store.path) }
        }
        return result
    }

    /// The corpus's lines a store sees: all but the malformed envelopes.
    static func validLines(_ corpus: Corpus) -> [Corpus.Line] { corpus.lines.filter { $0.kind != .malformedEnvelope } }

    /// The messages `range` of a store benchmark: `valid`'s lines cycled, each under a unique id (`s` and its
    /// index), in `conversations` conversations, one second apart, from 17 senders. The PostgreSQL benchmark
    /// ingests the same.
    static func storeLines(_ range: Range<Int>, of valid: [Corpus.Line], conversations: Int = conversationCount) -> [[UInt8]] {
        range.map { index in
            let source = valid[index % valid.count].missive
            let tail = source[source.firstRange(of: Array(#","objectName""#.utf8))!.lowerBound...]
            return Array(#"{"id":"s\#(index)","conversationID":"c\#(index % conversations)","senderID":"u\#(index % 17)","sentAt":\#(1_767_225_600_000 + Int64(index) * 1000)"#.utf8) + tail
        }
    }

    static func report(_ result: Result) {
        func seconds(_ samples: Samples) -> String { samples.summary(2) }
        print("## Store: \(result.messages) messages in \(conversationCount) conversations, batches of \(batchSize), WAL\n")
        print("| what | s, median (min–max) | messages/s | ratio to floor |")
        print("|---|---|---|---|")
        let floor = result.floor.median
        print("| floor: raw inserts of the same rows into the same table, no search index, no counters | \(seconds(result.floor)) | \(format(Double(result.messages) / floor / 1000, 0))k | 1.00 |")
        print("| Missive: ingest (flags, columns, FTS5, counters, replies) | \(seconds(result.ingest)) | \(format(Double(result.messages) / result.ingest.median / 1000, 0))k | \(format(floor / result.ingest.median, 2)) |")
        print("\nThe store file holds \(format(Double(result.fileBytes) / 1_048_576, 0)) MiB (before its WAL is checkpointed into it).\n")
        print("| search (limit 20), on that store | hits | ms, median | ms, p99 |")
        print("|---|---|---|---|")
        for search in result.searches {
            print("| `\(search.query)` | \(search.hits) | \(format(search.median * 1000, 3)) | \(format(search.p99 * 1000, 3)) |")
        }
        print("")
        print("| counters | ms, median (min–max) |")
        print("|---|---|")
        print("| unreadCounts(member:), a member of \(result.conversations) conversations | \(Samples(values: result.unreadCounts.values.map { $0 * 1000 }).summary(3)) |")
        print("| totalUnreadCount(member:) | \(Samples(values: result.totalUnread.values.map { $0 * 1000 }).summary(3)) |")
        print("")
        print("| re-decode after an install | s, median (min–max) | messages/s |")
        print("|---|---|---|")
        print("| \(result.redecoded) unknown messages become known (one transaction) | \(seconds(result.redecode)) | \(format(Double(result.redecoded) / result.redecode.median / 1000, 0))k |")
        print("")
        print("| \(memberMessages) messages into one conversation of a shared store | s, median (min–max) | messages/s | time ÷ one member's |")
        print("|---|---|---|---|")
        let one = result.oneMember.median
        print("| 1 member | \(seconds(result.oneMember)) | \(format(Double(memberMessages) / one / 1000, 0))k | 1.00 |")
        print("| \(manyMembers) members | \(seconds(result.manyMembersIngest)) | \(format(Double(memberMessages) / result.manyMembersIngest.median / 1000, 0))k | \(format(result.manyMembersIngest.median / one, 2)) |")
        print("")
    }

    static func time(_ body: () throws -> Void) throws -> Double {
        let start = now()
        try body()
        return now() - start
    }

    static func time(_ body: () async throws -> Void) async throws -> Double {
        let start = now()
        try await body()
        return now() - start
    }

    static func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Raw inserts through prepared statements, into a copy of the store's `message` table (created by the
    /// store itself, so with the same columns and indexes), with the same connection settings (WAL,
    /// synchronous, cache, mmap) and batch size, without the search index, the counters or reply threads.
    /// The values are computed before the clock starts (Missive computes its digests and words on the
    /// clock); binding them is timed, as it is part of any insert.
    final class Floor {
        /// One row's values, computed before the clock starts; binding them is part of each insert.
        struct Row {
            let id, conversationID, senderID, objectName, digest, words, searchText: String
            let businessID, parentID, reason: String?
            let sentAt, persistence: Int64
            let known, counted: Bool
            let envelope: [UInt8]

            init?(_ incoming: IncomingMessage) {
                let message = incoming.message
                let envelope = message.envelope
                guard message.persistence.isStored else { return nil }
                let words = message.content.searchableWords
                id = envelope.id
                conversationID = envelope.conversationID
                senderID = envelope.senderID
                sentAt = envelope.sentAt
                objectName = message.content.objectName
                businessID = message.content.businessID
                known = message.isKnown
                digest = message.digest
                persistence = Int64(message.persistence.rawValue)
                counted = message.persistence == .counted
                self.words = words.joined(separator: "\u{1F}")
                searchText = words.joined(separator: " ")
                parentID = envelope.parentID
                reason = message.unknown.map { "\($0.reason)" }
                self.envelope = incoming.envelopeBytes
            }
        }

        let queue: DatabasePool

        init(path: String) throws {
            _ = try SQLiteMessageStore(path: path)  // the same schema
            var configuration = Configuration()
            configuration.prepareDatabase { db in try db.execute(sql: SQLiteMessageStore.connectionSettings) }
            queue = try DatabasePool(path: path, configuration: configuration)
        }

        func insert(_ rows: [Row]) throws {
            try queue.write { db in
                let statement = try db.cachedStatement(
                    sql: """
                        INSERT OR IGNORE INTO message(
                            id, conversation_id, sender_id, sent_at, object_name, business_id, known, digest, persistence,
                            counted, words, search_text, parent_id, root_id, reason, envelope)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """)
                for row in rows {
                    try statement.execute(arguments: [
                        row.id, row.conversationID, row.senderID, row.sentAt, row.objectName, row.businessID, row.known, row.digest,
                        row.persistence, row.counted, row.words, row.searchText, row.parentID, row.parentID, row.reason, Data(row.envelope),
                    ])
                }
            }
        }
    }
}
