import Foundation
import Missive
import MissivePostgresStore
import MissiveStore

/// The change feed's latency from commit to follower: a writer (this process) ingests single messages at a
/// steady rate; a follower in a second process (this executable's `feed-follower` subcommand), with a store
/// object of its own, follows the feed and notes when it sees each message. Both read the same monotonic clock.
enum FeedBench {
    struct Result {
        let backend: String
        let messages: Int
        let rate: Int
        /// For each message: seen by the follower − the writer's ingest call returned (committed).
        var latencies: [Double] = []
        /// For each message: seen by the follower − the writer's ingest call started (sent).
        var fromSend: [Double] = []
        /// The writer's ingest calls.
        var ingest: [Double] = []
        /// How long the writing took in all, against the `messages / rate` planned.
        var writing = 0.0
    }

    /// Writes `rate` messages a second for `seconds` into the store at `location` (a PostgreSQL URL or a
    /// SQLite path, a shared store made anew by the caller), with a follower in a second process.
    static func measure(backend: String, location: String, registry: MessageRegistry, rate: Int = 200, seconds: Int = 10) async throws -> Result {
        let count = rate * seconds
        var result = Result(backend: backend, messages: count, rate: rate)
        let store = try await MessageStores.open(location, kind: .shared)
        // Decoded before the clock: message `f<i>` of the conversation c<i mod 10>.
        let messages = try (0..<count).map { index throws(MissiveError) in
            let line = #"{"id":"f\#(index)","conversationID":"c\#(index % 10)","senderID":"u\#(index % 17)","sentAt":\#(1_767_225_600_000 + Int64(index) * 5),"objectName":"MS:Text","content":{"content":"feed message \#(index)"}}"#
            return try IncomingMessage(line: Array(line.utf8), registry: registry)
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["feed-follower", location, String(count)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        // The follower says `ready` once it has opened the store and taken its position.
        var output = Data()
        while !output.contains(0x0A) {
            let chunk = pipe.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchError("the feed follower ended before it was ready") }
            output.append(chunk)
        }
        guard String(decoding: output.prefix(while: { $0 != 0x0A }), as: UTF8.self) == "ready" else {
            throw BenchError("the feed follower said \(String(decoding: output, as: UTF8.self))")
        }
        output = Data(output.drop(while: { $0 != 0x0A }).dropFirst())

        var committed = [Double](repeating: 0, count: count), sent = [Double](repeating: 0, count: count)
        let clock = ContinuousClock()
        let start = clock.now, started = now()
        for (index, message) in messages.enumerated() {
            try await Task.sleep(until: start.advanced(by: .seconds(1) / rate * index), clock: clock)
            sent[index] = now()
            _ = try await store.ingest([message])
            committed[index] = now()
            result.ingest.append(committed[index] - sent[index])
        }
        result.writing = now() - started

        output.append(pipe.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("the feed follower exited with \(process.terminationStatus)") }
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, fields[0].hasPrefix("f"), let index = Int(fields[0].dropFirst()), index < count, let seen = Double(fields[1]) else {
                throw BenchError("the feed follower wrote \(line)")
            }
            result.latencies.append(seen - committed[index])
            result.fromSend.append(seen - sent[index])
        }
        await (store as? PostgresMessageStore)?.close()
        guard result.latencies.count == count else { throw BenchError("the follower saw \(result.latencies.count) of \(count) messages") }
        return result
    }

    /// The follower: `feed-follower LOCATION COUNT`. Opens the store, takes the feed's position, says `ready`,
    /// then follows the feed until it has seen `COUNT` stored messages, and writes `ID SEEN` for each (seen on
    /// the monotonic clock, in seconds).
    static func follower(location: String, count: Int) async throws {
        let store = try await MessageStores.open(location, kind: nil)
        let position = try await store.lastChangePosition()
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var seen: [(String, Double)] = []
        seen.reserveCapacity(count)
        for try await change in store.follow(after: position) where change.kind == .stored {
            seen.append((change.messageID ?? "?", now()))
            if seen.count == count { break }
        }
        await (store as? PostgresMessageStore)?.close()
        FileHandle.standardOutput.write(Data(seen.map { "\($0.0) \(String(format: "%.9f", $0.1))\n" }.joined().utf8))
    }

    static func report(_ results: [Result]) {
        guard let first = results.first else { return }
        print("## Change feed: commit to follower, \(first.rate) single-message ingests a second for \(first.messages / first.rate) s, follower in a second process\n")
        print("| backend | wake-up | latency from commit, ms, p50 | p99 | max | from the call's start, ms, p50 | p99 | ingest call, ms, p50 | p99 | writing took, s |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for result in results {
            let wakeUp = result.backend == "PostgreSQL" ? "LISTEN/NOTIFY" : "polling every 20 ms"
            func ms(_ values: [Double], _ fraction: Double) -> String { format(PostgresBench.percentile(values, fraction) * 1000, 2) }
            print("| \(result.backend) | \(wakeUp) | \(ms(result.latencies, 0.5)) | \(ms(result.latencies, 0.99)) | \(ms(result.latencies, 1)) | \(ms(result.fromSend, 0.5)) | \(ms(result.fromSend, 0.99)) | \(ms(result.ingest, 0.5)) | \(ms(result.ingest, 0.99)) | \(format(result.writing, 2)) |")
        }
        print("")
    }
}
