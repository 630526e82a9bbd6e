import ArgumentParser
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
        // Before the first suspension (see CommandMain.run).
        Console.prepare()
        await CommandMain.run(Self.self)
    }
}
