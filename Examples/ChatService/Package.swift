// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "ChatService",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/missive-chat/missive", from: "0.7.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The app: its own routes, and Missive's chat mounted beside them.
        .target(
            name: "ChatService",
            dependencies: [
                .product(name: "Missive", package: "missive"), .product(name: "MissiveServer", package: "missive"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "chat-service",
            dependencies: [
                "ChatService", .product(name: "Missive", package: "missive"), .product(name: "MissiveServer", package: "missive"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Its tests, through the router: no port, no socket.
        .testTarget(
            name: "ChatServiceTests",
            dependencies: [
                "ChatService", .product(name: "Missive", package: "missive"), .product(name: "MissiveServer", package: "missive"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
