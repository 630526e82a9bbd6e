import ArgumentParser
import Foundation
import Logging
import Missive
import MissiveRendering
import MissiveStore

extension MissiveCommand {
    struct Store: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep messages in a local SQLite store: ingest, list conversations, show, search, mark read, delete, re-decode.",
            discussion: """
                The store keeps what each message's persistence flag says (persisted and counted; not none or \
                status), with unread counts per conversation, full-text search and quote replies. The database \
                is --db, or by default store.sqlite in $XDG_DATA_HOME/missive (~/.local/share/missive). Exit \
                codes: 0 done; 1 the store refused the request (a message not found, a message with replies, a \
                malformed query, malformed lines skipped); 2 a usage error, or the store cannot be opened.
                """,
            subcommands: [Ingest.self, Conversations.self, Show.self, Search.self, Read.self, Delete.self, Redecode.self, Check.self]
        )
    }
}

/// The database and its owner, for every `store` subcommand.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The store's database file (default: store.sqlite in $XDG_DATA_HOME/missive).", valueName: "path"))
    var db: String?

    @Option(help: "Your account's id: your own messages never count as unread. The first ingest that names one makes it the store's owner; other commands only check it.")
    var me: String?

    @Option(help: "Output format: text or json.")
    var format: OutputFormat = .text

    /// The default database: `$XDG_DATA_HOME/missive/store.sqlite`, else `~/.local/share/missive/store.sqlite`.
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return data + "/missive/store.sqlite"
    }

    /// The database file in use.
    var path: String { db ?? Self.defaultPath }

    /// Opens the store; a store that cannot be opened is reported, exit code 2. Only `claimingOwner`
    /// (ingest) gives a store without an owner the one `--me` names; the others refuse a `--me` that
    /// differs from the store's owner and change nothing.
    func open(claimingOwner: Bool = false) throws -> SQLiteMessageStore {
        if db == nil {
            try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        }
        // Only ingest creates a store: a mistyped --db is an error, not a new empty store.
        guard claimingOwner || FileManager.default.fileExists(atPath: path) else {
            Console.error("\(path): no store there; 'missive store ingest' creates one")
            throw ExitCode(2)
        }
        do throws(StoreError) {
            let store = try SQLiteMessageStore(path: path, owner: claimingOwner ? me : nil)
            if let me, let owner = store.owner, owner != me {
                throw StoreError(.ownerMismatch, "the store belongs to '\(owner)', not '\(me)'", path: path)
            }
            return store
        } catch {
            Console.error(error.description)
            throw ExitCode(2)
        }
    }

    /// The database and its WAL files, which `--output` must never write over.
    var databaseFiles: [(path: String, what: String)] {
        ["", "-wal", "-shm"].map { (path + $0, "the store's database") }
    }

    /// Reports a refused request (text or JSON) and exits with code 1.
    func refuse(_ error: StoreError) -> ExitCode {
        if format == .json {
            var json = JSONWriter()
            json.beginObject()
            json.field("schemaVersion", 1)
            json.key("error")
            json.beginObject()
            json.field("code", error.code.description)
            json.field("reason", error.message)
            json.field("database", error.path ?? path)
            json.endObject()
            json.endObject()
            Console.out(bytes: json.bytes)
        }
        Console.error(error.path == nil ? "\(path): \(error.message)" : error.description)
        return ExitCode(error.code == .cannotOpen ? 2 : 1)
    }
}

extension JSONWriter {
    /// A stored message: its columns and its envelope.
    mutating func storedMessage(_ message: StoredMessage) {
        beginObject()
        field("id", message.id)
        field("conversationID", message.conversationID)
        field("senderID", message.senderID)
        field("sentAt", message.sentAt)
        field("objectName", message.objectName)
        field("businessID", message.businessID)
        field("known", message.isKnown)
        field("digest", message.digest)
        key("persistence")
        persistence(message.persistence)
        field("countsAsUnread", message.countsAsUnread)
        key("searchableWords")
        strings(message.searchableWords)
        field("parentID", message.parentID)
        field("threadRootID", message.threadRootID)
        field("replyCount", message.replyCount)
        field("reason", message.reason)
        key("envelope")
        raw(message.envelopeBytes)
        endObject()
    }
}

