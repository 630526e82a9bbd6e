import ArgumentParser
import Foundation
import MissiveCommandLine
import Logging
import Missive
import MissiveStore

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

                A new store is personal: --me names its owner, whose own messages never count as unread. With \
                --shared it is a store of many members instead; ingesting into a shared store makes each sender a \
                member of its conversation from its first message there (the history before it counts as read \
                for it); 'missive store join' adds members who have not written.
                """)

        @Argument(help: "A file of envelopes, one per line, or - for standard input.", transform: CommandLinePath.resolve)
        var input: String = "-"

        @Option(name: .customLong("batch-size"), help: "Lines per transaction.")
        var batchSize: Int = 1_000

        @Flag(help: "Create a store of many members (a server's) rather than one account's.")
        var shared = false

        @OptionGroup var store: StoreOptions

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            if shared && store.me != nil { throw ValidationError("a shared store has no owner: --shared and --me exclude each other") }
            if batchSize < 1 || batchSize > 1_000_000 { throw ValidationError("--batch-size must be from 1 to 1000000, not \(batchSize)") }
        }

        func run() async throws {
            let reader = try LineReader(input)
            let logger = logging.logger()
            let registry = try plugins.discover(logger: logger, defaultIsolation: .untrustedIsolated).registry
            let database = try await store.open(creating: true, kind: shared ? .shared : nil)
            // Messages that crashed or hung an isolated plugin before (in any process on the store) are not tried again.
            do {
                try await database.loadPluginFailures(into: registry)
            } catch {
                throw store.refuse(error)
            }
            let name = input == "-" ? "standard input" : input
            let progress = Progress(label: "ingesting \(input == "-" ? "standard input" : (input as NSString).lastPathComponent)", unit: "lines")
            var stored = 0, duplicates: [String] = [], notStored: [(String, Persistence)] = [], malformed = 0, refused = 0
            var batch: [IncomingMessage] = []
            // The envelopes read and not decoded yet, with their lines: decoded together when a batch is committed, so
            // that an isolated plugin's messages cross to its worker at once.
            var pending: [(envelope: Envelope, line: [UInt8])] = []
            var batchStart = 1
            var lineNumber = 0
            // In a shared store, the senders known to be members of their conversations.
            var members: Set<[String]> = []
            func commit() async throws {
                batch = zip(registry.decode(pending.map(\.envelope)), pending).map { IncomingMessage($0, envelopeBytes: $1.line) }
                pending.removeAll(keepingCapacity: true)
                guard !batch.isEmpty else { return }
                let report: IngestReport
                do {
                    if database.kind == .shared {
                        for incoming in batch where incoming.message.persistence.isStored {
                            let envelope = incoming.message.envelope
                            if members.insert([envelope.conversationID, envelope.senderID]).inserted {
                                try await database.join(member: envelope.senderID, conversation: envelope.conversationID)
                            }
                        }
                    }
                    report = try await database.ingest(batch)
                    try await database.savePluginFailures(of: registry)
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
                    pending.append((try Envelope(parsing: line), line))
                } catch {
                    malformed += 1
                    Console.error("\(name): line \(lineNumber): [\(error.code)] \(error.message)")
                }
                if pending.count >= batchSize { try await commit() }
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
                Console.out(summary + " (\(database.location))")
            case .json:
                try Console.out(json: StoreIngestJSON(
                    database: database.location, stored: stored, duplicates: duplicates,
                    notStored: notStored.map { StoreIngestJSON.Left(id: $0.0, persistence: PersistenceJSON($0.1)) }, malformedLines: malformed,
                    refused: refused))
            }
            if malformed > 0 || refused > 0 { throw ExitCode(1) }
        }
    }
}

/// `missive store ingest --format json`.
struct StoreIngestJSON: CLIJSON {
    static let documentedAs = "store-ingest"
    let schemaVersion = 1
    var database: String
    var stored: Int
    var duplicates: [String]
    var notStored: [Left]
    var malformedLines: Int
    var refused: Int

    /// A message its persistence flag left out.
    struct Left: Encodable {
        var id: String
        var persistence: PersistenceJSON
    }
}
