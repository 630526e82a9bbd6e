// swift-tools-version: 6.1
import PackageDescription

/// Deliberately broken Missive plugins and variants of a sample, for the tests. Each differs from a valid plugin in one way, named by
/// its folder, and is built as `libBroken<Name>.so`.
///
/// They are a package of their own so that a development build of Missive never puts them beside the
/// `missive` executable, where its default search path would find them. The tests build this package
/// into `fixtures` in the scratch folder of their own build (`.build/fixtures` of the Missive checkout by
/// default) and load every library from there, through the real loader. `Support/include/missive_plugin.h` is a link to the one header in `Sources/CMissivePlugin`.
let brokenPlugins = [
    "WrongABI", "NoEntry", "UnresolvedSymbol", "DuplicateNames", "ReservedPrefix", "MetadataMismatch",
    "CrashInDecode", "HangInDecode", "AbortOnLoad", "NoRoundTrip", "DigestNewline", "DigestInvalidUTF8",
    "LeakyRelease", "UnknownPersistence", "StatusPush", "AcceptsGarbage", "BadOutputs", "ExitInDecode", "FloodInDecode",
    "ForkInDecode", "RefusesUnknownMembers", "FailsWithReasons", "FutureMinor",
    // The view extension (missive.view.v1): one fixture for each view check that can fail or warn.
    "ViewBadStruct", "ViewStatus", "ViewFails", "ViewAlwaysAbsent", "ViewInvalid", "ViewNondeterministic",
    "ViewThreadUnsafe", "ViewCrashesOnMutation", "ViewSlow",
    // The actions extension (missive.actions.v1): one fixture for each action check that can fail.
    "ActionBadSignature", "ActionMissingSymbol", "ActionMetadataMismatch", "ActionInvalidResult", "ActionBadURL", "ActionNoExamples",
    "ActionCrashesOnOddString", "ActionThreadUnsafe",
    // Crashes a host must survive (the plugin scanner and the crash quarantine): in the entry, in an
    // initializer, and in decode on one message only.
    "CrashInEntry", "AbortInInitializer", "AbortOnMessage",
    // What the checker sees beyond the examples: a lossy first encode, a slow leak, unbounded recursion, trailing
    // data, a leak on the error path of content that parses, a crash with its reason on one mutation, and a digest
    // that breaks the rules only for some mutations.
    "LossyEncode", "SlowLeak", "DeepRecursion", "AcceptsTrailingData", "LeaksOnWrongKind", "AbortsOnMutation",
    "DigestEchoesControls",
    // The text extension (missive.text.v1): a texts function that disagrees with the separate functions.
    "TextsDisagree",
    // What a plugin does to the process around it (process.state, and crashes and exits the host must survive): a
    // closed standard stream, a crash on its own thread, exit on some inputs, a changed working directory, a
    // fatal-signal handler of its own, a changed locale and umask.
    "ClosesStandardStream", "CrashOnOwnThread", "ExitOnInput", "ChangesDirectory", "OwnSignalHandler", "ChangesLocaleOrUmask",
    // ... and a change made by a call, not by loading: the first decode sets the umask.
    "ChangesUmaskInDecode",
    // What a plugin run isolated does to its worker (docs/PROTECTION.md, "Isolated plugins"): crashes, hangs, aborts,
    // exits, overflows its stack or writes garbage on the worker's socket on some messages; tries calls the worker's
    // seccomp filter forbids.
    "MisbehavesOnMessage", "ForbiddenCalls",
    // ... and what it could read, reach or write beyond what it was handed: other processes, files, the network.
    "Snoops",
    // What the checker sees of views, actions and memory, and a container clash that costs only the types under it:
    // a 1 GiB peak in one decode, a view button for an undeclared action, a leak in the view only, control
    // sequences in a view's text, a view buffer shared by threads, and a conflicting container declaration.
    "HugeAllocation", "ViewUndeclaredAction", "ViewLeak", "ViewControlText", "ViewSharedBufferRace", "ConflictingContainer",
]

/// Valid plugins for what the samples do not show: a container with an integer key, a view with an element
/// of a newer kind and its fallback, an action for each parameter type of the signature grammar, a data file
/// the plugin declares and reads (`DataFile`: `DataFile/words.txt` beside the library, which the tests that use
/// it write), and (built below) the C sample as released for ABI 1.0, built with the
/// 1.0 header (`Legacy10/include`), which every later host must load, and the C sample with a decode that
/// takes 3 ms (`SlowRating`), which the checker must pass with warnings, not time out.
let validPlugins = ["IntegerContainer", "ViewFallback", "ActionTypes", "DataFile"]

/// Correct copies of the C sample, `SampleTypes/CRating/rating.c` (linked into each folder), built under
/// another identity, for the tests of installing and of `--against`: an older version of the same plugin,
/// and a rival plugin of another name that declares the same types.
let ratingVariants: [(name: String, pluginName: String, version: String)] = [
    ("RatingOlder", "CRating", "0.9.0"),
    ("RatingRival", "RivalRating", "1.0.0"),
]

let package = Package(
    name: "MissiveBrokenPlugins",
    products: brokenPlugins.map { .library(name: "Broken\($0)", type: .dynamic, targets: ["Broken\($0)"]) }
        + ratingVariants.map { .library(name: $0.name, type: .dynamic, targets: [$0.name]) }
        + (validPlugins + ["Legacy10", "SlowRating"]).map { .library(name: $0, type: .dynamic, targets: [$0]) },
    targets: [
        // The header and a trivial "echo" type that every fixture builds on.
        .target(name: "BrokenPluginSupport", path: "Support"),
    ] + brokenPlugins.map {
        .target(name: "Broken\($0)", dependencies: ["BrokenPluginSupport"], path: $0, publicHeadersPath: ".")
    } + validPlugins.map {
        .target(name: $0, dependencies: ["BrokenPluginSupport"], path: $0, publicHeadersPath: ".")
    } + [
        // No dependency on the support target: it must see only the 1.0 header.
        .target(name: "Legacy10", path: "Legacy10", publicHeadersPath: "include"),
        // The C sample with its entry renamed, behind an entry of its own whose decode is slow.
        .target(
            name: "SlowRating", dependencies: ["BrokenPluginSupport"], path: "SlowRating", publicHeadersPath: ".",
            cSettings: [.define("RATING_PLUGIN_NAME", to: "\"SlowRating\""), .define("missive_plugin_entry_v1", to: "rating_entry_v1")]),
    ] + ratingVariants.map {
        .target(
            name: $0.name, dependencies: ["BrokenPluginSupport"], path: $0.name, publicHeadersPath: ".",
            cSettings: [.define("RATING_PLUGIN_NAME", to: "\"\($0.pluginName)\""), .define("RATING_PLUGIN_VERSION", to: "\"\($0.version)\"")])
    }
)
