// swift-tools-version: 6.1
import PackageDescription

/// Deliberately broken Missive plugins, for the tests. Each differs from a valid plugin in one way, named by
/// its folder, and is built as `libBroken<Name>.so`.
///
/// They are a package of their own so that a development build of Missive never puts them beside the
/// `missive` executable, where its default search path would find them. The tests build this package
/// into `.build/fixtures` of the Missive checkout and load every library from there, through the real
/// loader. `Support/include/missive_plugin.h` is a link to the one header in `Sources/CMissivePlugin`.
let brokenPlugins = [
    "WrongABI", "NoEntry", "UnresolvedSymbol", "DuplicateNames", "ReservedPrefix", "MetadataMismatch",
    "CrashInDecode", "HangInDecode", "AbortOnLoad", "NoRoundTrip", "DigestNewline", "DigestInvalidUTF8",
    "LeakyRelease", "UnknownPersistence", "StatusPush", "AcceptsGarbage", "BadOutputs", "ExitInDecode", "FloodInDecode",
    "ForkInDecode",
]

let package = Package(
    name: "MissiveBrokenPlugins",
    products: brokenPlugins.map { .library(name: "Broken\($0)", type: .dynamic, targets: ["Broken\($0)"]) },
    targets: [
        // The header and a trivial "echo" type that every fixture builds on.
        .target(name: "BrokenPluginSupport", path: "Support"),
    ] + brokenPlugins.map {
        .target(name: "Broken\($0)", dependencies: ["BrokenPluginSupport"], path: $0, publicHeadersPath: ".")
    }
)
