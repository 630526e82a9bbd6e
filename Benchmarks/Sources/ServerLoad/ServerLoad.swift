import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOPosix

/// The server load section (`missive-bench --only server`): a real MissiveServer on loopback, and its floor (a bare
/// Hummingbird WebSocket fan-out), each in a child process, driven by the same 1,000 WebSocket clients at the same
/// steady offered rate; see BENCHMARKS.md, "Server load".
public enum ServerLoad {
    /// What to run.
    public struct Options: Sendable {
        /// Seconds of sending in each run.
        public var seconds = 60.0
        /// Messages offered per second, all members together.
        public var rate = 500.0
        /// Measured runs of each server.
        public var runs = 3
        public var members = 1_000
        public var conversationSize = 10
        /// Longest wait, after the sending window, for what is still on its way.
        public var drainSeconds = 15.0
        /// `sqlite`, or a PostgreSQL server's URL (a role that may create databases): the store is the database
        /// `missive_bench_server` on it, made again for each run.
        public var store = "sqlite"
        /// Event-loop threads of the clients' one group.
        public var clientThreads = 1
        /// A folder for the servers' data.
        public var work = NSTemporaryDirectory() + "missive-bench/server"
        /// Which servers to run: `missive`, `floor` or both.
        public var servers = ["missive", "floor"]
        /// Missive server processes on the one store (a PostgreSQL URL for 2): with 2, the members of odd index
        /// connect to the second, the others to the first, so that each conversation has members on both.
        public var instances = 1

        public init() {}

        /// Reads the option `argument` (one of `--server-…`) with its value `next`; `false` when it is not one.
        public mutating func parse(_ argument: String, next: @autoclosure () -> String?) -> Bool {
            switch argument {
            case "--server-seconds": seconds = next().flatMap(Double.init) ?? seconds
            case "--server-rate": rate = next().flatMap(Double.init) ?? rate
            case "--server-store": store = next() ?? store
            case "--server-drain": drainSeconds = next().flatMap(Double.init) ?? drainSeconds
            case "--server-client-threads": clientThreads = next().flatMap(Int.init) ?? clientThreads
            case "--server-only": servers = [next() ?? "missive"]
            case "--server-instances": instances = max(1, min(2, next().flatMap(Int.init) ?? instances))
            default: return false
            }
            return true
        }
    }

    /// What one run of one server measured.
    struct RunResult {
        var server: String
        var seconds: Double
        var offered: Int
        var accepted: Int
        var acceptedInWindow: Int
        var expected: Int
        var delivered: Int
        var deliveredInWindow: Int
        var lost: Int
        var duplicates: Int
        var unexpected: Int
        var errors: [String: Int]
        var ended: Int
        var latencyP50: Double
        var latencyP99: Double
        var latencyMax: Double
        var acceptP50: Double
        var acceptP99: Double
        /// From the sender's `sent` answer (the commit) to a frame's arrival at another member, in ms: members of
        /// the sender's own instance, and (with two instances) members of the first when the sender is on the second.
        var commitSameP50: Double
        var commitSameP99: Double
        var commitCrossP50: Double
        var commitCrossP99: Double
        var serverIdleMiB: Double
        var serverConnectedMiB: Double
        var serverAfterMiB: Double
        var clientsConnectedMiB: Double
        var clientsAfterMiB: Double
        var serverCPU: Double
        var clientsCPU: Double
        var drained: Double

        var acceptedPerSecond: Double { Double(acceptedInWindow) / seconds }
        var deliveredPerSecond: Double { Double(deliveredInWindow) / seconds }
    }

    /// Runs the section and prints its tables; `executable` is the benchmark itself, run again as each server.
    public static func run(_ options: Options, executable: String) async throws {
        let limit = raiseFileLimit()
        let conversations = options.members / options.conversationSize
        print("## Server load: \(options.members) WebSocket connections, \(conversations) conversations of \(options.conversationSize)\n")
        print("- offered: \(format(options.rate, 0)) messages/s for \(format(options.seconds, 0)) s per run, \(options.runs) runs of each server, drain up to \(format(options.drainSeconds, 0)) s")
        print("- store: \(options.store == "sqlite" ? "SQLite (a new file each run)" : "PostgreSQL (a new database each run)"); open-file limit of the benchmark: \(limit)")
        print("- clients: one NIO event-loop group of \(options.clientThreads) thread(s) in the benchmark process; each server in a child process\n")
        if options.instances == 2 {
            guard options.store != "sqlite" else { throw LoadError("--server-instances 2 needs --server-store postgres://…") }
            print("- two Missive instances on the one database and data folder; members of odd index on the second, the others on the first\n")
        }
        FileHandle.standardError.write(Data("server load: \(options.runs) runs × \(options.servers.joined(separator: " + ")), \(options.seconds) s each\n".utf8))

        var results: [String: [RunResult]] = [:]
        let group = MultiThreadedEventLoopGroup(numberOfThreads: options.clientThreads)
        for run in 0..<options.runs {
            // Alternate which server goes first, so that neither always runs on a warmer (or busier) machine.
            let order = run % 2 == 0 ? options.servers : options.servers.reversed()
            for server in order {
                let result = try await measure(server: server, options: options, executable: executable, group: group, run: run)
                FileHandle.standardError.write(Data("  run \(run + 1) \(server): \(summary(result))\n".utf8))
                results[server, default: []].append(result)
            }
        }
        try await group.shutdownGracefully()
        report(results, options: options)
    }

