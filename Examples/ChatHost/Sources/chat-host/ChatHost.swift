import Foundation
import Logging
import Missive
import MissiveRendering

/// A message type of the host itself, compiled in: a line the app adds to a conversation.
struct SystemNotice: MessageType, Codable {
    static let objectName = "chat:notice"
    static let persistence = Persistence.persisted
    static var examples: [SystemNotice] { [SystemNotice(text: "Alice joined")] }

    var text: String
    var digest: String { "[Notice] \(text)" }
}

/// Reads envelopes (JSON Lines) from the file named on the command line, or from standard input, decodes
/// them through the host's types and every plugin found, and prints what a chat app would use.
@main
struct ChatHost {
    static func main() throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        let logger = Logger(label: "chat-host")

        // The host's own types first, so that they keep their names; then every plugin on the standard
        // search path. Refused plugins are logged as warnings, and the host goes on without them.
        var builder = MessageRegistry.Builder()
        try builder.register(SystemNotice.self)
        let discovery = builder.discoverPlugins(logger: logger)
        let registry = builder.build()
        logger.info("ready: \(discovery)")
        // The composer's "more" menu: every plugin's composer actions, highest priority first.
        print("composer: " + registry.composerActions.map { "\($0.title) (\($0.id))" }.joined(separator: ", "))

        let arguments = CommandLine.arguments.dropFirst()
        let input = try arguments.first.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            ?? FileHandle.standardInput.readDataToEndOfFile()
        var messages: [Message] = []
        for line in input.split(separator: UInt8(ascii: "\n")) {
            do {
                let message = try registry.decode(line: line)
                messages.append(message)
                let outgoing = try message.reencoded()  // unknown content goes out byte for byte
                print("\(message.envelope.id) \(message.content.objectName): \(message.digest)")
                print("  persistence: \(message.persistence)")
                if let unknown = message.unknown { print("  unknown:     \(unknown.reason)") }
                print("  re-encoded:  \(String(decoding: outgoing.content, as: UTF8.self))")
            } catch {
                logger.error("skipped a malformed envelope: \(error)")
            }
        }

        // The conversation as people see it, drawn for a terminal 72 columns wide: each type's own view and
        // action buttons, grouped by sender, with date separators, quote replies and cards for what the host
        // cannot show.
        print(TerminalRenderer(width: 72).render(Transcript(messages: messages, actions: registry.actions(for:))))
    }
}
