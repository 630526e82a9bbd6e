import Foundation
import Missive
import MissiveClient
import MissiveRendering
import MissiveStore

// What the sync tells, drawn or noticed.
extension ChatSession {
    // MARK: Events

    /// What the sync tells: drawn in the open conversation, a one-line notice for the others.
    func handle(_ change: ChatChange) async {
        switch change {
        case .connected(let resynced):
            if connectedOnce && !online { output.say("connected to \(sync.client.server.absoluteString) again" + (resynced ? " (reloaded)" : "")) }
            online = true
            connectedOnce = true
            if !outbox.isEmpty { await sendOutbox() }
            if open != nil { await drawNew() }
        case .disconnected(let reason, _):
            if online || !connectedOnce {
                output.say("lost the server: \(reason); trying again")
            }
            online = false
            connectedOnce = true
        case .message(let conversation, let id, let isNew):
            if conversation == open {
                await drawNew()
            } else if isNew {
                await notice(conversation, about: id)
            }
        case .edited(let conversation, let id):
            if conversation == open { await redraw(id: id) }
        case .deleted(let conversation, let id):
            if conversation == open, let index = numbered.firstIndex(of: id) { output.say("message \(index + 1) was deleted") }
        case .read(let conversation):
            if conversation != open, let unread = try? await sync.store.unreadCount(conversation: conversation) {
                output.say("\(conversation): \(unread) unread")
            }
        case .membership(let conversation, let member, let joined):
            if member == sync.member, joined, conversation != open {
                if started.remove(conversation) != nil { return }
                output.say("you are in \(conversation) now: /open \(conversation)")
            } else if conversation == open, member != sync.member {
                output.say("\(member) \(joined ? "joined" : "left") \(conversation)")
            }
        case .transient(let conversation, let message):
            if conversation == open, message.persistence != .status {
                output.say("\(message.envelope.senderID) (not kept): \(message.digest)")
            }
        case .problem(let reason):
            output.say(reason)
        }
    }

    /// An error in words: a Missive error's or the server's message, as it came.
    package static func describe(_ error: any Error) -> String {
        if let error = error as? MissiveError { return error.message }
        if let error = error as? ServerClientError { return error.message }
        return "\(error)"
    }

    /// One line about a new message in a conversation that is not open.
    private func notice(_ conversation: String, about id: String) async {
        guard let stored = try? await sync.store.message(id: id) else { return }
        let unread = (try? await sync.store.unreadCount(conversation: conversation)) ?? 0
        output.say("\(conversation): \(unread) unread (\(stored.senderID): \(TextHygiene.cut(stored.digest, toCodePoints: 40)))")
    }
}
