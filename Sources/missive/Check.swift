import ArgumentParser
import MissiveCommandLine

extension MissiveCommand {
    /// `missive check`: the conformance checker, as the `missive-check` executable runs it too.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: CheckOptions.abstract, discussion: CheckOptions.discussion)

        @OptionGroup var options: CheckOptions

        func run() throws {
            try options.run(command: [MissiveCommand.executablePath, "check"], reproducing: ["missive", "check"])
        }
    }
}
