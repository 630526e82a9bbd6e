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
                "CompiledDemoMessages", "CompiledDemoMedia", "SimdjsonReference",
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
        // A parse-only reference: simdjson (Debian's libsimdjson-dev) parsing the same lines.
        .target(
            name: "SimdjsonReference",
            linkerSettings: [.linkedLibrary("simdjson")]
        ),
    ],
    cxxLanguageStandard: .cxx17
)
