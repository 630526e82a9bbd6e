import Foundation
import Logging
import Missive
import MissivePostgresStore
import MissiveStore
import NIOCore
import PostgresNIO

/// The PostgreSQL store: ingest against `COPY` of the same rows into the same table, search and unread-count
/// latency on the ingested store, and what a conversation's members cost ingest.
enum PostgresBench {
    struct Result {
        var messages = 0
        var ingest = Samples(values: [])
        var floor = Samples(values: [])
        var searches: [Search] = []
        var unreadCounts: [Double] = []
        var conversations = 0
        var databaseBytes = 0
        var oneMember = Samples(values: [])
        var manyMembers = Samples(values: [])
        var memberMessages = 0
    }

    /// One query's latencies: `matches` is how many messages match it in the whole store.
    struct Search {
        let query: String
        let member: String?
        let matches: Int
        let median: Double
        let p99: Double
    }

    static let batchSize = StoreBench.batchSize
    /// The personal store's owner, one of the 17 senders and so a member of every conversation.
    static let owner = "u3"
    /// A word no corpus line has, added after the timed ingest in ``rareCount`` messages.
    static let rareWord = "zeppelin"
    static let rareCount = 100
    /// The messages ingested into one conversation with one member and with ``manyMembers``.
    static let memberMessages = 100_000
    static let manyMembers = 1_000
    /// The `message` columns the store writes (all but `seq`), in the order the floor copies them.
    static let columns = [
        "id", "conversation_id", "sender_id", "sent_at", "object_name", "business_id", "known", "digest", "persistence", "counted",
        "words", "search_text", "search", "parent_id", "root_id", "root_pending", "reply_count", "reason", "envelope",
    ]

