import ArgumentParser
import Foundation
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Follow: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the store's changes after a position, then follow new ones as they are committed.",
            discussion: """
                Each change (stored, edited, deleted, read, joined, left) is printed with its position, in the order \
                the writes committed. A follower that keeps the last position it printed and starts again with \
                --after that position misses nothing and sees nothing twice. With --format json, one JSON object a \
                line. --once prints what is there and stops. Following ends when the reader of its output goes \
                away (exit status 141, as for `| head`).
                """)

        // Unconditional: `--after -1` is a value to refuse with a reason, not an unknown option named `-1`.
        @Option(parsing: .unconditional, help: "The position to start after (0: from the first change).")
        var after: Int64 = 0

        @Flag(help: "Print the changes there are, then stop.")
        var once = false

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if after < 0 { throw ValidationError("--after must be 0 or more, not \(after)") }
        }

        func run() async throws {
            let database = try await store.open()
            do {
                // A position past the last change is kept from another feed: this store's feed began again (a new
                // store, or one migrated from the schema before the feed). Said, since nothing would show it.
                let last = try await database.lastChangePosition()
                if after > last {
                    Console.error(
                        "--after \(after) is past the last change of \(database.location) (\(last)); its feed may have begun again, and changes "
                            + "up to \(after) will not be printed")
                }
                if once {
                    var position = after
                    while true {
                        let changes = try await database.changes(after: position, limit: 1_000)
                        guard let last = changes.last else { break }
                        for change in changes { try print(change) }
                        position = last.position
                    }
                } else {
                    // Between two changes nothing is written, so a reader that went away is noticed by watching.
                    let watcher = Task { await Console.endWhenOutputCloses() }
                    defer { watcher.cancel() }
                    for try await change in database.follow(after: after) { try print(change) }
                }
            } catch let error as StoreError {
                throw store.refuse(error)
            }
        }

        private func print(_ change: StoreChange) throws {
            switch store.format {
            case .text:
                let who = change.memberID.map { " by \($0)" } ?? ""
                let what = change.messageID.map { " \($0)" } ?? ""
                Console.out("\(change.position) \(change.kind) \(change.conversationID)\(what)\(who)")
            case .json:
                try Console.out(json: StoreChangeJSON(
                    position: change.position, kind: change.kind.description, conversationID: change.conversationID,
                    messageID: change.messageID, memberID: change.memberID, message: change.message.map(StoredMessageJSON.init)))
            }
        }
    }
}

/// One line of `missive store follow --format json`.
struct StoreChangeJSON: CLIJSON {
    static let documentedAs = "store-change"
    let schemaVersion = 1
    var position: Int64
    var kind: String
    var conversationID: String
    var messageID: String?
    var memberID: String?
    var message: StoredMessageJSON?
}
