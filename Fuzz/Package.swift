// swift-tools-version: 6.1
import PackageDescription

// Missive's fuzz targets live in their own package, so that users of the library never build them. Each
// `fuzz-*` executable is a libFuzzer target: it has no main of its own, so it links only with
// `--sanitize=fuzzer`. Build and run them all with `bash Fuzz/run.sh` from the repository's root
// (docs/FUZZING.md).
let package = Package(
    name: "MissiveFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Missive", path: ".."),
    ],
    targets: [
        // The invariants each target checks, and what they need (an ELF writer, a metadata record writer),
        // kept apart from libFuzzer so that they read as plain Swift.
        .target(
            name: "FuzzSupport",
            dependencies: [.product(name: "Missive", package: "Missive")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(name: "fuzz-envelope", dependencies: ["FuzzSupport"], swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "fuzz-metadata", dependencies: ["FuzzSupport"], swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "fuzz-decoders", dependencies: ["FuzzSupport"], swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