extension MissiveCommand.Store {
    struct Ingest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store envelopes (JSON Lines) as their persistence flags say.",
            discussion: """
                Decodes each line through the registered types and applies the flag in effect: the type's, or \
                for an unknown type the sender's, else persisted. Messages already stored (by id) are skipped \
                and counted as duplicates. Each batch of lines is one transaction: after a crash, every batch \
                reported with -v is stored, and ingesting the same file again stores the rest. A malformed line \
                is reported with its number and skipped; the exit code is then 1.
                """)

        @Argument(help: "A file of envelopes, one per line, or - for standard input.")
        var input: String = "-"

        @Option(name: .customLong("batch-size"), help: "Lines per transaction.")
        var batchSize: Int = 1_000

        @OptionGroup var store: StoreOptions

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            if batchSize < 1 || batchSize > 1_000_000 { throw ValidationError("--batch-size must be from 1 to 1000000, not \(batchSize)") }
        }

        func run() async throws {
            let reader = try LineReader(input)
            let logger = logging.logger()
            let registry = try plugins.discover(logger: logger).registry
            let database = try store.open(claimingOwner: true)
            let name = input == "-" ? "standard input" : input
            let progress = Progress(label: "ingesting \(input == "-" ? "standard input" : (input as NSString).lastPathComponent)", unit: "lines")
            var stored = 0, duplicates: [String] = [], notStored: [(String, Persistence)] = [], malformed = 0, refused = 0
            var batch: [IncomingMessage] = []
            var batchStart = 1
            var lineNumber = 0
            func commit() async throws {
                guard !batch.isEmpty else { return }
                let report: IngestReport
                do {
                    report = try await database.ingest(batch)
                } catch {
                    throw store.refuse(error)
                }
                for (incoming, outcome) in zip(batch, report.outcomes) {
                    switch outcome {
                    case .stored: stored += 1
                    case .duplicate: duplicates.append(incoming.message.envelope.id)
                    case .notStored(let flag): notStored.append((incoming.message.envelope.id, flag))
                    case .refused(let reason):
                        refused += 1
                        Console.error("\(name): message '\(incoming.message.envelope.id)' not stored: \(reason)")
                    }
                }
                logger.info("committed lines \(batchStart)-\(lineNumber) of \(name)")
                batch.removeAll(keepingCapacity: true)
                batchStart = lineNumber + 1
            }
            // Line by line as the input comes, so that a pipe's batches are committed while it runs.
            while var line = reader.next() {
                lineNumber += 1
                progress.count(lineNumber, every: 10_000)
                if line.last == 0x0D { line.removeLast() }
                guard line.contains(where: { ![0x20, 0x09].contains($0) }) else { continue }
                do {
                    batch.append(try IncomingMessage(line: line, registry: registry))
                } catch {
                    malformed += 1
                    Console.error("\(name): line \(lineNumber): [\(error.code)] \(error.message)")
                }
                if batch.count >= batchSize { try await commit() }
            }
            try await commit()
            progress.finish()
            if let failure = reader.failure {
                Console.error("\(name): reading stopped at line \(lineNumber): \(failure)")
                malformed += 1
            }
            switch store.format {
            case .text:
                var summary = "Stored \(stored), \(duplicates.count) already stored"
                let flags = Dictionary(grouping: notStored, by: \.1).sorted { $0.key.rawValue < $1.key.rawValue }
                summary += notStored.isEmpty ? ", none left out by their flag" : ", not stored: " + flags.map { "\($0.value.count) \($0.key.name)" }.joined(separator: ", ")
                if malformed > 0 { summary += ", \(malformed) malformed lines skipped" }
                if refused > 0 { summary += ", \(refused) refused" }
                Console.out(summary + " (\(database.path))")
            case .json:
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.field("database", database.path)
                json.field("stored", stored)
                json.key("duplicates")
                json.strings(duplicates)
                json.key("notStored")
                json.beginArray()
                for (id, flag) in notStored {
                    json.beginObject()
                    json.field("id", id)
                    json.key("persistence")
                    json.persistence(flag)
                    json.endObject()
                }
                json.endArray()
                json.field("malformedLines", malformed)
                json.field("refused", refused)
                json.endObject()
                Console.out(bytes: json.bytes)
            }
            if malformed > 0 || refused > 0 { throw ExitCode(1) }
        }
    }

    struct Conversations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the stored conversations, newest activity first, with their unread counts and last message.")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try store.open()
            let conversations: [ConversationSummary]
            do {
                conversations = try await database.conversations()
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                guard !conversations.isEmpty else { return Console.out("No conversations in \(database.path)") }
                let rows = conversations.map { summary in
                    [summary.id, "\(summary.unreadCount)", "\(summary.messageCount)", summary.lastMessage.senderID + ": " + summary.lastMessage.digest]
                }
                Console.out(cleanTable([["CONVERSATION", "UNREAD", "MESSAGES", "LAST MESSAGE"]] + rows))
            case .json:
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.key("conversations")
                json.beginArray()
                for summary in conversations {
                    json.beginObject()
                    json.field("id", summary.id)
                    json.field("unreadCount", summary.unreadCount)
                    json.field("messageCount", summary.messageCount)
                    json.key("lastMessage")
                    json.storedMessage(summary.lastMessage)
                    json.endObject()
                }
                json.endArray()
                json.endObject()
                Console.out(bytes: json.bytes)
            }
        }
    }

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
            let database = try store.open()
            let stored: [StoredMessage]
            do throws(StoreError) {
                stored = try await database.messages(inConversation: conversation, limit: limit)
                guard !stored.isEmpty else {
                    throw StoreError(.notFound, "conversation '\(conversation)' has no stored messages", path: database.path)
                }
            } catch {
                throw store.refuse(error)
            }
            if store.format == .json {
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.field("conversation", conversation)
                json.field("unreadCount", (try? await database.unreadCount(conversation: conversation)) ?? 0)
                json.key("messages")
                json.beginArray()
                for message in stored { json.storedMessage(message) }
                json.endArray()
                json.endObject()
                guard drawing.output != nil else { return Console.out(bytes: json.bytes) }
                return try drawing.write(String(decoding: TextHygiene.escapingUnsafe(json: json.bytes) + [0x0A], as: UTF8.self), notOver: store.databaseFiles)
            }
            let registry = try plugins.discover(logger: logging.logger()).registry
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
                messages: messages, currentUserID: store.me ?? database.owner,
                clock: drawing.clock,
                actions: registry.actions(for:), replyCounts: replyCounts,
                original: { originals[$0] })
            try drawing.draw(transcript, format: renderFormat, title: "Missive: " + conversation, notOver: store.databaseFiles)
        }
    }

    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search the stored messages' searchable words, best match first.",
            discussion: """
                Words must all match; "a phrase" matches words in order; word* matches a prefix. Case, Latin \
                diacritics and full-width forms are ignored, and Chinese and Japanese words are found inside \
                sentences.
                """)

        @Argument(parsing: .allUnrecognized, help: "The query: its words may start with '-'.")
        var words: [String] = []

        /// The query as one string.
        var query: String { words.joined(separator: " ") }

        @Option(help: "Search one conversation only.")
        var conversation: String?

        @Option(help: "At most this many results.")
        var limit: Int = 20

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if limit < 1 { throw ValidationError("--limit must be at least 1, not \(limit)") }
            if words.isEmpty { throw ValidationError("give a query: the words to search for") }
        }

        func run() async throws {
            let database = try store.open()
            let hits: [SearchHit]
            do {
                hits = try await database.search(SearchQuery(parsing: query), conversation: conversation, limit: limit)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                guard !hits.isEmpty else { return Console.out("No messages match \(query)") }
                Console.out(cleanTable([["ID", "CONVERSATION", "SENDER", "MATCH"]] + hits.map { hit in
                    [hit.message.id, hit.message.conversationID, hit.message.senderID, hit.snippet]
                }))
            case .json:
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.field("query", query)
                json.key("hits")
                json.beginArray()
                for hit in hits {
                    json.beginObject()
                    json.field("snippet", hit.snippet)
                    json.key("rank")
                    json.raw(Array("\(hit.rank)".utf8))
                    json.key("message")
                    json.storedMessage(hit.message)
                    json.endObject()
                }
                json.endArray()
                json.endObject()
                Console.out(bytes: json.bytes)
            }
        }
    }

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mark a conversation read up to a message (it included), and print its unread count.",
            discussion: "A read mark never moves back: marking an earlier message changes nothing.")

        @Argument(help: "The conversation's id.")
        var conversation: String

        @Option(name: .customLong("up-to"), help: "The id of the last message read.")
        var upTo: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try store.open()
            let state: ReadState
            do {
                state = try await database.markRead(conversation: conversation, upTo: upTo)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                let note = state.readUpTo == upTo ? "" : " (already read up to \(state.readUpTo ?? "none"), which is later)"
                Console.out("\(conversation): \(state.unreadCount) unread\(note)")
            case .json:
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.field("conversation", conversation)
                json.field("readUpTo", state.readUpTo)
                json.field("unreadCount", state.unreadCount)
                json.endObject()
                Console.out(bytes: json.bytes)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a stored message.", discussion: "A message with replies cannot be deleted until its replies are.")

        @Argument(help: "The message's id.")
        var id: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try store.open()
            do {
                try await database.delete(messageID: id)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                Console.out("Deleted \(id)")
            case .json:
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.field("deleted", id)
                json.endObject()
                Console.out(bytes: json.bytes)
            }
        }
    }

    struct Redecode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode the stored unknown messages again through the plugins installed now.",
            discussion: """
                Every unknown message whose type is now known gets its digest, searchable words, flag and unread \
                count from its type, in one transaction. Running it again changes nothing. Messages that still \
                fail keep their reason.
                """)

        @OptionGroup var store: StoreOptions

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let registry = try plugins.discover(logger: logging.logger()).registry
            let database = try store.open()
            let progress = Progress(label: "re-decoding", unit: "messages")
            let report: RedecodeReport
            do {
                report = try await database.redecode(with: registry) { done, _ in progress.count(done, every: 5_000) }
            } catch {
                throw store.refuse(error)
            }
            progress.finish()
            switch store.format {
            case .text:
                guard !report.types.isEmpty else { return Console.out("No unknown messages in \(database.path)") }
                Console.out(cleanTable([["OBJECTNAME", "DECODED", "STILL UNKNOWN", "UNREAD CHANGED", "REASON"]] + report.types.map { type in
                    [type.objectName, "\(type.decoded)", "\(type.stillUnknown)", "\(type.unreadChanged)", type.reason ?? ""]
                }))
                Console.out("\(report.decodedCount) decoded, \(report.stillUnknownCount) still unknown")
            case .json:
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.field("decoded", report.decodedCount)
                json.field("stillUnknown", report.stillUnknownCount)
                json.key("types")
                json.beginArray()
                for type in report.types {
                    json.beginObject()
                    json.field("objectName", type.objectName)
                    json.field("decoded", type.decoded)
                    json.field("stillUnknown", type.stillUnknown)
                    json.field("unreadChanged", type.unreadChanged)
                    json.field("reason", type.reason)
                    json.endObject()
                }
                json.endArray()
                json.endObject()
                Console.out(bytes: json.bytes)
            }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the store: SQLite's integrity check, the search index, and every counter against a recount.",
            discussion: "Exit codes: 0 consistent; 1 a problem was found (each is printed).")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try store.open()
            let report: ConsistencyReport
            do {
                report = try await database.checkConsistency()
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                Console.out(report.isConsistent ? "Consistent: \(database.path)" : report.problems.joined(separator: "\n"))
            case .json:
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.field("consistent", report.isConsistent)
                json.key("problems")
                json.strings(report.problems)
                json.endObject()
                Console.out(bytes: json.bytes)
            }
            if !report.isConsistent { throw ExitCode(1) }
        }
    }
}

/// ``table(_:)`` of cells cleaned first, so that what the cleaning removes from a sender's or a plugin's text
/// never breaks the alignment.
private func cleanTable(_ rows: [[String]]) -> String {
    table(rows.map { $0.map(TextHygiene.line) })
}
