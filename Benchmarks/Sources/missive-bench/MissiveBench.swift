import Foundation
import Missive
import ServerLoad
import Synchronization

/// `missive-bench [--plugins DIR] [--messages N] [--store-messages N] [--runs N] [--work DIR] [--postgres URL] [--pg-messages N]
///  [--only startup|decode|isolation|views|actions|store|postgres|feed|memory|server] [--server-seconds S] [--server-rate N]
///  [--server-store sqlite|URL] [--server-drain S] [--server-client-threads N] [--server-only missive|floor]`
///
/// Measures Missive side by side with its floors and a peer in one run, and prints Markdown tables of
/// medians, min–max and ratios. `Benchmarks/run.sh` builds the sample plugins in release mode and runs this.
@main
struct MissiveBench {
    static func main() async {
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            switch arguments.first {
            case "startup-child": try Startup.child(mode: arguments[1], directory: arguments[2])
            case "scan-plugin": exit(PluginScanner.runScan(arguments: Array(arguments.dropFirst())))
            case "memory-child": try Memory.child(samples: arguments[1], generated: arguments[2], messages: Int(arguments[3])!)
            case "profile-decode": try profileDecode(decoder: arguments[1], plugins: arguments[2], messages: Int(arguments[3])!)
            case "feed-follower": try await FeedBench.follower(location: arguments[1], count: Int(arguments[2])!)
            case "server-child": try await ServerLoad.missiveChild(Array(arguments.dropFirst()))
            case "echo-child": IsolationBench.echoChild(spin: arguments.count > 1 && arguments[1] == "spin")
            case "isolation-startup-child": try IsolationBench.child(mode: arguments[1], directory: arguments[2], plugins: arguments[3])
            case "floor-child": try await ServerLoad.floorChild(Array(arguments.dropFirst()))
            default: try await run(Options(arguments))
            }
        } catch {
            FileHandle.standardError.write(Data("missive-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    struct Options {
        var plugins = FileManager.default.currentDirectoryPath + "/.build/release"
        var messages = 1_000_000
        /// Messages ingested by the store benchmark.
        var storeMessages = 1_000_000
        var runs = 5
        var work = NSTemporaryDirectory() + "missive-bench"
        var header = FileManager.default.currentDirectoryPath + "/Sources/CMissivePlugin/include"
        /// The PostgreSQL server of the `postgres` and `feed` sections (a role that may create databases).
        var postgres = ProcessInfo.processInfo.environment["MISSIVE_BENCH_POSTGRES"]
        /// Messages ingested by the PostgreSQL benchmark; `storeMessages` when not given.
        var postgresMessages: Int?
        /// The sections to run; all when empty.
        var only: Set<String> = []
        /// The server load section's own options (its runs are 3 unless `--runs` is given).
        var server = ServerLoad.Options()
        var runsGiven = false

        /// Whether the section `name` runs.
        func runs(_ name: String) -> Bool { only.isEmpty || only.contains(name) }

        init(_ arguments: [String]) {
            var iterator = arguments.makeIterator()
            while let argument = iterator.next() {
                switch argument {
                case "--plugins": plugins = iterator.next() ?? plugins
                case "--messages": messages = iterator.next().flatMap(Int.init) ?? messages
                case "--store-messages": storeMessages = iterator.next().flatMap(Int.init) ?? storeMessages
                case "--runs":
                    runs = iterator.next().flatMap(Int.init) ?? runs
                    runsGiven = true
                case "--work": work = iterator.next() ?? work
                case "--header": header = iterator.next() ?? header
                case "--only": only.insert(iterator.next() ?? "")
                case "--postgres": postgres = iterator.next()
                case "--pg-messages": postgresMessages = iterator.next().flatMap(Int.init)
                default:
                    if !server.parse(argument, next: iterator.next()) {
                        FileHandle.standardError.write(Data("missive-bench: ignoring \(argument)\n".utf8))
                    }
                }
            }
        }
    }

    static func run(_ options: Options) async throws {
        // The server load alone needs neither the plugins nor the corpus.
        if options.only == ["server"] { return try await runServerLoad(options) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        print("# Missive benchmarks\n")
        print("- messages per run: \(options.messages), runs: \(options.runs) (plus one warm-up), cores: \(cores)")
        print("- sample plugins: \(options.plugins)\n")

        // 1. Startup.
        let generated = options.work + "/plugins"
        try Startup.generatePlugins(into: generated, header: options.header)
        if options.runs("startup") { try reportStartup(directory: generated, runs: options.runs) }

        // 2. Decode.
        let corpus = Corpus()
        let discovery = MessageRegistry.discover(searchPath: PluginSearchPath(entries: [.init(directory: options.plugins, source: .explicit)]))
        let samples = discovery.plugins.map(\.info.name).filter { ["DemoMessages", "DemoMedia", "CRating"].contains($0) }
        guard samples.count == 3 else { throw BenchError("sample plugins not found in \(options.plugins): \(discovery.rejections)") }
        if options.runs("decode") {
            try reportDecode(corpus: corpus, plugins: discovery.plugins, registry: discovery.registry, options: options, cores: cores)
        }

        // 2b. Isolated plugins: the same samples, each in a worker process of its own.
        if options.runs("isolation") {
            IsolationBench.report(
                try IsolationBench.measure(
                    corpus: corpus, plugins: options.plugins, generated: generated, messages: min(options.messages, 200_000), runs: options.runs))
        }

        // 3. Views: off the decode path, measured on their own.
        if options.runs("views") { Views.report(Views.measure(registry: discovery.registry, corpus: corpus, count: 10_000, runs: options.runs)) }

        // 4. Actions: through ffi_call against a direct call, and the argument check apart.
        if options.runs("actions") {
            try Actions.generatePlugin(into: options.work + "/actions", header: options.header)
            Actions.report(try Actions.measure(directory: options.work + "/actions", samples: discovery.registry, runs: options.runs))
        }

        // 5. The store.
        if options.runs("store") {
            // The same loaded plugins but DemoMessages: its links and polls are unknown until it is "installed".
            var without = MessageRegistry.Builder()
            for plugin in discovery.plugins where plugin.info.name != "DemoMessages" { _ = without.register(plugin) }
            StoreBench.report(
                try await StoreBench.measure(
                    registry: discovery.registry, withoutDemoMessages: without.build(), corpus: corpus, messages: options.storeMessages,
                    runs: options.runs, work: options.work + "/store"))
        }

        // 6. The PostgreSQL store, and the change feed's latency on both backends.
        if options.runs("postgres") || options.runs("feed") {
            if let url = options.postgres {
                let server = PostgresServer(url: url)
                if options.runs("postgres") {
                    PostgresBench.report(
                        try await PostgresBench.measure(
                            registry: discovery.registry, corpus: corpus, server: server, messages: options.postgresMessages ?? options.storeMessages,
                            runs: options.runs, work: options.work + "/postgres"),
                        server: server)
                }
                if options.runs("feed") {
                    try server.recreate("missive_bench_feed")
                    let sqlite = options.work + "/feed.sqlite"
                    StoreBench.removeDatabase(sqlite)
                    FeedBench.report([
                        try await FeedBench.measure(backend: "PostgreSQL", location: server.url("missive_bench_feed"), registry: discovery.registry),
                        try await FeedBench.measure(backend: "SQLite", location: sqlite, registry: discovery.registry),
                    ])
                    try server.drop("missive_bench_feed")
                    StoreBench.removeDatabase(sqlite)
                }
            } else {
                print("## PostgreSQL store and change feed: skipped (no server: --postgres URL, or bash Benchmarks/run.sh starts one)\n")
            }
        }

        // 7. Memory.
        if options.runs("memory") {
            let memory = try runSelf(["memory-child", options.plugins, generated, String(options.messages)])
            print("## Memory (one process: \(Startup.pluginCount) generated plugins plus the samples, then \(options.messages) decodes)\n")
            print(memory)
        }

        // 8. The server under load.
        if options.runs("server") { try await runServerLoad(options) }
    }

    static func runServerLoad(_ options: Options) async throws {
        var server = options.server
        if options.runsGiven { server.runs = options.runs }
        server.work = options.work + "/server"
        try await ServerLoad.run(server, executable: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    }

    static func reportStartup(directory generated: String, runs: Int) throws {
        let startup = try Startup.measure(directory: generated, runs: runs)
        print("## Startup: \(Startup.pluginCount) plugin files, \(Startup.pluginCount * Startup.typesPerPlugin) types\n")
        print("| what | ms, median (min–max) | ratio to floor |")
        print("|---|---|---|")
        print("| floor: dlopen + dlsym of each file | \(startup.floor.summary(2)) | 1.00 |")
        print("| Missive: discover, read metadata, load, validate, register | \(startup.missive.summary(2)) | \(format(startup.missive.median / startup.floor.median, 2)) |")
        print("| Missive with a warm snapshot (metadata cache): no file read before dlopen | \(startup.cached.summary(2)) | \(format(startup.cached.median / startup.floor.median, 2)) |")
        print("| Missive, lazy loading, warm snapshot (no plugin loaded yet) | \(startup.lazy.summary(2)) | \(format(startup.lazy.median / startup.floor.median, 2)) |")
        print("| Missive with a warm cache, scanner and crash quarantine on, no file changed | \(startup.protected.summary(2)) | \(format(startup.protected.median / startup.floor.median, 2)) |")
        print("| the same with \(Startup.changedFiles) files changed (each scanned in a child process) | \(startup.protectedChanged.summary(2)) | \(format(startup.protectedChanged.median / startup.floor.median, 2)) |")
        print("")
    }

    static func reportDecode(corpus: Corpus, plugins: [LoadedPlugin], registry: MessageRegistry, options: Options, cores: Int) throws {
        ProtobufDecoder.registerTypes()
        let floor = try RegistryDecoder.compiledIn(plugins: plugins)
        let missive = RegistryDecoder.plugins(registry)
        let decoders: [any BenchDecoder] = [floor, missive, NativeDecoder(), ProtobufDecoder()]
        let simdjson = SimdjsonReference(corpus)
        try checkAgreement(corpus, floor: floor, missive: missive, others: Array(decoders.dropFirst(2)), simdjson: simdjson)

        var single: [String: [Double]] = [:], parallel: [String: [Double]] = [:]
        for run in 0..<(options.runs + 1) {
            let order = run % 2 == 0 ? decoders : decoders.reversed()
            for decoder in order {
                let one = throughput(decoder, corpus.lines, messages: options.messages, threads: 1)
                let all = throughput(decoder, corpus.lines, messages: options.messages, threads: cores)
                if run == 0 { continue }
                single[decoder.name, default: []].append(one)
                parallel[decoder.name, default: []].append(all)
            }
            let one = simdjson.throughput(messages: options.messages, threads: 1)
            let all = simdjson.throughput(messages: options.messages, threads: cores)
            if run == 0 { continue }
            single[SimdjsonReference.name, default: []].append(one)
            parallel[SimdjsonReference.name, default: []].append(all)
        }
        print("## Decode: \(options.messages) envelopes (digest and searchable words taken)\n")
        print("The floor is the same sample types compiled into the benchmark and registered in the same kind of registry,")
        print("decoding the same lines through the same API; the agreement check compared every line's reading first.\n")
        for (title, table) in [("1 thread", single), ("\(cores) threads", parallel)] {
            let floorRate = Samples(values: table[floor.name]!).median
            let peerRate = Samples(values: table[decoders[3].name]!).median
            let parseRate = Samples(values: table[SimdjsonReference.name]!).median
            print("| \(title) | messages/s, median (min–max) | ratio to floor | ratio to peer | time vs simdjson parse |")
            print("|---|---|---|---|---|")
            for name in decoders.map(\.name) + [SimdjsonReference.name] {
                let samples = Samples(values: table[name]!.map { $0 / 1000 })
                let rate = samples.median * 1000
                print("| \(name) | \(samples.summary(0))k | \(format(rate / floorRate, 2)) | \(format(rate / peerRate, 2)) | \(format(parseRate / rate, 1))× |")
            }
            print("")
        }
        reportDecodeByType(corpus: corpus, floor: floor, missive: missive, options: options)
    }

    /// The plugins against the floor for each kind of line on its own, one thread.
    static func reportDecodeByType(corpus: Corpus, floor: RegistryDecoder, missive: RegistryDecoder, options: Options) {
        var groups: [String: [Corpus.Line]] = [:]
        var order: [String] = []
        for line in corpus.lines {
            let label = floor.label(line)
            if groups[label] == nil { order.append(label) }
            groups[label, default: []].append(line)
        }
        let messages = max(options.messages / 10, 10_000)
        print("### Per type, 1 thread (\(messages) messages of each kind per run)\n")
        print("| lines | share of corpus | floor, messages/s | plugins, messages/s | plugins / floor |")
        print("|---|---|---|---|---|")
        for label in order.sorted(by: { groups[$0]!.count > groups[$1]!.count }) {
            let lines = groups[label]!
            var floorRates: [Double] = [], pluginRates: [Double] = []
            for run in 0..<(options.runs + 1) {
                let pair: [RegistryDecoder] = run % 2 == 0 ? [floor, missive] : [missive, floor]
                for decoder in pair {
                    let rate = throughput(decoder, lines, messages: messages, threads: 1)
                    if run == 0 { continue }
                    if decoder.name == floor.name { floorRates.append(rate) } else { pluginRates.append(rate) }
                }
            }
            let floorSamples = Samples(values: floorRates.map { $0 / 1000 }), pluginSamples = Samples(values: pluginRates.map { $0 / 1000 })
            let share = Double(lines.count) * 100 / Double(corpus.lines.count)
            print("| \(label) | \(format(share, 1))% | \(floorSamples.summary(0))k | \(pluginSamples.summary(0))k | \(format(pluginSamples.median / floorSamples.median, 2)) |")
        }
        print("")
    }

    /// Decodes `messages` lines with one decoder and nothing else, to run under a profiler:
    /// `valgrind --tool=callgrind missive-bench profile-decode missive|compiled|native|protobuf PLUGINS N`.
    static func profileDecode(decoder name: String, plugins: String, messages: Int) throws {
        let corpus = Corpus()
        let decoder: any BenchDecoder
        switch name {
        case "missive", "compiled":
            let discovery = MessageRegistry.discover(searchPath: PluginSearchPath(entries: [.init(directory: plugins, source: .explicit)]))
            decoder = name == "missive" ? RegistryDecoder.plugins(discovery.registry) : try RegistryDecoder.compiledIn(plugins: discovery.plugins)
        case "native": decoder = NativeDecoder()
        case "protobuf":
            ProtobufDecoder.registerTypes()
            decoder = ProtobufDecoder()
        default: throw BenchError("unknown decoder \(name)")
        }
        print(throughput(decoder, corpus.lines, messages: messages, threads: 1))
    }

    /// Messages per second for one decoder over `messages` lines.
    static func throughput(_ decoder: any BenchDecoder, _ lines: [Corpus.Line], messages: Int, threads: Int) -> Double {
        let checksum = Mutex(0)
        let start = now()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var sum = 0
            var index = thread
            while index < messages {
                sum &+= decoder.decode(lines[index % lines.count])
                index += threads
            }
            checksum.withLock { $0 &+= sum }
        }
        let elapsed = now() - start
        if checksum.withLock({ $0 }) == Int.min { print("") }  // keeps the work observable
        return Double(messages) / elapsed
    }

    /// Every decoder must read the corpus the same way: the plugins and the floor give the same reading of
    /// every line (type, digest, push text, words, content sent again, persistence); the former floor the same
    /// checksum on every line; the peer on every line of a type it knows; simdjson refuses exactly the
    /// malformed envelopes.
    static func checkAgreement(
        _ corpus: Corpus, floor: RegistryDecoder, missive: RegistryDecoder, others: [any BenchDecoder], simdjson: SimdjsonReference
    ) throws {
        var disagreements: [String] = []
        for line in corpus.lines {
            let text = String(decoding: line.missive, as: UTF8.self)
            let expected = floor.reading(line)
            let reading = missive.reading(line)
            if reading != expected { disagreements.append("floor read \(expected)\n  plugins read \(reading)\n  line: \(text)") }
            let checksum = missive.decode(line)
            for decoder in others where line.kind == .known || decoder is NativeDecoder {
                let result = decoder.decode(line)
                if result != checksum { disagreements.append("\(decoder.name) \(result) vs Missive \(checksum): \(text)") }
            }
        }
        let malformed = corpus.lines.indices.filter { corpus.lines[$0].kind == .malformedEnvelope }
        let refused = simdjson.refusedLines()
        if refused != malformed { disagreements.append("simdjson refused lines \(refused.prefix(5)), the corpus has malformed envelopes at \(malformed.prefix(5))") }
        guard disagreements.isEmpty else {
            throw BenchError("decoders disagree on \(disagreements.count) lines, e.g.\n" + disagreements.prefix(3).joined(separator: "\n"))
        }
        print("Agreement: the floor and the plugins read all \(corpus.lines.count) lines the same; the former floor, the peer and simdjson agree too.\n")
    }
}

/// Resident memory with many plugins loaded, and whether it grows over many decodes.
enum Memory {
    static func child(samples: String, generated: String, messages: Int) throws {
        let baseline = residentMemory()
        let discovery = MessageRegistry.discover(searchPath: PluginSearchPath(entries: [
            .init(directory: samples, source: .explicit), .init(directory: generated, source: .explicit),
        ]))
        let loaded = residentMemory()
        let corpus = Corpus()
        let decoder = RegistryDecoder.plugins(discovery.registry)
        var sum = 0
        let warmUp = messages / 10
        for index in 0..<warmUp { sum &+= decoder.decode(corpus.lines[index % corpus.lines.count]) }
        let warm = residentMemory()
        for index in warmUp..<messages { sum &+= decoder.decode(corpus.lines[index % corpus.lines.count]) }
        let end = residentMemory()
        print("| point | RSS MiB | peak RSS MiB |")
        print("|---|---|---|")
        print("| before loading | \(format(baseline.current, 1)) | \(format(baseline.peak, 1)) |")
        print("| \(discovery.plugins.count) plugins loaded, \(discovery.registry.types.count) types | \(format(loaded.current, 1)) | \(format(loaded.peak, 1)) |")
        print("| after \(warmUp) decodes (warm-up) | \(format(warm.current, 1)) | \(format(warm.peak, 1)) |")
        print("| after \(messages) decodes | \(format(end.current, 1)) | \(format(end.peak, 1)) |")
        print("\nGrowth over the last \(messages - warmUp) decodes: \(format(end.current - warm.current, 2)) MiB (checksum \(sum % 1000))")
    }
}
