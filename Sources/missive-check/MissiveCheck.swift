import ArgumentParser
import Foundation
import Missive
import MissiveCommandLine

/// `missive-check`: the conformance checker on its own, for plugin authors. It is what `swift package
/// missive-check` runs, and it is `missive check` without the rest of `missive`, so that a plugin's package
/// builds no store, database client or server to check its plugin.
@main
struct MissiveCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "missive-check", abstract: CheckOptions.abstract, discussion: CheckOptions.discussion,
        version: MissiveVersion.string)

    @OptionGroup var options: CheckOptions

    func run() throws {
        try options.run(command: [CommandMain.executablePath], reproducing: ["missive-check"])
    }

    static func main() async {
        // `missive-check plugin-worker FILE ...`: this executable as the isolated plugin's worker of the
        // `isolation.worker` check, when no missive-plugin-worker is beside it.
        if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "plugin-worker" {
            Foundation.exit(PluginIsolation.runWorker(arguments: Array(CommandLine.arguments.dropFirst(2))))
        }
        // Closed to the user's other processes while it loads plugins (MISSIVE_DUMPABLE=1 keeps it open).
        ProcessPrivacy.closeToOtherProcesses()
        // Before the first suspension (see CommandMain.run).
        Console.prepare()
        await CommandMain.run(Self.self)
    }
}