    static func summary(_ r: RunResult) -> String {
        "accepted \(format(r.acceptedPerSecond, 1))/s, delivered \(format(r.deliveredPerSecond, 0))/s, p50 \(format(r.latencyP50, 2)) ms, p99 \(format(r.latencyP99, 2)) ms, "
            + "commit→delivery same p50 \(format(r.commitSameP50, 2)) / p99 \(format(r.commitSameP99, 2)) ms, across p50 \(format(r.commitCrossP50, 2)) / p99 \(format(r.commitCrossP99, 2)) ms, "
            + "max \(format(r.latencyMax, 1)) ms, lost \(r.lost), dup \(r.duplicates), ended \(r.ended), errors \(r.errors), server CPU \(format(r.serverCPU, 0))%, "
            + "clients CPU \(format(r.clientsCPU, 0))%, RSS \(format(r.serverIdleMiB, 1))→\(format(r.serverConnectedMiB, 1))→\(format(r.serverAfterMiB, 1)) MiB"
    }

    // MARK: One run

    static func measure(server: String, options: Options, executable: String, group: any EventLoopGroup, run: Int) async throws -> RunResult {
        let floor = server == "floor"
        let folder = options.work + "/run\(run)-\(server)"
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let tokensPath = folder + "/tokens"

        // The server, in a child process (two for two instances: the second shares the first's data and store,
        // and makes no members of its own).
        var store = "sqlite"
        if !floor && options.store != "sqlite" { store = try recreateDatabase(options.store) }
        let instances = floor ? 1 : options.instances
        var children: [(process: Process, input: Pipe)] = []
        var ports: [Int] = []
        var stopped = false
        func stop() {
            guard !stopped else { return }
            stopped = true
            // Closing its standard input ends a child.
            for child in children { try? child.input.fileHandleForWriting.close() }
            for child in children { child.process.waitUntilExit() }
        }
        defer { stop() }
        for instance in 0..<instances {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: executable)
            child.arguments =
                floor ? ["floor-child"] : ["server-child", folder, store, String(instance == 0 ? options.members : 0), tokensPath]
            let input = Pipe(), output = Pipe()
            child.standardInput = input
            child.standardOutput = output
            try child.run()
            children.append((child, input))
            ports.append(try readPort(output.fileHandleForReading))
        }
        let pid = String(children[0].process.processIdentifier)
        let pids = children.map { String($0.process.processIdentifier) }
        let port = ports[0]
        let tokens: [String?] =
            floor
            ? Array(repeating: nil, count: options.members)
            : try String(contentsOfFile: tokensPath, encoding: .utf8).split(separator: "\n").map { Optional(String($0)) }

