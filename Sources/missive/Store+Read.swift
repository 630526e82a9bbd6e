import ArgumentParser
import Missive
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mark a conversation read up to a message (it included), and print its unread count.",
            discussion: "A read mark never moves back: marking an earlier message changes nothing. The mark is --member's (by default, the owner of a personal store).")

        @Argument(help: "The conversation's id.")
        var conversation: String

        @Option(name: .customLong("up-to"), help: "The id of the last message read.")
        var upTo: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try await store.open()
            let member = try store.member(of: database)
            let state: ReadState
            do {
                state = try await database.markRead(member: member, conversation: conversation, upTo: upTo)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                let note = state.readUpTo == upTo ? "" : " (already read up to \(state.readUpTo ?? "none"), which is later)"
                Console.out("\(conversation): \(state.unreadCount) unread\(note)")
            case .json:
                try Console.out(json: StoreReadJSON(conversation: conversation, readUpTo: state.readUpTo, unreadCount: state.unreadCount))
            }
        }
    }
}

/// `missive store read --format json`.
struct StoreReadJSON: CLIJSON {
    static let documentedAs = "store-read"
    let schemaVersion = 1
    var conversation: String
    var readUpTo: String?
    var unreadCount: Int
}
