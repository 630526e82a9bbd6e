import ArgumentParser
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a conversation's members.")

        @Argument(help: "The conversation's id.")
        var conversation: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try await store.open()
            let members: [String]
            do {
                members = try await database.members(ofConversation: conversation)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text: Console.out(members.isEmpty ? "No members in \(conversation)" : members.joined(separator: "\n"))
            case .json: try Console.out(json: StoreMembersJSON(conversation: conversation, members: members))
            }
        }
    }

    struct Join: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make --member a member of a conversation.",
            discussion: "What is stored so far counts as read for the new member; joining again changes nothing.")

        @Argument(help: "The conversation's id.")
        var conversation: String

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if store.member == nil { throw ValidationError("say who joins with --member") }
        }

        func run() async throws {
            let database = try await store.open()
            let member = try store.member(of: database)
            let state: ReadState
            do {
                state = try await database.join(member: member, conversation: conversation)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text: Console.out("\(member) is a member of \(conversation): \(state.unreadCount) unread")
            case .json: try Console.out(json: StoreReadJSON(conversation: conversation, readUpTo: state.readUpTo, unreadCount: state.unreadCount))
            }
        }
    }

    struct Leave: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End --member's membership of a conversation.",
            discussion: "The member no longer lists, reads, searches or counts the conversation.")

        @Argument(help: "The conversation's id.")
        var conversation: String

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if store.member == nil { throw ValidationError("say who leaves with --member") }
        }

        func run() async throws {
            let database = try await store.open()
            let member = try store.member(of: database)
            do {
                try await database.leave(member: member, conversation: conversation)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text: Console.out("\(member) left \(conversation)")
            case .json: try Console.out(json: StoreMembersJSON(conversation: conversation, members: try await database.members(ofConversation: conversation)))
            }
        }
    }
}

/// `missive store members --format json`, and `leave`'s members after the call.
struct StoreMembersJSON: CLIJSON {
    static let documentedAs = "store-members"
    let schemaVersion = 1
    var conversation: String
    var members: [String]
}