    static func measure(registry: MessageRegistry, corpus: Corpus, server: PostgresServer, messages: Int, runs: Int, work: String) async throws -> Result {
        var result = Result()
        result.messages = messages
        let valid = StoreBench.validLines(corpus)
        func batch(_ start: Int, count: Int = batchSize, conversations: Int = StoreBench.conversationCount) throws -> [IncomingMessage] {
            try StoreBench.storeLines(start..<min(start + count, messages), of: valid, conversations: conversations).map { line throws(MissiveError) in
                try IncomingMessage(line: line, registry: registry)
            }
        }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        // The floor's rows, batch by batch, as the warm-up run's store wrote them (so the same values, search
        // vectors included), exported with psql's \copy before any timed run.
        var copyBatches: [ByteBuffer] = []
        var last: (store: any MessageStore, database: String)?
        for run in 0...runs {
            let storeDatabase = "missive_bench_store_\(run)", floorDatabase = "missive_bench_floor_\(run)"
            try server.recreate(storeDatabase)
            let store = try await MessageStores.open(server.url(storeDatabase), kind: .personal(owner: owner))
            var floor: PostgresConnection?
            if run > 0 {
                try server.recreate(floorDatabase)
                // The same schema: the store makes it, then the floor copies into its `message` table.
                await (try await MessageStores.open(server.url(floorDatabase), kind: .personal(owner: owner)) as? PostgresMessageStore)?.close()
                floor = try await server.connect(floorDatabase)
            }
            var ingestTime = 0.0, floorTime = 0.0
            for start in stride(from: 0, to: messages, by: batchSize) {
                let messages = try batch(start)
                guard let floor else {
                    ingestTime += try await StoreBench.time { _ = try await store.ingest(messages) }
                    continue
                }
                let rows = copyBatches[start / batchSize]
                let copy = { () async throws -> Void in
                    try await floor.copyFrom(table: "message", columns: columns, format: .text(.init()), logger: server.logger) { writer in
                        try await writer.write(rows)
                    }
                }
                // Alternate which goes first, so that neither always runs on a warmer cache.
                if start / batchSize % 2 == 0 {
                    ingestTime += try await StoreBench.time { _ = try await store.ingest(messages) }
                    floorTime += try await StoreBench.time { try await copy() }
                } else {
                    floorTime += try await StoreBench.time { try await copy() }
                    ingestTime += try await StoreBench.time { _ = try await store.ingest(messages) }
                }
            }
            print("- run \(run)\(run == 0 && runs > 0 ? " (warm-up)" : ""): ingest \(format(ingestTime, 2)) s\(run > 0 ? ", COPY \(format(floorTime, 2)) s" : "")")
            if run == 0 {
                copyBatches = try exportRows(server: server, database: storeDatabase, messages: messages, file: work + "/rows.copy")
                if runs == 0 {
                    // One pass only (for a size too long to run several times): the floor copies the same
                    // batches after the ingest, into a database of its own.
                    try server.recreate(floorDatabase)
                    await (try await MessageStores.open(server.url(floorDatabase), kind: .personal(owner: owner)) as? PostgresMessageStore)?.close()
                    let floor = try await server.connect(floorDatabase)
                    for rows in copyBatches {
                        floorTime += try await StoreBench.time {
                            try await floor.copyFrom(table: "message", columns: columns, format: .text(.init()), logger: server.logger) { writer in
                                try await writer.write(rows)
                            }
                        }
                    }
                    print("- the same run's floor, copied after it: COPY \(format(floorTime, 2)) s")
                    result.ingest.values.append(ingestTime)
                    result.floor.values.append(floorTime)
                    try await floor.close()
                    try server.drop(floorDatabase)
                }
            } else {
                result.ingest.values.append(ingestTime)
                result.floor.values.append(floorTime)
                try await floor?.close()
                try server.drop(floorDatabase)
            }
            if let last {
                await (last.store as? PostgresMessageStore)?.close()
                try server.drop(last.database)
            }
            last = (store, storeDatabase)
        }
        copyBatches = []
        guard let (store, database) = last else { return result }
        result.databaseBytes = Int(try server.psql(database, "SELECT pg_database_size(current_database())")) ?? 0

        // A rare word: in 100 messages of 100 conversations, added now (untimed).
        let rare = try (0..<rareCount).map { index throws(MissiveError) in
            let line = #"{"id":"rare\#(index)","conversationID":"c\#(index * 10)","senderID":"u5","sentAt":\#(1_767_225_600_000 + Int64(messages + index) * 1000),"objectName":"MS:Text","content":{"content":"a \#(rareWord) over the harbour"}}"#
            return try IncomingMessage(line: Array(line.utf8), registry: registry)
        }
        _ = try await store.ingest(rare)
        try server.psql(database, "VACUUM ANALYZE")

        // Search: a rare word, a common one, a two-character CJK word; over the store and as the owner, a member
        // of every conversation. Each query 200 times, or for 20 s when it is slower.
        for member in [nil, owner] {
            for word in [rareWord, "sushi", "日本"] {
                let query = try SearchQuery(parsing: word)
                let matches = Int(try server.psql(database, "SELECT count(*) FROM message WHERE search @@ quote_literal(\(sqlString(word)))::tsquery")) ?? -1
                var latencies: [Double] = []
                let started = now()
                while latencies.count < 200, latencies.count < 20 || now() - started < 20 {
                    latencies.append(try await StoreBench.time { _ = try await store.search(query, member: member, conversation: nil, limit: 20) })
                }
                result.searches.append(Search(query: word, member: member, matches: matches, median: percentile(latencies, 0.5), p99: percentile(latencies, 0.99)))
            }
        }

        // Unread counts of the owner, a member of every conversation.
        for _ in 0..<200 {
            result.unreadCounts.append(try await StoreBench.time { result.conversations = try await store.unreadCounts(member: owner).count })
        }
        await (store as? PostgresMessageStore)?.close()
        try server.drop(database)

        // Members: the same messages into one conversation of a shared store with one member (the owner, one of
        // the senders) and with a thousand (the 17 senders and 983 others), alternating batch by batch. The
        // members join after a first batch, so each has a read mark older than every message timed (as members
        // that keep up have); that batch is not timed.
        result.memberMessages = min(memberMessages, messages)
        for run in 0...runs {
            var stores: [(store: any MessageStore, database: String)] = []
            for (index, count) in [1, manyMembers].enumerated() {
                let database = "missive_bench_members_\(index)_\(run)"
                try server.recreate(database)
                let store = try await MessageStores.open(server.url(database), kind: .shared)
                _ = try await store.ingest(try batch(0, conversations: 1))
                let members = count == 1 ? [owner] : (0..<17).map { "u\($0)" } + (17..<count).map { "m\($0)" }
                for member in members { try await store.join(member: member, conversation: "c0") }
                stores.append((store, database))
            }
            var times = [0.0, 0.0]
            for start in stride(from: batchSize, to: batchSize + result.memberMessages, by: batchSize) {
                let messages = try StoreBench.storeLines(start..<start + batchSize, of: valid, conversations: 1).map { line throws(MissiveError) in
                    try IncomingMessage(line: line, registry: registry)
                }
                for index in start / batchSize % 2 == 0 ? [0, 1] : [1, 0] {
                    let store = stores[index].store
                    times[index] += try await StoreBench.time { _ = try await store.ingest(messages) }
                }
            }
            print("- members run \(run)\(run == 0 && runs > 0 ? " (warm-up)" : ""): 1 member \(format(times[0], 2)) s, \(manyMembers) members \(format(times[1], 2)) s")
            if run > 0 || runs == 0 {
                result.oneMember.values.append(times[0])
                result.manyMembers.values.append(times[1])
            }
            for (store, database) in stores {
                await (store as? PostgresMessageStore)?.close()
                try server.drop(database)
            }
        }
        print("")
        return result
    }

