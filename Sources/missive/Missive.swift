import ArgumentParser
import Missive

@main
struct MissiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "missive",
        abstract: "Load Missive message-type plugins, inspect them, and decode envelopes through them.",
        version: MissiveVersion.string,
        subcommands: [List.self, Inspect.self, Decode.self]
    )
}

/// The output formats every subcommand offers.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text
    case json
}

/// Where to look for plugins.
struct PluginOptions: ParsableArguments {
    @Option(
        name: .customLong("plugin-path"),
        help: ArgumentHelp("A folder to search for plugins, before MISSIVE_PLUGIN_PATH and the default folders. Repeatable.", valueName: "dir"))
    var directories: [String] = []

    /// Discovers and registers every plugin on the search path.
    func discover() -> DiscoveryResult {
        MessageRegistry.discover(searchPath: .standard(explicitDirectories: directories))
    }
}
