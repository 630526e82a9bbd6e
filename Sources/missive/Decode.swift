import ArgumentParser
import Foundation
import MissiveCommandLine
import Missive

extension MissiveCommand {
    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode envelopes (JSON Lines) through the registered types.",
            discussion: """
                For each envelope, prints its id, objectName and businessID, whether a type knew it, the digest, \
                the searchable words, the persistence in effect, the re-encoded content and, for unknown \
                messages, the reason. A malformed line is reported with its line number, the other lines are \
                still decoded, and the exit code is 1.
                """)

        @Argument(help: "A file of envelopes, one per line, or - for standard input.", transform: CommandLinePath.resolve)
        var input: String = "-"

        @OptionGroup var plugins: PluginOptions

        @Option(help: "Output format: text or json (one JSON object per line).")
        var format: OutputFormat = .text

        @OptionGroup var logging: LoggingOptions

        func run() throws {
            let data = try InputFile.read(input)
            // Refused plugin files are logged as warnings on standard error.
            let result = try plugins.discover(logger: logging.logger())

            var failed = false
            var lineNumber = 0
            for var line in Array(data).split(separator: 0x0A, omittingEmptySubsequences: false) {
                lineNumber += 1
                if line.last == 0x0D { line = line.dropLast() }
                guard line.contains(where: { ![0x20, 0x09].contains($0) }) else { continue }
                let message: Message, content: [UInt8]
                do {
                    message = try result.registry.decode(line: line)
                    content = try message.reencoded().content
                } catch {
                    failed = true
                    try report(error, line: lineNumber)
                    continue
                }
                switch format {
                case .json: try printJSON(message, content: content, line: lineNumber, registry: result.registry)
                case .text: printText(message, content: content, line: lineNumber, registry: result.registry)
                }
            }
            if failed { throw ExitCode(1) }
        }

        private func report(_ error: MissiveError, line: Int) throws {
            Console.error("\(input == "-" ? "<stdin>" : input): line \(line): [\(error.code)] \(error.message)")
            guard format == .json else { return }
            try Console.out(json: DecodeErrorJSON(line: line, error: .init(code: error.code.description, message: error.message)))
        }

        private func printJSON(_ message: Message, content: [UInt8], line: Int, registry: MessageRegistry) throws {
            try Console.out(json: DecodeJSON(
                line: line, id: message.envelope.id, objectName: message.envelope.objectName, businessID: message.content.businessID,
                container: .of(Self.container(of: message, in: registry)), known: message.isKnown,
                decodedAs: message.isKnown ? message.content.objectName : UnknownMessage.objectName, digest: message.digest,
                searchableWords: message.content.searchableWords, persistence: PersistenceJSON(message.persistence),
                pushContent: message.content.pushContent, media: message.content.media.map(MediaJSON.init), parentID: message.envelope.parentID,
                content: RawJSON(content), reason: message.unknown.map { $0.reason.description }, pluginFailures: Self.pluginFailures(message)))
        }

        private func printText(_ message: Message, content: [UInt8], line: Int, registry: MessageRegistry) {
            let envelope = message.envelope
            var header = "#\(line) \(envelope.id)  \(envelope.objectName)"
            if let value = message.content.businessID {
                // The value of the key its container dispatches on: MS:Custom's businessID, Matrix's msgtype, ...
                // The container is named unless the envelope was sent under it.
                let container = Self.container(of: message, in: registry) ?? .custom
                header += "  " + (container.objectName == envelope.objectName || container == .custom ? "" : "\(container.objectName) ")
                    + "\(container.key)=\(value)"
            }
            header += message.isKnown ? "  known" + (message.content.objectName != envelope.objectName ? " as \(message.content.objectName)" : "") : "  UNKNOWN"
            Console.out(header)
            if let parentID = envelope.parentID { Console.out("    reply to:    \(parentID)") }
            Console.out("    digest:      \(message.digest)")
            let words = message.content.searchableWords
            // Words may hold line breaks (they are indexed, not shown): printed escaped, one line per message field.
            Console.out("    words:       \(words.isEmpty ? "-" : words.map(Self.printable).joined(separator: " | "))")
            Console.out("    persistence: \(message.persistence)")
            Console.out("    push:        \(message.content.pushContent ?? "- (never pushed)")")
            if let media = message.content.media {
                Console.out("    media:       \(media.remoteURL ?? media.localPath ?? "-") \(media.mimeType) \(media.sizeBytes.map { "\($0) bytes" } ?? "")")
            }
            // The same JSON, with what a terminal would act on escaped.
            Console.out("    content:     \(String(decoding: TextHygiene.escapingUnsafe(json: content), as: UTF8.self))")
            if let unknown = message.unknown { Console.out("    reason:      \(unknown.reason)") }
            for failure in Self.pluginFailures(message) { Console.out("    failed:      \(failure)") }
        }

        /// The container that the content's `businessID` belongs to: the known type's, or for unknown content
        /// the one the envelope was sent under.
        static func container(of message: Message, in registry: MessageRegistry) -> MessageContainer? {
            let name = message.isKnown ? registry.type(objectName: message.content.objectName)?.container : message.envelope.objectName
            return name.flatMap { registry.type(objectName: $0)?.declaredContainer }
        }

        /// A word with what ``TextHygiene`` would remove written as an escape (`\u{A}`, `\u{2028}`), so that
        /// the word is seen as it is indexed.
        static func printable(_ word: String) -> String {
            guard word.unicodeScalars.contains(where: TextHygiene.isUnsafe) else { return word }
            return word.unicodeScalars.map { TextHygiene.isUnsafe($0) ? "\\u{\(String($0.value, radix: 16, uppercase: true))}" : String($0) }.joined()
        }

        /// The plugin's failing functions and their reasons, for which the lines above show fallbacks.
        static func pluginFailures(_ message: Message) -> [String] {
            guard let content = message.content as? PluginContent else { return [] }
            var failures: [String] = []
            func note(_ body: () throws(MissiveError) -> Void) {
                do { try body() } catch { failures.append(error.message) }
            }
            note { () throws(MissiveError) in _ = try content.checkedDigest() }
            note { () throws(MissiveError) in _ = try content.checkedPushContent() }
            note { () throws(MissiveError) in _ = try content.checkedSearchableWords() }
            note { () throws(MissiveError) in _ = try content.checkedMedia() }
            return failures
        }
    }
}

/// One line of `missive decode --format json`: one envelope. The lines carry no `schemaVersion` of their own;
/// their layout is versioned with the other outputs' (schema version 1).
struct DecodeJSON: CLIJSON {
    static let documentedAs = "decode"
    var line: Int
    var id: String
    var objectName: String
    var businessID: String?
    var container: ContainerJSON?
    var known: Bool
    var decodedAs: String
    var digest: String
    var searchableWords: [String]
    var persistence: PersistenceJSON
    var pushContent: String?
    var media: MediaJSON?
    var parentID: String?
    /// The content as received.
    var content: RawJSON
    var reason: String?
    var pluginFailures: [String]
}

/// The line of `missive decode --format json` in place of a malformed envelope.
struct DecodeErrorJSON: CLIJSON {
    static let documentedAs = "decode-error"
    var line: Int
    var error: Details

    /// The envelope's error.
    struct Details: Encodable {
        var code: String
        var message: String
    }
}
