// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "AcmeMessages",
    products: [
        // The plugin: the one shared library you ship.
        .library(name: "AcmeMessages", type: .dynamic, targets: ["AcmeMessages"]),
    ],
    dependencies: [
        .package(url: "https://github.com/missive-chat/missive", from: "0.7.0"),
    ],
    targets: [
        .target(name: "AcmeMessages", dependencies: [.product(name: "MissivePluginKit", package: "missive")]),
        // Unit tests of the message type, without building or loading the .so.
        .testTarget(name: "AcmeMessagesTests", dependencies: ["AcmeMessages", .product(name: "Missive", package: "missive")]),
    ]
)
