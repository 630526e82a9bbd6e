import ArgumentParser
import Foundation
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a store into another (for example from SQLite to PostgreSQL), with its members, read marks and counts.",
            discussion: """
                Messages are copied as stored (envelopes byte for byte, decoded columns as they are, nothing decoded \
                again), in batches, each one transaction of the destination that also records how far the copy got: \
                an interrupted migration resumes after its last batch, and running it again copies only messages \
                stored since. The memberships and read marks come last, then every counter of the destination is \
                recounted, checked, and compared with the source's unread counts. Stop writers to the source first: \
                edits, deletes and read marks made during the copy are not carried over. The destination's change \
                feed starts empty.
                """)

        @Option(help: ArgumentHelp("The store to copy: a path, sqlite:PATH or postgres://...", valueName: "store"), transform: StoreOptions.resolve)
        var from: String

        @Option(
            help: ArgumentHelp("The store to copy into (created when missing, as the same kind): a path, sqlite:PATH or postgres://...", valueName: "store"),
            transform: StoreOptions.resolve)
        var to: String

        @Option(name: .customLong("batch-size"), help: "Messages per transaction.")
        var batchSize: Int = 5_000

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        func validate() throws {
            if batchSize < 1 || batchSize > 1_000_000 { throw ValidationError("--batch-size must be from 1 to 1000000, not \(batchSize)") }
            if from == to { throw ValidationError("--from and --to name the same store") }
        }

        func run() async throws {
            let sourceOptions = try StoreOptions.parse(["--db", from, "--format", format.rawValue])
            let source = try await sourceOptions.open()
            let destinationOptions = try StoreOptions.parse(["--db", to, "--format", format.rawValue])
            let destination = try await destinationOptions.open(creating: true, kind: source.kind)
            guard let source = source as? any MigratingStore, let destination = destination as? any MigratingStore else {
                Console.error("\(to): this kind of store cannot be migrated")
                throw ExitCode(2)
            }
            let progress = Progress(label: "migrating \(source.location)", unit: "messages")
            var copied = 0, skipped = 0
            var problems: [String] = []
            do throws(StoreError) {
                var position = try await destination.migrationProgress(source: source.location)
                var looked = 0
                while true {
                    let batch = try await source.exportMessages(after: position, limit: batchSize)
                    guard let last = batch.last else { break }
                    let new = try await destination.importMessages(batch.map(\.message), source: source.location, through: last.sequence)
                    copied += new
                    skipped += batch.count - new
                    looked += batch.count
                    position = last.sequence
                    progress.count(looked, every: 1)
                }
                try await destination.finishImport(members: try await source.exportMembers())
                progress.finish()
                problems = try await destination.checkConsistency().problems
                // The counts a member sees must be the source's.
                for member in Set(try await source.exportMembers().filter(\.active).map(\.memberID)).sorted() {
                    let before = try await source.unreadCounts(member: member)
                    let after = try await destination.unreadCounts(member: member)
                    if before != after {
                        func counts(_ counts: [String: Int]) -> String {
                            counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                        }
                        problems.append(
                            "member '\(member)': unread counts in the copy (\(counts(after))) differ from the source's (\(counts(before))); "
                                + "the source changed after an earlier copy: migrate into a new store")
                    }
                }
            } catch {
                progress.finish()
                throw destinationOptions.refuse(error)
            }
            switch format {
            case .text:
                Console.out("Copied \(copied) messages, \(skipped) already there, from \(source.location) to \(destination.location)")
                Console.out(problems.isEmpty ? "Consistent, and every member's unread counts match the source's" : problems.joined(separator: "\n"))
            case .json:
                try Console.out(json: StoreMigrateJSON(
                    from: source.location, to: destination.location, copied: copied, alreadyThere: skipped, consistent: problems.isEmpty, problems: problems))
            }
            if !problems.isEmpty { throw ExitCode(1) }
        }
    }
}

/// `missive store migrate --format json`.
struct StoreMigrateJSON: CLIJSON {
    static let documentedAs = "store-migrate"
    let schemaVersion = 1
    var from: String
    var to: String
    var copied: Int
    var alreadyThere: Int
    var consistent: Bool
    var problems: [String]
}
