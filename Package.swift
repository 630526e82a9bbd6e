// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode plus the stricter upcoming features.
let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The deliberately broken plugins in Tests/Fixtures/BrokenPlugins, each built as `libBroken<Name>.so`.
/// Each differs from a valid plugin in one way, named by its folder.
let brokenPlugins = [
    "WrongABI", "NoEntry", "UnresolvedSymbol", "DuplicateNames", "ReservedPrefix", "MetadataMismatch",
    "CrashInDecode", "HangInDecode", "AbortOnLoad", "NoRoundTrip", "DigestNewline", "DigestInvalidUTF8",
    "LeakyRelease", "UnknownPersistence", "StatusPush", "AcceptsGarbage", "BadOutputs", "ExitInDecode", "FloodInDecode",
    "ForkInDecode",
]

let package = Package(
    name: "Missive",
    platforms: [.macOS(.v15)],
    products: [
        // For hosts: registry, envelope, built-in types, plugin loader.
        .library(name: "Missive", targets: ["Missive"]),
        // For plugin authors: link it statically into a `.dynamic` product.
        .library(name: "MissivePluginKit", targets: ["MissivePluginKit"]),
        .executable(name: "missive", targets: ["missive"]),
        // `swift package missive-check`: validate a package's plugin products.
        .plugin(name: "MissiveCheckPlugin", targets: ["MissiveCheckPlugin"]),

        // Sample message-type plugins.
        .library(name: "DemoMessages", type: .dynamic, targets: ["DemoMessages"]),
        .library(name: "DemoMedia", type: .dynamic, targets: ["DemoMedia"]),
        .library(name: "CRating", type: .dynamic, targets: ["CRating"]),
        // Deliberately broken plugins, loaded by the tests.
    ] + brokenPlugins.map { .library(name: "Broken\($0)", type: .dynamic, targets: ["Broken\($0)"]) },
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
    ],
    targets: [
        // The C ABI: one versioned header.
        .target(name: "CMissivePlugin"),

        // The protocols that built-in types and plugin types both conform to.
        .target(name: "MissiveCore", swiftSettings: strictSwift),

        // The host library.
        .target(name: "Missive", dependencies: ["MissiveCore", "CMissivePlugin"], swiftSettings: strictSwift),

        // The plugin SDK and its macros.
        .macro(
            name: "MissiveMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "MissivePluginKit",
            dependencies: ["MissiveCore", "CMissivePlugin", "MissiveMacros"],
            swiftSettings: strictSwift
        ),

        // The conformance suite, as a library the CLI, the command plugin and the tests share.
        .target(name: "MissiveConformance", dependencies: ["Missive", "CMissivePlugin", "CMissiveHeap"], swiftSettings: strictSwift),
        // The allocator's heap counter (glibc's mallinfo2), for the memory checks.
        .target(name: "CMissiveHeap"),

        // The command-line tool.
        .executableTarget(
            name: "missive",
            dependencies: ["Missive", "MissiveConformance", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictSwift
        ),

        // The command plugin: builds the dynamic library products and runs `missive check` on them.
        .plugin(
            name: "MissiveCheckPlugin",
            capability: .command(
                intent: .custom(verb: "missive-check", description: "Run the Missive conformance suite on this package's plugin products.")),
            dependencies: ["missive"]
        ),

        // Sample plugins.
        .target(name: "DemoMessages", dependencies: ["MissivePluginKit"], path: "SampleTypes/DemoMessages", swiftSettings: strictSwift),
        .target(name: "DemoMedia", dependencies: ["MissivePluginKit"], path: "SampleTypes/DemoMedia", swiftSettings: strictSwift),
        .target(name: "CRating", dependencies: ["CMissivePlugin"], path: "SampleTypes/CRating", publicHeadersPath: "."),

        // Broken plugins (plain C, so each defect is exactly the one intended).
        .target(name: "BrokenPluginSupport", dependencies: ["CMissivePlugin"], path: "Tests/Fixtures/BrokenPlugins/Support"),

    ] + brokenPlugins.map {
        .target(name: "Broken\($0)", dependencies: ["BrokenPluginSupport"], path: "Tests/Fixtures/BrokenPlugins/\($0)", publicHeadersPath: ".")
    } + [
        .testTarget(
            name: "MissiveTests",
            dependencies: ["Missive", "MissivePluginKit"],
            swiftSettings: strictSwift
        ),
    ]
)
