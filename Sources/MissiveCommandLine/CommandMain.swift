import ArgumentParser
import Foundation
import Missive

/// What the Missive executables share around their commands: where the running executable is, and how a
/// command's errors become exit codes.
package enum CommandMain {
    /// This executable, resolved through `/proc/self/exe`, to run child processes of itself (the conformance
    /// checks, the plugin scanner).
    package static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Parses the arguments for `Command` and runs the command they name; then `finally`, also after an error.
    ///
    /// Call ``Console/prepare()`` first, in `main` itself, before this or anything else that may suspend: the first
    /// suspension starts the concurrency runtime's threads, whose event descriptors would take the number of a
    /// standard stream that was closed at start.
    ///
    /// A usage error exits with code 2 (not ArgumentParser's 64), as the commands document; help and the version
    /// go to standard output, and a closed standard output makes them fail.
    package static func run<Command: ParsableCommand>(_ command: Command.Type, finally: () -> Void = {}) async -> Never {
        do {
            var parsed = try Command.parseAsRoot()
            if var parsed = parsed as? any AsyncParsableCommand {
                try await parsed.run()
            } else {
                try parsed.run()
            }
            finally()
            Command.exit()
        } catch {
            finally()
            let code = Command.exitCode(for: error)
            if code == .success && Console.closedAtStart.contains(STDOUT_FILENO) { Console.write([], to: STDOUT_FILENO) }
            if code == .validationFailure {
                Console.write(Array((TextHygiene.block(Command.fullMessage(for: error)) + "\n").utf8), to: STDERR_FILENO)
                Command.exit(withError: ExitCode(2))
            }
            Command.exit(withError: error)
        }
    }
}
