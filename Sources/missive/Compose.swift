import ArgumentParser
import Foundation
import MissiveCommandLine
import Missive

extension MissiveCommand {
    struct Compose: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a message with a composer action, and print its envelope.",
            discussion: """
                Checks the arguments against the action's signature, calls the plugin, and gives the content an \
                envelope: a new id (unless --message-id gives one), the sender, the conversation and the time now \
                (unless --sent-at gives one). The envelope is printed as one JSON line, which decode and render \
                accept. Exit codes: 0 done; 1 the action was not found, an argument was refused, or the action \
                failed or gave invalid content; 2 a usage error.
                """)

        @Argument(help: "The composer action's id, such as demo.poll.create (see missive actions).")
        var action: String

        @OptionGroup var arguments: ActionArgumentOptions

        @Option(help: "The sender's id.")
        var sender: String

        @Option(help: "The conversation's id.")
        var conversation: String

        @Option(name: .customLong("message-id"), help: "The new message's id (default: a new random UUID).")
        var messageID: String?

        @Option(name: .customLong("sent-at"), parsing: .unconditional, help: "The time it is sent, in milliseconds since 1970 (default: now).")
        var sentAt: Int64?

        @Option(name: .customLong("parent-id"), help: "The id of the message it replies to.")
        var parentID: String?

        @Flag(name: .customLong("via-container"), help: "Send it under its type's container (MS:Custom for a businessID) instead of its objectName.")
        var viaContainer = false

        @OptionGroup var plugins: PluginOptions

        @Option(help: "Output format: text (the envelope line) or json.")
        var format: OutputFormat = .text

        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            for (name, value) in [("--sender", sender), ("--conversation", conversation), ("--message-id", messageID ?? "x"), ("--parent-id", parentID ?? "x")]
            where value.isEmpty {
                throw ValidationError("\(name) must not be empty")
            }
        }

        func run() throws {
            let result = try plugins.discover(logger: logging.logger())
            let registry = result.registry
            let message: Message
            do {
                message = try registry.compose(
                    action: action, arguments: arguments.arguments, conversationID: conversation, senderID: sender,
                    id: messageID ?? MessageRegistry.newMessageID(), sentAt: sentAt ?? MessageRegistry.now(), parentID: parentID, viaContainer: viaContainer)
            } catch {
                try reportActionError(error.explainingRefusal(in: result.rejections), format: format)
                throw ExitCode(1)
            }
            switch format {
            case .text:
                Console.out(bytes: message.envelope.encoded())
            case .json:
                try Console.out(json: ComposeJSON(
                    action: action, id: message.envelope.id, objectName: message.content.objectName, digest: message.digest,
                    envelope: RawJSON(message.envelope.encoded())))
            }
        }
    }
}
