// swift-tools-version: 6.1
import PackageDescription

// Missive's benchmarks live in their own package, so that users of the library never build them or
// swift-protobuf (the peer). Run them with `bash Benchmarks/run.sh` from the repository's root.
let package = Package(
    name: "MissiveBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Missive", path: ".."),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        // The store benchmark's floor inserts rows through GRDB's prepared statements, as the store does.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The PostgreSQL store's floor copies rows in with postgres-nio's COPY FROM STDIN.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // The server load: a real MissiveServer, and its floor (a bare Hummingbird WebSocket fan-out), driven by
        // WebSocket clients.
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "missive-bench",
            dependencies: [
                .product(name: "Missive", package: "Missive"),
                .product(name: "MissiveRendering", package: "Missive"),
                .product(name: "MissiveStore", package: "Missive"),
                .product(name: "MissivePostgresStore", package: "Missive"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                "CompiledDemoMessages", "CompiledDemoMedia", "SimdjsonReference", "ServerLoad",
            ],
            exclude: [],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The floor: the sample plugins' Swift types, compiled from the plugins' own source files (linked
        // from SampleTypes) into the benchmark, which registers them as native types. MISSIVE_COMPILED_IN
        // leaves out each plugin's entry symbol, which two modules of one executable cannot both define.
        .target(
            name: "CompiledDemoMessages",
            dependencies: [.product(name: "MissivePluginKit", package: "Missive")],
            swiftSettings: [.swiftLanguageMode(.v6), .define("MISSIVE_COMPILED_IN")]
        ),
        .target(
            name: "CompiledDemoMedia",
            dependencies: [.product(name: "MissivePluginKit", package: "Missive")],
            swiftSettings: [.swiftLanguageMode(.v6), .define("MISSIVE_COMPILED_IN")]
        ),
        // The server load section (`--only server`): its own module, so that the rest of the benchmark is not
        // rebuilt with it.
        .target(
            name: "ServerLoad",
            dependencies: [
                .product(name: "Missive", package: "Missive"),
                .product(name: "MissiveServer", package: "Missive"),
                .product(name: "MissiveStore", package: "Missive"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The server load section alone: `swift build -c release --package-path Benchmarks --product missive-bench-server`
        // builds it without swift-syntax, swift-protobuf or simdjson.
        .executableTarget(name: "missive-bench-server", dependencies: ["ServerLoad"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // A parse-only reference: simdjson (Debian's libsimdjson-dev) parsing the same lines.
        .target(
            name: "SimdjsonReference",
            linkerSettings: [.linkedLibrary("simdjson")]
        ),
    ],
    cxxLanguageStandard: .cxx17
)
