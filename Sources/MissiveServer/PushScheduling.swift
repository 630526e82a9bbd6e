import Missive
import MissiveCore

extension ChatServer {
    /// Queues a push of a new message `member` sent to each of `recipients` other than the sender, when the server
    /// has a push gateway and the message's flag allows it (never `status`). The caller gives the members that were
    /// offline when the message was stored or handed over; they are asked for only when there is a gateway.
    func schedulePushes(for message: Message, from member: String, in conversation: String, to recipients: @autoclosure () -> [String]) {
        guard let pushes, message.persistence != .status else { return }
        let envelope = message.envelope
        let text = Self.pushText(message)
        for recipient in recipients() where recipient != member {
            pushes.enqueue(
                Push(
                    member: recipient, conversation: conversation, sender: member, messageID: envelope.id, objectName: envelope.objectName,
                    text: text, unreadCount: nil, sentAt: envelope.sentAt))
        }
    }

    /// The text a push shows: the type's push text when the server has the type; for a type it does not have, the
    /// sender's `pushContent`, else the sender's `fallbackText`; else "New message". Cleaned to one line.
    static func pushText(_ message: Message) -> String {
        let envelope = message.envelope
        let candidates = message.unknown == nil ? [message.content.pushContent] : [envelope.pushContent, envelope.fallbackText]
        for case let text? in candidates {
            let cleaned = TextHygiene.digest(text)
            if cleaned.contains(where: { !$0.isWhitespace }) { return cleaned }
        }
        return "New message"
    }
}
