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
    ],
    targets: [
        .executableTarget(
            name: "missive-bench",
            dependencies: [
                .product(name: "Missive", package: "Missive"),
                .product(name: "MissiveRendering", package: "Missive"),
                .product(name: "MissiveStore", package: "Missive"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            exclude: [],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
