// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "ChatHost",
    dependencies: [
        .package(url: "https://github.com/missive-chat/missive", from: "0.7.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "chat-host",
            dependencies: [
                .product(name: "Missive", package: "missive"), .product(name: "MissiveRendering", package: "missive"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
