import Foundation
@_spi(Benchmarks) import Missive

/// Isolated plugins (docs/PROTECTION.md, "Isolated plugins"): the same sample plugins in process and each in a worker
/// process of its own, in one run.
///
/// - Batched decode: the corpus's envelopes (parsed beforehand, for both) decoded in batches of 1,000 with
///   `MessageRegistry.decode(_:)`, the digest, push text and words taken of each, one host thread; the ratio is
///   isolated over in process.
/// - Round trip: one message decoded alone (`decode(_:)` of one envelope, its digest taken), each call timed; p50 and
///   p99 in microseconds.
/// - Startup: discovering and registering the 200 generated plugins, each in its own worker, against the same in
///   process (both eager, no cache), each start in a fresh process of its own.
/// - Memory: the resident set of one sample plugin's idle worker, and the total of the 200 startup workers.
enum IsolationBench {
    struct Measurements {
        var inProcess: Samples, isolated: Samples
        var roundTrip: (p50: Double, p99: Double), inProcessRoundTrip: (p50: Double, p99: Double), floorRoundTrip: (p50: Double, p99: Double)
        var spinningFloorRoundTrip: (p50: Double, p99: Double)
        var unconfinedRoundTrip: (p50: Double, p99: Double)
        var startupInProcess: Samples, startupIsolated: Samples, startupUnconfined: Samples
        var workerMemory: [(resident: Double, proportional: Double)], startupMemory: (resident: Double, proportional: Double)
        var startupMemoryUnconfined: (resident: Double, proportional: Double)
        var messages: Int
    }

    /// The isolation a benchmark host uses: the worker built beside the sample plugins, in namespaces of its own (the
    /// default) or, with `confined: false`, without them.
    static func isolation(plugins: String, confined: Bool = true) throws -> PluginIsolation {
        let worker = plugins + "/" + PluginIsolation.workerExecutableName
        guard FileManager.default.isExecutableFile(atPath: worker) else {
            throw BenchError("no \(PluginIsolation.workerExecutableName) in \(plugins): build it (swift build -c release --product missive-plugin-worker)")
        }
        var isolation = PluginIsolation(policy: .isolated, workerCommand: [worker])
        isolation.confinement = confined ? .namespaces : .none
        return isolation
    }

    static func measure(corpus: Corpus, plugins: String, generated: String, messages: Int, runs: Int) throws -> Measurements {
        let searchPath = PluginSearchPath(entries: [.init(directory: plugins, source: .explicit)])
        var protection = PluginProtection()
        protection.isolation = try isolation(plugins: plugins)
        let local = MessageRegistry.discover(searchPath: searchPath).registry
        let isolatedResult = MessageRegistry.discover(searchPath: searchPath, protection: protection)
        guard !isolatedResult.discovery.isolatedPlugins.isEmpty else { throw BenchError("no plugin was isolated: \(isolatedResult.rejections.prefix(3))") }
        let isolated = isolatedResult.registry
        let envelopes = corpus.lines.compactMap { try? Envelope(parsing: $0.missive) }
        // Both read the same: the isolated answers are the in-process ones.
        for (a, b) in zip(local.decode(Array(envelopes.prefix(5_000))), isolated.decode(Array(envelopes.prefix(5_000)))) {
            guard a.isKnown == b.isKnown, a.digest == b.digest, a.content.searchableWords == b.content.searchableWords else {
                throw BenchError("isolated and in-process answers differ for \(a.envelope.id)")
            }
        }
        var inProcess: [Double] = [], isolatedRates: [Double] = []
        for run in 0..<(runs + 1) {
            let order = run % 2 == 0 ? [local, isolated] : [isolated, local]
            for (position, registry) in order.enumerated() {
                let rate = throughput(registry, envelopes, messages: messages)
                if run == 0 { continue }
                let isLocal = (run % 2 == 0) == (position == 0)
                if isLocal { inProcess.append(rate) } else { isolatedRates.append(rate) }
            }
        }
        let floorTrip = try pingPongFloor(calls: 20_000, spin: false)
        let spinningFloorTrip = try pingPongFloor(calls: 20_000, spin: true)
        let trip = roundTrip(isolated, envelopes, calls: 20_000)
        // The same plugins isolated without namespaces: what the walls add to a call, if anything.
        var unconfinedProtection = PluginProtection()
        unconfinedProtection.isolation = try isolation(plugins: plugins, confined: false)
        let unconfined = MessageRegistry.discover(searchPath: searchPath, protection: unconfinedProtection).registry
        let unconfinedTrip = roundTrip(unconfined, envelopes, calls: 20_000)
        let localTrip = roundTrip(local, envelopes, calls: 20_000)
        let memory = isolated.isolatedWorkerMemory.map { (Double($0.resident) / 1_048_576, Double($0.proportional) / 1_048_576) }
        var startupLocal: [Double] = [], startupIsolated: [Double] = [], startupUnconfined: [Double] = []
        var startupMemory = (resident: 0.0, proportional: 0.0), startupMemoryUnconfined = (resident: 0.0, proportional: 0.0)
        let modes = ["in-process", "isolated", "isolated-unconfined"]
        for run in 0..<(runs + 1) {
            // Each run starts with another mode, so that none always has the warmest caches.
            for mode in modes[(run % 3)...] + modes[..<(run % 3)] {
                let (milliseconds, megabytes) = try startupChild(mode: mode, directory: generated, plugins: plugins)
                if run == 0 { continue }
                switch mode {
                case "isolated":
                    startupIsolated.append(milliseconds)
                    if megabytes.proportional > startupMemory.proportional { startupMemory = megabytes }
                case "isolated-unconfined":
                    startupUnconfined.append(milliseconds)
                    if megabytes.proportional > startupMemoryUnconfined.proportional { startupMemoryUnconfined = megabytes }
                default:
                    startupLocal.append(milliseconds)
                }
            }
        }
        return Measurements(
            inProcess: Samples(values: inProcess), isolated: Samples(values: isolatedRates), roundTrip: trip, inProcessRoundTrip: localTrip,
            floorRoundTrip: floorTrip, spinningFloorRoundTrip: spinningFloorTrip, unconfinedRoundTrip: unconfinedTrip,
            startupInProcess: Samples(values: startupLocal), startupIsolated: Samples(values: startupIsolated),
            startupUnconfined: Samples(values: startupUnconfined), workerMemory: memory, startupMemory: startupMemory,
            startupMemoryUnconfined: startupMemoryUnconfined, messages: messages)
    }