    /// The rows of the store in `database`, in COPY's text format, grouped by the batch (of the ingest) that
    /// stored them: `psql`'s `\copy` of every column but `seq`, in the order stored.
    static func exportRows(server: PostgresServer, database: String, messages: Int, file: String) throws -> [ByteBuffer] {
        try server.psql(database, "\\copy (SELECT \(columns.joined(separator: ", ")) FROM message ORDER BY seq) TO '\(file)'")
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        try? FileManager.default.removeItem(atPath: file)
        var batches = [ByteBuffer](repeating: ByteBuffer(), count: (messages + batchSize - 1) / batchSize)
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                // The id, `s` and the message's index in the corpus, is the first column.
                let tab = bytes[start..<end].firstIndex(of: 0x09) ?? end
                let index = Int(String(decoding: bytes[(start + 1)..<tab], as: UTF8.self)) ?? 0
                batches[index / batchSize].writeBytes(UnsafeRawBufferPointer(rebasing: bytes[start..<min(end + 1, bytes.count)]))
                start = end + 1
            }
        }
        return batches
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    static func sqlString(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    static func report(_ result: Result, server: PostgresServer) {
        print("## PostgreSQL store: \(result.messages) messages in \(StoreBench.conversationCount) conversations, batches of \(batchSize)\n")
        print("Server: \(server.version), on loopback TCP (\(server.redactedURL)).\n")
        print("| what | s, median (min–max) | messages/s | ratio to floor |")
        print("|---|---|---|---|")
        let floor = result.floor.median
        print("| floor: COPY of the same rows into the same `message` table (postgres-nio, text format, a COPY per batch) | \(result.floor.summary(2)) | \(format(Double(result.messages) / floor / 1000, 1))k | 1.00 |")
        print("| Missive: `PostgresMessageStore.ingest` (flags, columns, search vector, counters, replies, change feed) | \(result.ingest.summary(2)) | \(format(Double(result.messages) / result.ingest.median / 1000, 1))k | \(format(floor / result.ingest.median, 2)) |")
        print("\nThe store's database holds \(format(Double(result.databaseBytes) / 1_048_576, 0)) MiB.\n")
        print("| search (limit 20), on that store plus \(rareCount) messages with `\(rareWord)` | member | matching messages | ms, p50 | ms, p99 |")
        print("|---|---|---|---|---|")
        for search in result.searches {
            print("| `\(search.query)` | \(search.member.map { "`\($0)` (member of \(result.conversations) conversations)" } ?? "none (whole store)") | \(search.matches) | \(format(search.median * 1000, 2)) | \(format(search.p99 * 1000, 2)) |")
        }
        print("")
        print("| counters | ms, p50 | ms, p99 |")
        print("|---|---|---|")
        print("| `unreadCounts(member:)`, a member of \(result.conversations) conversations with unread messages (\(result.unreadCounts.count) calls) | \(format(percentile(result.unreadCounts, 0.5) * 1000, 2)) | \(format(percentile(result.unreadCounts, 0.99) * 1000, 2)) |")
        print("")
        print("| \(result.memberMessages) messages into one conversation of a shared store | s, median (min–max) | messages/s | time ÷ one member's |")
        print("|---|---|---|---|")
        let one = result.oneMember.median
        print("| 1 member | \(result.oneMember.summary(2)) | \(format(Double(result.memberMessages) / one / 1000, 1))k | 1.00 |")
        print("| \(manyMembers) members | \(result.manyMembers.summary(2)) | \(format(Double(result.memberMessages) / result.manyMembers.median / 1000, 1))k | \(format(result.manyMembers.median / one, 2)) |")
        print("")
    }
}

/// A PostgreSQL server the benchmarks make their databases on (`--postgres URL`, a role that may create
/// databases): databases are made and dropped with `psql`, and the floor connects with postgres-nio.
struct PostgresServer: Sendable {
    /// The URL given, naming some database of the server.
    let url: String
    let logger = Logger(label: "missive-bench", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The same server's database `database`.
    func url(_ database: String) -> String {
        var components = URLComponents(string: url)!
        components.path = "/" + database
        return components.string!
    }

    /// The URL without its password, for the report.
    var redactedURL: String {
        var components = URLComponents(string: url)!
        if components.password != nil { components.password = "…" }
        return components.string ?? url
    }

    var version: String { (try? psql(nil, "SHOW server_version")).map { "PostgreSQL \($0)" } ?? "PostgreSQL" }

    /// Runs `sql` with `psql` in `database` (the URL's own when `nil`), stopping at the first error; returns
    /// its output, trimmed.
    @discardableResult
    func psql(_ database: String?, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = [database.map(url) ?? url, "--no-psqlrc", "--quiet", "--no-align", "--tuples-only", "-v", "ON_ERROR_STOP=1", "-c", sql]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("psql failed for: \(sql)\n\(String(decoding: message, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Drops `database` if it exists and creates it empty.
    func recreate(_ database: String) throws {
        try drop(database)
        try psql(nil, "CREATE DATABASE \(database)")
    }

    func drop(_ database: String) throws {
        try psql(nil, "DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
    }

    /// A connection to `database`, over TCP with the URL's user and password.
    func connect(_ database: String) async throws -> PostgresConnection {
        let components = URLComponents(string: url)!
        let configuration = PostgresConnection.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: database, tls: .disable)
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    }
}
