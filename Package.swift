// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode plus the stricter upcoming features.
let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Missive",
    platforms: [.macOS(.v15)],
    products: [
        // For hosts: registry, envelope, built-in types, plugin loader.
        .library(name: "Missive", targets: ["Missive"]),
        // For plugin authors: link it statically into a `.dynamic` product.
        .library(name: "MissivePluginKit", targets: ["MissivePluginKit"]),
        // For hosts that draw messages: transcripts, layout, terminal and HTML renderers.
        .library(name: "MissiveRendering", targets: ["MissiveRendering"]),
        // For hosts that keep messages: the SQLite store (persistence flags, unread counts, search, replies).
        .library(name: "MissiveStore", targets: ["MissiveStore"]),
        // For hosts that keep messages on a PostgreSQL server; a host on SQLite never builds NIO.
        .library(name: "MissivePostgresStore", targets: ["MissivePostgresStore"]),
        // For chat services: `missive serve`'s server (HTTP, WebSocket, accounts) as a library; it builds Hummingbird
        // and SwiftNIO, which no other library product does.
        .library(name: "MissiveServer", targets: ["MissiveServer"]),
        // For client hosts of `missive serve`: its HTTP API, its event stream, and a local store kept in step.
        .library(name: "MissiveClient", targets: ["MissiveClient"]),
        // The API's JSON shapes (bodies and event-stream frames), which the server writes and the client reads: for a
        // client of `missive serve` written without MissiveClient.
        .library(name: "MissiveWire", targets: ["MissiveWire"]),
        .executable(name: "missive", targets: ["missive"]),
        // For plugin authors: `missive check` alone, without the store, the database client or the server.
        .executable(name: "missive-check", targets: ["missive-check"]),
        // For hosts built on the library: tries new or changed plugin files in a child process before loading.
        .executable(name: "missive-plugin-scanner", targets: ["missive-plugin-scanner"]),
        // For hosts built on the library that isolate plugins: the worker process that loads one plugin and answers
        // the host over a socket, under resource limits and a seccomp filter (docs/PROTECTION.md).
        .executable(name: "missive-plugin-worker", targets: ["missive-plugin-worker"]),
        // `swift package missive-check`: validate a package's plugin products.
        .plugin(name: "MissiveCheckPlugin", targets: ["MissiveCheckPlugin"]),

        // Sample message-type plugins.
        .library(name: "DemoMessages", type: .dynamic, targets: ["DemoMessages"]),
        .library(name: "DemoMedia", type: .dynamic, targets: ["DemoMedia"]),
        .library(name: "CRating", type: .dynamic, targets: ["CRating"]),
        .library(name: "MatrixBridge", type: .dynamic, targets: ["MatrixBridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // SQLite (Debian's libsqlite3-dev) for the store.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // SHA-256 of plugin files (the scanner's verdicts and signatures) and Ed25519 (the Crypto product only:
        // BoringSSL, no ASN.1).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The PostgreSQL store's client (its connection pool, extended protocol, LISTEN).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // NIO's own errors, to say in words why a server cannot be reached (postgres-nio runs on it anyway).
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        // The server: HTTP and WebSocket, and a clean shutdown on SIGTERM and SIGINT.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // The C ABI: one versioned header.
        .target(name: "CMissivePlugin"),
        // libffi, from Debian's libffi-dev, for calling plugin actions by their signature.
        .systemLibrary(name: "CFFI", pkgConfig: "libffi", providers: [.apt(["libffi-dev"])]),

        // The crash guard: which plugin a thread runs, and the fatal-signal handler that writes it down.
        .target(name: "CMissiveGuard"),
        // libseccomp, from Debian's libseccomp-dev, for the isolated plugin worker's system-call filter.
        .systemLibrary(name: "CSeccomp", pkgConfig: "libseccomp", providers: [.apt(["libseccomp-dev"])]),
        // The isolated plugin worker's process: how it is started (no inherited descriptors, an empty environment)
        // and the seccomp filter it runs under.
        .target(name: "CMissiveSandbox", dependencies: ["CSeccomp"]),

        // The protocols that built-in types and plugin types both conform to.
        .target(name: "MissiveCore", swiftSettings: strictSwift),

        // The host library.
        .target(
            name: "Missive",
            dependencies: [
                "MissiveCore", "CMissivePlugin", "CFFI", "CMissiveGuard", "CMissiveSandbox", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),

        // Drawing: transcripts, layout options, decorations, components, terminal and HTML renderers.
        .target(name: "MissiveRendering", dependencies: ["Missive"], swiftSettings: strictSwift),

        // The store: messages kept in SQLite as their flags say, unread counters, full-text search, replies.
        .target(
            name: "MissiveStore",
            dependencies: ["Missive", "MissiveWire", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictSwift
        ),
        // The server's API as Codable types, the one source of its shapes (docs/API.md): the server and the client
        // both use them, and docs/SERVER.md is checked against them.
        .target(name: "MissiveWire", dependencies: ["MissiveCore"], swiftSettings: strictSwift),
        // The same store on a PostgreSQL server: many hosts share one database.
        .target(
            name: "MissivePostgresStore",
            dependencies: [
                "MissiveStore", "Missive", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        // The server members connect to: accounts, the HTTP API, the WebSocket stream, on either store backend.
        .target(
            name: "MissiveServer",
            dependencies: [
                "Missive", "MissiveCore", "MissiveStore", "MissivePostgresStore", "MissiveRendering", "MissiveWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        // A client host's side of the server: the HTTP API (URLSession), the event stream (a WebSocket client) and
        // the sync of a local one-account store.
        .target(
            name: "MissiveClient",
            dependencies: [
                "Missive", "MissiveCore", "MissiveStore", "MissiveWire",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        // The plugin SDK and its macros: the compiler plugin with the macros' expansions. No test target may depend on
        // it, nor may any other root target but the SDK: SwiftPM would then build every test target, and all they
        // depend on (the store, the server, NIO, both BoringSSLs...), a second time for the host, or swift-syntax a
        // second time, for the target (docs/TESTING.md). MissiveMacrosTests drives it through the compiler instead.
        .macro(
            name: "MissiveMacros",
            dependencies: [
                // For the Swift compiler version the plugin records in its metadata.
                "MissiveCore",
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

        // The conformance suite, as a library the CLI (and through it the command plugin) and the tests share; not a
        // product, so its API is `package`, not `public` (docs/API.md).
        .target(name: "MissiveConformance", dependencies: ["Missive", "CMissivePlugin", "CMissiveHeap"], swiftSettings: strictSwift),
        // The allocator's heap counter (glibc's mallinfo2), for the memory checks.
        .target(name: "CMissiveHeap"),

        // What the command-line tools share: the console, paths, how a command ends, the checker's options.
        .target(
            name: "MissiveCommandLine",
            dependencies: ["Missive", "MissiveConformance", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictSwift
        ),

        // `missive chat`'s session: its commands, drawing and events, over MissiveClient's sync (a module of its own,
        // so that its tests drive it in process).
        .target(
            name: "MissiveChatUI",
            dependencies: ["Missive", "MissiveClient", "MissiveCommandLine", "MissiveRendering", "MissiveStore"],
            swiftSettings: strictSwift
        ),

        // The command-line tool.
        .executableTarget(
            name: "missive",
            dependencies: [
                "Missive", "MissiveChatUI", "MissiveCommandLine", "MissiveConformance", "MissiveRendering", "MissiveStore", "MissivePostgresStore", "MissiveServer", "MissiveClient",
                "MissiveWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // The socket errors of `missive serve` (built for the server already).
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),

        // The conformance checker on its own: what the command plugin runs.
        .executableTarget(
            name: "missive-check",
            dependencies: ["Missive", "MissiveCommandLine", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictSwift
        ),

        // The plugin scanner's child process, for hosts built on the library.
        .executableTarget(name: "missive-plugin-scanner", dependencies: ["Missive"], swiftSettings: strictSwift),
        // The isolated plugin worker, for hosts built on the library (and the `missive` command).
        .executableTarget(name: "missive-plugin-worker", dependencies: ["Missive"], swiftSettings: strictSwift),

        // The command plugin: builds the dynamic library products and `missive-check` (for the target, not the host:
        // no tool dependency) and runs it on them.
        .plugin(
            name: "MissiveCheckPlugin",
            capability: .command(
                intent: .custom(verb: "missive-check", description: "Run the Missive conformance suite on this package's plugin products."))
        ),

        // Sample plugins.
        .target(name: "DemoMessages", dependencies: ["MissivePluginKit"], path: "SampleTypes/DemoMessages", swiftSettings: strictSwift),
        .target(name: "DemoMedia", dependencies: ["MissivePluginKit"], path: "SampleTypes/DemoMedia", swiftSettings: strictSwift),
        .target(name: "CRating", dependencies: ["CMissivePlugin"], path: "SampleTypes/CRating", publicHeadersPath: "."),
        .target(name: "MatrixBridge", dependencies: ["MissivePluginKit"], path: "SampleTypes/MatrixBridge", swiftSettings: strictSwift),

        // The tests, one target per product or module (docs/TESTING.md), each depending only on what it tests.
        // `swift test` builds every product, so the tests find the sample plugins and the `missive` executable
        // beside the test bundle. The deliberately broken plugins are a package of their own,
        // Tests/Fixtures/BrokenPlugins, which the tests build into .build/fixtures: off the default search path of
        // `swift run missive`.
        .target(name: "MissiveTestSupport", dependencies: ["Missive"], path: "Tests/MissiveTestSupport", swiftSettings: strictSwift),
        // The store backends every store test runs on (a new SQLite file, a new PostgreSQL database), for the store's
        // tests and the command line's.
        .target(
            name: "MissiveStoreTestSupport", dependencies: ["MissiveStore", "MissivePostgresStore", "MissiveTestSupport"],
            path: "Tests/MissiveStoreTestSupport",
            swiftSettings: strictSwift),
        // JSON, text hygiene, names: the protocols' module alone.
        .testTarget(name: "MissiveCoreTests", dependencies: ["MissiveCore"], swiftSettings: strictSwift),
        // The macros, through the Swift compiler with the built macro plugin (its errors and printed expansions), so
        // that no test target links swift-syntax: that would build it a second time, for the target (docs/TESTING.md).
        .testTarget(name: "MissiveMacrosTests", dependencies: ["MissiveTestSupport"], swiftSettings: strictSwift),
        // The plugin kit: generated coding, and Swift actions called in process as the host calls them.
        .testTarget(name: "MissivePluginKitTests", dependencies: ["MissivePluginKit", "Missive", "CMissivePlugin"], swiftSettings: strictSwift),
        // The host: registry, envelope, loader, metadata cache, actions, quarantine, on the real `.so` files.
        .testTarget(
            name: "MissiveTests",
            dependencies: ["Missive", "MissiveTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift
        ),
        // The conformance suite, in process and through `missive check`.
        .testTarget(
            name: "MissiveConformanceTests", dependencies: ["Missive", "MissiveConformance", "MissiveTestSupport"], swiftSettings: strictSwift),
        // Transcripts, the terminal renderer, and the HTML renderer drawn in a headless Chromium.
        .testTarget(name: "MissiveRenderingTests", dependencies: ["MissiveRendering", "MissiveTestSupport"], swiftSettings: strictSwift),
        // Examples/ChatService, a host app that mounts the server's routes beside its own, compiled here from the
        // example's own files so that CI builds it and runs its router test without building the server's
        // dependencies a second time (its Package.swift, which resolves Missive by URL, is what a user builds;
        // docs/TESTING.md).
        .target(
            name: "ChatService",
            dependencies: [
                "Missive", "MissiveServer", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/ChatService/Sources/ChatService"
        ),
        .executableTarget(
            name: "chat-service", dependencies: ["ChatService", "Missive", "MissiveServer", .product(name: "Logging", package: "swift-log")], path: "Examples/ChatService/Sources/chat-service"
        ),
        .testTarget(
            name: "ChatServiceTests",
            dependencies: [
                "ChatService", "Missive", "MissiveServer", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/ChatService/Tests/ChatServiceTests"
        ),
        // The store, on both backends: SQLite, and a real PostgreSQL server.
        // (GRDB: to write a store of an older schema, and one of a newer, as files of those versions are.)
        .testTarget(
            name: "MissiveStoreTests",
            dependencies: [
                "MissiveStore", "MissivePostgresStore", "MissiveTestSupport", "MissiveStoreTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift),
        // What the server's tests and the client's share: a server in the test process, reached through its router
        // or over loopback.
        .target(
            name: "MissiveServerTestSupport",
            dependencies: [
                "Missive", "MissiveServer", "MissiveStore", "MissiveTestSupport", "MissiveStoreTestSupport",
                .product(name: "Logging", package: "swift-log"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"), .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/MissiveServerTestSupport",
            swiftSettings: strictSwift),
        // The client of the server's API and event stream, against a server in the test process.
        .testTarget(
            name: "MissiveClientTests",
            dependencies: ["Missive", "MissiveClient", "MissiveServerTestSupport", "MissiveStoreTestSupport", "MissiveTestSupport"],
            swiftSettings: strictSwift),
        // `missive chat`'s session against a server in the test process.
        .testTarget(
            name: "MissiveChatUITests",
            dependencies: ["Missive", "MissiveChatUI", "MissiveClient", "MissiveServerTestSupport", "MissiveStoreTestSupport", "MissiveTestSupport"],
            swiftSettings: strictSwift),
        // docs/SERVER.md's JSON blocks against the wire types the server writes and the client reads.
        .testTarget(name: "MissiveWireTests", dependencies: ["MissiveWire", "MissiveCore", "MissiveTestSupport"], swiftSettings: strictSwift),
        // The server in the test process, through its router or on loopback over real HTTP connections, on both
        // store backends.
        .testTarget(
            name: "MissiveServerTests",
            dependencies: [
                "Missive", "MissiveServer", "MissiveStore", "MissiveTestSupport", "MissiveStoreTestSupport", "MissiveServerTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // A WebSocket client for the event stream (its TLS part is built for postgres-nio already).
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                // A push gateway for the push tests (already built for the server).
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "NIOCore", package: "swift-nio"),
                // The router mode: requests straight to the server's router, no socket.
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // Files of the server's own made as older or newer versions made them.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift
        ),
        // The `missive` executable as a user runs it: decode, render, install, trust, store, actions.
        .testTarget(
            name: "MissiveCLITests",
            dependencies: ["Missive", "MissiveConformance", "MissiveRendering", "MissiveStore", "MissiveTestSupport", "MissiveStoreTestSupport"],
            swiftSettings: strictSwift
        ),
    ]
)