    /// Messages per second: batches of 1,000 decoded with one call, each message's digest, push text and words taken.
    static func throughput(_ registry: MessageRegistry, _ envelopes: [Envelope], messages: Int) -> Double {
        var sum = 0
        let start = now()
        var done = 0
        while done < messages {
            let count = min(1_000, messages - done)
            let from = done % envelopes.count
            let batch = from + count <= envelopes.count ? Array(envelopes[from..<(from + count)]) : Array(envelopes[from...] + envelopes[..<(count - (envelopes.count - from))])
            for message in registry.decode(batch) {
                sum &+= message.digest.utf8.count &+ (message.content.pushContent?.utf8.count ?? 0) &+ message.content.searchableWords.count
            }
            done += count
        }
        let elapsed = now() - start
        if sum == Int.min { print("") }
        return Double(messages) / elapsed
    }

    /// Each call of one message's decode timed: p50 and p99 in microseconds.
    static func roundTrip(_ registry: MessageRegistry, _ envelopes: [Envelope], calls: Int) -> (p50: Double, p99: Double) {
        var times: [Double] = []
        times.reserveCapacity(calls)
        var sum = 0
        for index in 0..<(calls + 1_000) {
            let start = now()
            sum &+= registry.decode(envelopes[index % envelopes.count]).digest.utf8.count
            let elapsed = (now() - start) * 1e6
            if index >= 1_000 { times.append(elapsed) }
        }
        if sum == Int.min { print("") }
        times.sort()
        return (times[times.count / 2], times[times.count * 99 / 100])
    }

    /// The floor of any round trip to another process on this machine: 64 bytes written to a socketpair, echoed by a
    /// child that does nothing else, read back; each timed. With `spin`, both sides look for the bytes for 50 µs
    /// before they sleep, as the host and the worker do. p50 and p99 in microseconds.
    static func pingPongFloor(calls: Int, spin: Bool) throws -> (p50: Double, p99: Double) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else { throw BenchError("socketpair failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pair[1], 3)
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(executable), strdup("echo-child"), strdup(spin ? "spin" : "block"), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { throw BenchError("cannot start the echo child") }
        close(pair[1])
        defer {
            close(pair[0])
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        var message = [UInt8](repeating: 7, count: 64)
        var times: [Double] = []
        times.reserveCapacity(calls)
        for index in 0..<(calls + 1_000) {
            let start = now()
            _ = message.withUnsafeBytes { write(pair[0], $0.baseAddress, 64) }
            var got = 0
            while got < 64 {
                let count = message.withUnsafeMutableBytes { receive(pair[0], $0.baseAddress! + got, 64 - got, spin: spin) }
                guard count > 0 else { throw BenchError("the echo child ended") }
                got += count
            }
            if index >= 1_000 { times.append((now() - start) * 1e6) }
        }
        times.sort()
        return (times[times.count / 2], times[times.count * 99 / 100])
    }

    /// A read of `socket`, looking for data for 50 µs first when `spin`.
    static func receive(_ socket: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, spin: Bool) -> Int {
        if spin {
            let end = now() + 50e-6
            repeat {
                let got = recv(socket, buffer, count, Int32(MSG_DONTWAIT))
                if got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { return got }
            } while now() < end
        }
        return recv(socket, buffer, count, 0)
    }

    /// The echo child of ``pingPongFloor(calls:spin:)``: echoes descriptor 3 until it closes.
    static func echoChild(spin: Bool) -> Never {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { receive(3, $0.baseAddress!, 4096, spin: spin) }
            guard count > 0 else { exit(0) }
            _ = buffer.withUnsafeBytes { write(3, $0.baseAddress, count) }
        }
    }

    /// One start in a fresh process: milliseconds to a registry, and the workers' memory in MiB (resident, proportional).
    static func startupChild(mode: String, directory: String, plugins: String) throws -> (Double, (resident: Double, proportional: Double)) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["isolation-startup-child", mode, directory, plugins]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard process.terminationStatus == 0, fields.count == 4, let milliseconds = Double(fields[0]), let count = Int(fields[1]),
            let resident = Double(fields[2]), let proportional = Double(fields[3]), count == Startup.pluginCount
        else { throw BenchError("isolation startup child (\(mode)) gave \(String(decoding: data, as: UTF8.self))") }
        return (milliseconds, (resident, proportional))
    }

