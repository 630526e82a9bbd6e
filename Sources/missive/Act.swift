import ArgumentParser
import Foundation
import MissiveCommandLine
import Missive

extension MissiveCommand {
    struct Act: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Perform a message action on one message of a file of envelopes, and print the edited envelope or the URL.",
            discussion: """
                Finds the message with the id (the last line that has it, when there are several), checks the \
                arguments against the action's signature, and calls the plugin. An action that edits the message \
                prints its new envelope as one JSON line (the same id; members its type does not know kept), \
                which decode and render accept; an action that opens a URL prints the URL. Exit codes: 0 done; 1 \
                the message or the action was not found, an argument was refused, or the action failed or gave an \
                invalid result; 2 the input could not be read, or a usage error.
                """)

        @Argument(help: "A file of envelopes, one per line, or - for standard input.", transform: CommandLinePath.resolve)
        var input: String

        @Option(name: .customLong("id"), help: "The id of the message to act on.")
        var messageID: String

        @Option(help: "The action's id, such as vote (see missive actions).")
        var action: String

        @OptionGroup var arguments: ActionArgumentOptions

        @OptionGroup var plugins: PluginOptions

        @Option(help: "Output format: text (the envelope line, or the URL) or json.")
        var format: OutputFormat = .text

        @OptionGroup var logging: LoggingOptions

        func run() throws {
            let data = try InputFile.read(input)
            let discovery = try plugins.discover(logger: logging.logger())
            // The last envelope with the id is the message's latest state (an edit appended after it).
            var found: Envelope?
            var malformed = 0
            var lineNumber = 0
            let name = input == "-" ? "standard input" : input
            for var line in Array(data).split(separator: 0x0A, omittingEmptySubsequences: false) {
                lineNumber += 1
                if line.last == 0x0D { line = line.dropLast() }
                guard line.contains(where: { ![0x20, 0x09].contains($0) }) else { continue }
                do {
                    let envelope = try Envelope(parsing: line)
                    if envelope.id == messageID { found = envelope }
                } catch {
                    // Reported, and skipped: the message may still be on another line.
                    malformed += 1
                    Console.error("\(input == "-" ? "<stdin>" : input): line \(lineNumber): [\(error.code)] \(error.message)")
                }
            }
            guard let envelope = found else {
                try reportActionError(
                    MissiveError(.noSuchMessage, "no message has the id '\(messageID)' in \(name)" + (malformed > 0 ? " (\(malformed) malformed lines skipped)" : ""),
                                 action: action), format: format)
                throw ExitCode(1)
            }
            let result: ActionResult
            do {
                result = try discovery.registry.perform(action, on: discovery.registry.decode(envelope), arguments: arguments.arguments)
            } catch {
                try reportActionError(error.explainingRefusal(in: discovery.rejections), format: format)
                throw ExitCode(1)
            }
            switch (result, format) {
            case (.edited(let message), .text):
                Console.out(bytes: message.envelope.encoded())
            case (.url(let url), .text):
                Console.out(url)
            case (.edited(let message), .json):
                try Console.out(json: ActEditJSON(
                    action: action, id: message.envelope.id, objectName: message.content.objectName, digest: message.digest,
                    envelope: RawJSON(message.envelope.encoded())))
            case (.url(let url), .json):
                try Console.out(json: ActURLJSON(action: action, url: url))
            }
        }
    }
}
