import ArgumentParser
import Missive
import MissiveCommandLine
import MissiveRendering
import MissiveStore

extension MissiveCommand.Store {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Draw a stored conversation through the transcript renderer (terminal or HTML), or print its messages as JSON.",
            discussion: """
                Messages are decoded again from their stored envelopes through the plugins installed now. Quoted \
                originals outside the messages shown are looked up in the store, and thread counters come from \
                the store's reply counts.
                """)

        @Argument(help: "The conversation's id.")
        var conversation: String

        @Option(help: "Show only the newest N messages.")
        var limit: Int?

        @Option(name: .customLong("render"), help: "terminal or html (with --format text).")
        var renderFormat: MissiveCommand.Render.Format = .terminal

        @OptionGroup var drawing: DrawingOptions

        @OptionGroup var store: StoreOptions

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1, not \(limit)") }
        }

        func run() async throws {
            let database = try await store.open()
            let stored: [StoredMessage]
            do throws(StoreError) {
                stored = try await database.messages(inConversation: conversation, limit: limit)
                guard !stored.isEmpty else {
                    throw StoreError(.notFound, "conversation '\(conversation)' has no stored messages", path: database.location)
                }
            } catch {
                throw store.refuse(error)
            }
            if store.format == .json {
                let json = try JSONWriterEncoder.encode(StoreShowJSON(
                    conversation: conversation, unreadCount: (try? await database.unreadCount(member: store.member ?? database.reader ?? "", conversation: conversation)) ?? 0,
                    messages: stored.map(StoredMessageJSON.init)))
                guard drawing.output != nil else { return Console.out(bytes: json) }
                return try drawing.write(String(decoding: TextHygiene.escapingUnsafe(json: json) + [0x0A], as: UTF8.self), notOver: store.databaseFiles)
            }
            let registry = try plugins.discover(logger: logging.logger(), defaultIsolation: .untrustedIsolated).registry
            do {
                try await database.loadPluginFailures(into: registry)
            } catch {
                throw store.refuse(error)
            }
            var messages: [Message] = []
            for message in stored {
                do {
                    messages.append(try message.decoded(with: registry))
                } catch {
                    Console.error(error.description)
                }
            }
            var replyCounts: [String: Int] = [:]
            for message in stored where message.replyCount > 0 { replyCounts[message.id] = message.replyCount }
            // The originals quoted from this page but not on it, looked up in the store.
            let shown = Set(stored.map(\.id))
            var originals: [String: Message] = [:]
            for parentID in Set(stored.compactMap(\.parentID)) where !shown.contains(parentID) {
                if let original = try? await database.message(id: parentID), let decoded = try? original.decoded(with: registry) {
                    originals[parentID] = decoded
                }
            }
            let transcript = Transcript(
                messages: messages, currentUserID: store.member ?? store.me ?? database.owner,
                clock: drawing.clock,
                actions: registry.actions(for:), replyCounts: replyCounts,
                original: { originals[$0] })
            try drawing.draw(transcript, format: renderFormat, title: "Missive: " + conversation, notOver: store.databaseFiles)
            // A message (or a view) that failed its plugin here is not tried again by the next command.
            do {
                try await database.savePluginFailures(of: registry)
            } catch {
                Console.error("cannot keep the messages isolated plugins failed on: \(error.description)")
            }
        }
    }
}

/// `missive store show --format json`.
struct StoreShowJSON: CLIJSON {
    static let documentedAs = "store-show"
    let schemaVersion = 1
    var conversation: String
    var unreadCount: Int
    var messages: [StoredMessageJSON]
}