    /// The child's side: discovers the generated plugins in process or isolated and prints the time, the count of
    /// plugins and the workers' total resident memory.
    static func child(mode: String, directory: String, plugins: String) throws {
        var protection = PluginProtection()
        if mode != "in-process" { protection.isolation = try isolation(plugins: plugins, confined: mode == "isolated") }
        let start = now()
        let result = MessageRegistry.discover(searchPath: PluginSearchPath(entries: [.init(directory: directory, source: .explicit)]), protection: protection)
        let elapsed = (now() - start) * 1000
        guard result.rejections.isEmpty else { throw BenchError("rejections: \(result.rejections.prefix(3))") }
        let count = mode == "in-process" ? result.plugins.count : result.discovery.isolatedPlugins.count
        let memory = result.registry.isolatedWorkerMemory
        let resident = Double(memory.map(\.resident).reduce(0, +)) / 1_048_576, proportional = Double(memory.map(\.proportional).reduce(0, +)) / 1_048_576
        print("\(elapsed) \(count) \(resident) \(proportional)")
    }

    static func report(_ m: Measurements) {
        print("## Isolated plugins: each sample plugin in a worker process of its own\n")
        print("The same sample plugins in process and isolated, in one run; batches of 1,000 envelopes (parsed beforehand) decoded with")
        print("`MessageRegistry.decode(_:)`, the digest, push text and words taken of each, one host thread; \(m.messages) messages per run.\n")
        print("| decode | messages/s, median (min–max) | ratio |")
        print("|---|---|---|")
        print("| in process | \(Samples(values: m.inProcess.values.map { $0 / 1000 }).summary(0))k | 1.00 |")
        print("| isolated, batched | \(Samples(values: m.isolated.values.map { $0 / 1000 }).summary(0))k | \(format(m.isolated.median / m.inProcess.median, 2)) |")
        print("")
        print("| one message alone (decode and digest) | p50 µs | p99 µs |")
        print("|---|---|---|")
        print("| in process | \(format(m.inProcessRoundTrip.p50, 2)) | \(format(m.inProcessRoundTrip.p99, 2)) |")
        print("| floor: 64 bytes to an echoing child process and back, both sleeping in `recv` | \(format(m.floorRoundTrip.p50, 2)) | \(format(m.floorRoundTrip.p99, 2)) |")
        print("| floor, both looking for 50 µs before they sleep | \(format(m.spinningFloorRoundTrip.p50, 2)) | \(format(m.spinningFloorRoundTrip.p99, 2)) |")
        print("| isolated: a round trip to the worker | \(format(m.roundTrip.p50, 2)) | \(format(m.roundTrip.p99, 2)) |")
        print("| isolated without namespaces: the same | \(format(m.unconfinedRoundTrip.p50, 2)) | \(format(m.unconfinedRoundTrip.p99, 2)) |")
        print("")
        print("| startup of \(Startup.pluginCount) plugins (eager, no cache), ms | median (min–max) |")
        print("|---|---|")
        print("| in process | \(m.startupInProcess.summary(1)) |")
        print("| isolated, a worker each, in namespaces of its own (the default) | \(m.startupIsolated.summary(1)) |")
        print("| isolated, a worker each, without namespaces | \(m.startupUnconfined.summary(1)) |")
        print("")
        let each = m.workerMemory.map { "\(format($0.resident, 1)) resident / \(format($0.proportional, 1)) proportional" }.joined(separator: ", ")
        print("Memory of one idle sample worker, MiB: \(each). The \(Startup.pluginCount) startup workers together: \(format(m.startupMemory.resident, 0)) MiB")
        print("resident, \(format(m.startupMemory.proportional, 0)) MiB proportional (shared pages, such as the Swift runtime's code, divided among the")
        print("processes that map them: what the workers really add). Without namespaces: \(format(m.startupMemoryUnconfined.resident, 0)) MiB resident,")
        print("\(format(m.startupMemoryUnconfined.proportional, 0)) MiB proportional.\n")
    }
}
