import ArgumentParser
import Missive
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Conversations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the stored conversations, newest activity first, with their unread counts and last message.",
            discussion: "A member's conversations (--member; by default the owner of a personal store), with that member's unread counts.")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try await store.open()
            let member = try store.member(of: database)
            let conversations: [ConversationSummary]
            do {
                conversations = try await database.conversations(member: member)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                // The member is named, so that a mistyped --member does not pass for an account with nothing in it.
                guard !conversations.isEmpty else { return Console.out("\(member) is in no conversation in \(database.location)") }
                let rows = conversations.map { summary in
                    [summary.id, "\(summary.unreadCount)", "\(summary.messageCount)", summary.lastMessage.senderID + ": " + summary.lastMessage.digest]
                }
                Console.out(cleanTable([["CONVERSATION", "UNREAD", "MESSAGES", "LAST MESSAGE"]] + rows))
            case .json:
                try Console.out(json: StoreConversationsJSON(conversations: conversations.map {
                    StoreConversationsJSON.Conversation(
                        id: $0.id, unreadCount: $0.unreadCount, messageCount: $0.messageCount, lastMessage: StoredMessageJSON($0.lastMessage))
                }))
            }
        }
    }
}

/// `missive store conversations --format json`.
struct StoreConversationsJSON: CLIJSON {
    static let documentedAs = "store-conversations"
    let schemaVersion = 1
    var conversations: [Conversation]

    /// One conversation.
    struct Conversation: Encodable {
        var id: String
        var unreadCount: Int
        var messageCount: Int
        var lastMessage: StoredMessageJSON
    }
}