        // The conversations: member k·size asks for conversation k with the next size − 1 members.
        let conversations = options.members / options.conversationSize
        if !floor {
            for k in 0..<conversations {
                let first = k * options.conversationSize
                let others = (first + 1..<first + options.conversationSize).map { "\"m\($0)\"" }.joined(separator: ",")
                try await post(
                    "http://127.0.0.1:\(port)/api/v1/conversations", token: tokens[first]!, body: #"{"id":"c\#(k)","members":[\#(others)]}"#)
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let serverIdle = ProcessStats.residentMiB(pid)

        // The connections, 50 at a time, each waiting for its hello.
        let members = (0..<options.members).map {
            LoadMember(index: $0, conversation: "c\($0 / options.conversationSize)", floor: floor, instance: $0 % instances)
        }
        var connections: [Task<Void, Never>] = []
        for batch in stride(from: 0, to: members.count, by: 50) {
            for member in members[batch..<min(batch + 50, members.count)] {
                let url =
                    floor ? "ws://127.0.0.1:\(port)/ws?c=\(member.conversation)" : "ws://127.0.0.1:\(ports[member.instance])/api/v1/events"
                let token = tokens[member.index]
                connections.append(Task { await member.connect(url: url, token: token, group: group) })
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while members[batch..<min(batch + 50, members.count)].contains(where: { !$0.counts.withLock { $0.greeted || $0.ended } }) {
                guard ContinuousClock.now < deadline else { throw LoadError("connections \(batch)… were not greeted within 60 s") }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        let failed = members.filter { $0.counts.withLock { !$0.greeted } }
        guard failed.isEmpty else {
            throw LoadError("\(failed.count) connections failed: \(failed[0].counts.withLock { $0.endError ?? "ended" })")
        }
        try await Task.sleep(for: .seconds(1))
        let serverConnected = ProcessStats.residentMiB(pid)
        let clientsConnected = ProcessStats.residentMiB()

        // The load: an open loop, so that a slow server does not slow the offered rate. Members take turns
        // conversation by conversation (member k of conversation 0, of 1, ..., then member k + 1 of each).
        let order = (0..<options.members).map { k in
            (k % conversations) * options.conversationSize + (k / conversations) % options.conversationSize
        }
        let total = Int(options.rate * options.seconds)
        var sequences = [UInt32](repeating: 0, count: options.members)
        let serverCPUBefore = pids.map { ProcessStats.cpuSeconds($0) }.reduce(0, +), clientsCPUBefore = ProcessStats.cpuSeconds()
        let start = ProcessStats.now()
        let windowEnd = start + Int64(options.seconds * 1e9)
        for member in members { member.windowEnd.store(windowEnd, ordering: .relaxed) }
        var sent = 0
        while sent < total {
            let now = ProcessStats.now()
            let due = min(total, Int(Double(now - start) * options.rate / 1e9) + 1)
            while sent < due {
                let member = members[order[sent % options.members]]
                let sequence = sequences[member.index]
                sequences[member.index] += 1
                member.sink.yield(member.frame(sequence: sequence, sentAt: ProcessStats.now()))
                sent += 1
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        while ProcessStats.now() < windowEnd { try await Task.sleep(for: .milliseconds(1)) }
        let serverCPU = (pids.map { ProcessStats.cpuSeconds($0) }.reduce(0, +) - serverCPUBefore) / options.seconds * 100
        let clientsCPU = (ProcessStats.cpuSeconds() - clientsCPUBefore) / options.seconds * 100

        // The drain: until every accepted message reached every member, or nothing more came for a while.
        let drainStart = ProcessStats.now()
        var lastProgress = drainStart, lastCount = -1
        while true {
            let (accepted, received) = members.reduce((0, 0)) { sum, member in
                member.counts.withLock { (sum.0 + $0.accepted.count, sum.1 + $0.received.count) }
            }
            let now = ProcessStats.now()
            if accepted == total && received >= total * options.conversationSize { break }
            if received + accepted != lastCount {
                lastCount = received + accepted
                lastProgress = now
            }
            if now - lastProgress > 3_000_000_000 || now - drainStart > Int64(options.drainSeconds * 1e9) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let drained = Double(ProcessStats.now() - drainStart) / 1e9
        let serverAfter = ProcessStats.residentMiB(pid)
        let clientsAfter = ProcessStats.residentMiB()

        // Close every connection, then stop the server.
        for member in members { member.sink.finish() }
        let closing = Task {
            for connection in connections { await connection.value }
        }
        let closeDeadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < closeDeadline && members.contains(where: { !$0.counts.withLock { $0.ended } }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        stop()
        await closing.value

        return tally(members, server: server, options: options, offered: total, instances: instances) { result in
            result.serverIdleMiB = serverIdle
            result.serverConnectedMiB = serverConnected
            result.serverAfterMiB = serverAfter
            result.clientsConnectedMiB = clientsConnected
            result.clientsAfterMiB = clientsAfter
            result.serverCPU = serverCPU
            result.clientsCPU = clientsCPU
            result.drained = drained
        }
    }

    /// Adds up what the members counted.
    static func tally(
        _ members: [LoadMember], server: String, options: Options, offered: Int, instances: Int, _ finish: (inout RunResult) -> Void
    ) -> RunResult {
        var acceptedKeys = Set<UInt64>()
        var receipts: [UInt64: Int] = [:]
        var latencies: [Int64] = [], acceptLatencies: [Int64] = []
        var acceptedInWindow = 0, delivered = 0, deliveredInWindow = 0, duplicates = 0, unexpected = 0, ended = 0
        var errors: [String: Int] = [:]
        for member in members {
            member.counts.withLock { counts in
                for sequence in counts.accepted { acceptedKeys.insert(UInt64(member.index) << 32 | UInt64(sequence)) }
                for key in counts.received { receipts[key, default: 0] += 1 }
                latencies += counts.latencies
                acceptLatencies += counts.acceptLatencies
                acceptedInWindow += counts.acceptedInWindow
                delivered += counts.received.count
                deliveredInWindow += counts.deliveredInWindow
                duplicates += counts.duplicates
                unexpected += counts.unexpected
                // A connection that ended with an error, or before the benchmark closed it, was cut off.
                if counts.endError != nil { ended += 1 }
                errors.merge(counts.errors, uniquingKeysWith: +)
            }
        }
        let expected = acceptedKeys.count * options.conversationSize
        // Commit to delivery: the sender's `sent` answer to each other member's receipt, on the one clock. With two
        // instances, senders on the second only: to members of the second (same) and of the first (across).
        var committedAt: [UInt64: Int64] = [:]
        for member in members {
            member.counts.withLock { counts in
                for (sequence, at) in counts.acceptedAt { committedAt[UInt64(member.index) << 32 | UInt64(sequence)] = at }
            }
        }
        var same: [Int64] = [], across: [Int64] = []
        for member in members {
            member.counts.withLock { counts in
                for (index, key) in counts.received.enumerated() {
                    let sender = Int(key >> 32)
                    guard sender != member.index, let committed = committedAt[key] else { continue }
                    let senderInstance = sender % instances
                    guard instances == 1 || senderInstance == 1 else { continue }
                    let delay = counts.receivedAt[index] - committed
                    if senderInstance == member.instance { same.append(delay) } else { across.append(delay) }
                }
            }
        }
        same.sort()
        across.sort()
        var lost = 0
        for key in acceptedKeys { lost += options.conversationSize - min(options.conversationSize, receipts[key] ?? 0) }
        latencies.sort()
        acceptLatencies.sort()
        var result = RunResult(
            server: server, seconds: options.seconds, offered: offered, accepted: acceptedKeys.count, acceptedInWindow: acceptedInWindow,
            expected: expected, delivered: delivered, deliveredInWindow: deliveredInWindow, lost: lost, duplicates: duplicates,
            unexpected: unexpected, errors: errors, ended: ended,
            latencyP50: percentile(latencies, 0.50), latencyP99: percentile(latencies, 0.99), latencyMax: Double(latencies.last ?? 0) / 1e6,
            acceptP50: percentile(acceptLatencies, 0.50), acceptP99: percentile(acceptLatencies, 0.99),
            commitSameP50: percentile(same, 0.50), commitSameP99: percentile(same, 0.99),
            commitCrossP50: percentile(across, 0.50), commitCrossP99: percentile(across, 0.99),
            serverIdleMiB: 0, serverConnectedMiB: 0, serverAfterMiB: 0, clientsConnectedMiB: 0, clientsAfterMiB: 0, serverCPU: 0, clientsCPU: 0,
            drained: 0)
        finish(&result)
        return result
    }

    /// The `fraction` percentile of sorted nanoseconds, in milliseconds.
    static func percentile(_ sorted: [Int64], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1e6
    }

    // MARK: Report

    static func report(_ results: [String: [RunResult]], options: Options) {
        let missive = results["missive"] ?? [], floor = results["floor"] ?? []
        func median(_ runs: [RunResult], _ value: (RunResult) -> Double) -> Double {
            let values = runs.map(value).sorted()
            guard !values.isEmpty else { return .nan }
            return values.count % 2 == 1 ? values[values.count / 2] : (values[values.count / 2 - 1] + values[values.count / 2]) / 2
        }
        func range(_ runs: [RunResult], _ value: (RunResult) -> Double, _ digits: Int) -> String {
            let values = runs.map(value)
            guard let low = values.min(), let high = values.max() else { return "–" }
            return "\(format(median(runs, value), digits)) (\(format(low, digits))–\(format(high, digits)))"
        }
        let rows: [(String, (RunResult) -> Double, Int, Bool)] = [
            ("messages accepted per s (in the window)", { $0.acceptedPerSecond }, 1, true),
            ("deliveries per s (in the window)", { $0.deliveredPerSecond }, 0, true),
            ("delivery latency p50, ms", { $0.latencyP50 }, 2, true),
            ("delivery latency p99, ms", { $0.latencyP99 }, 2, true),
            ("delivery latency max, ms", { $0.latencyMax }, 1, true),
            ("acceptance latency p50, ms (Missive: `sent`; floor: own echo)", { $0.acceptP50 }, 2, true),
            ("acceptance latency p99, ms", { $0.acceptP99 }, 2, true),
            ("commit to delivery p50, ms, same instance (Missive: `sent` to another member's frame)", { $0.commitSameP50 }, 2, false),
            ("commit to delivery p99, ms, same instance", { $0.commitSameP99 }, 2, false),
            ("commit to delivery p50, ms, across instances (sent through the 2nd, received on the 1st)", { $0.commitCrossP50 }, 2, false),
            ("commit to delivery p99, ms, across instances", { $0.commitCrossP99 }, 2, false),
            ("messages offered", { Double($0.offered) }, 0, false),
            ("messages accepted (all)", { Double($0.accepted) }, 0, false),
            ("deliveries expected (accepted × \(options.conversationSize))", { Double($0.expected) }, 0, false),
            ("deliveries received (all)", { Double($0.delivered) }, 0, false),
            ("lost (expected, not received after the drain)", { Double($0.lost) }, 0, false),
            ("duplicated (same message id twice to one member)", { Double($0.duplicates) }, 0, false),
            ("connections cut off", { Double($0.ended) }, 0, false),
            ("drain, s", { $0.drained }, 1, false),
            ("server CPU during the window, % of one core", { $0.serverCPU }, 0, false),
            ("clients' CPU during the window, % of one core", { $0.clientsCPU }, 0, false),
            ("server RSS, MiB: set up, no connection", { $0.serverIdleMiB }, 1, false),
            ("server RSS, MiB: \(options.members) connections open", { $0.serverConnectedMiB }, 1, false),
            ("server RSS, MiB: after the load and drain", { $0.serverAfterMiB }, 1, false),
            ("clients' process RSS, MiB: \(options.members) connections open", { $0.clientsConnectedMiB }, 1, false),
            ("clients' process RSS, MiB: after the load and drain", { $0.clientsAfterMiB }, 1, false),
        ]
        print("| median (min–max) of \(options.runs) runs | Missive | floor: bare Hummingbird fan-out | Missive / floor |")
        print("|---|---|---|---|")
        for (name, value, digits, ratio) in rows {
            let m = median(missive, value), f = median(floor, value)
            print("| \(name) | \(range(missive, value, digits)) | \(range(floor, value, digits)) | \(ratio && f != 0 ? format(m / f, 2) : "") |")
        }
        let errors = (missive + floor).reduce(into: [String: Int]()) { $0.merge($1.errors, uniquingKeysWith: +) }
        let unexpected = (missive + floor).reduce(0) { $0 + $1.unexpected }
        print("\nError answers over all runs: \(errors.isEmpty ? "none" : "\(errors)"); frames not understood: \(unexpected).\n")
        print("Each run:\n")
        for result in missive + floor { print("- \(result.server): \(summary(result))") }
        print("")
    }

    // MARK: Helpers

    /// Reads the child's `PORT n` line, then waits for `READY`.
    static func readPort(_ handle: FileHandle) throws -> Int {
        var buffer: [UInt8] = []
        var port: Int?
        while true {
            let chunk = handle.availableData
            guard !chunk.isEmpty else { throw LoadError("the server child ended before it listened") }
            buffer += chunk
            for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("PORT ") { port = Int(line.dropFirst(5)) }
                if line == "READY", let port { return port }
            }
        }
    }

    /// POSTs `body` with the member's token; fails unless the answer is 201.
    static func post(_ url: String, token: String, body: String) async throws {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == 201 else {
            throw LoadError("POST \(url): \((response as? HTTPURLResponse)?.statusCode ?? 0) \(String(decoding: data, as: UTF8.self))")
        }
    }

    /// Makes the database `missive_bench_server` again on the server of `url`; returns its URL.
    static func recreateDatabase(_ url: String) throws -> String {
        for sql in ["DROP DATABASE IF EXISTS missive_bench_server WITH (FORCE)", "CREATE DATABASE missive_bench_server"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
            process.arguments = [url, "--no-psqlrc", "--quiet", "-v", "ON_ERROR_STOP=1", "-c", sql]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw LoadError("psql failed: \(sql)") }
        }
        var components = URLComponents(string: url)!
        components.path = "/missive_bench_server"
        return components.string!
    }

    static func format(_ value: Double, _ digits: Int) -> String {
        value.isNaN ? "–" : String(format: "%.\(digits)f", value)
    }
}

struct LoadError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
