import MissiveCore
import MissiveWire

/// A stored message as JSON, the same for `missive store show --format json` (`stored-message` in
/// docs/CLI-JSON.md) and the server's API (MESSAGE in docs/SERVER.md): the wire type ``RemoteMessage``, one
/// declaration for both.
package typealias StoredMessageJSON = RemoteMessage

extension RemoteMessage {
    /// The JSON of `message`.
    package init(_ message: StoredMessage) {
        self.init(
            id: message.id, conversationID: message.conversationID, senderID: message.senderID, sentAt: message.sentAt, objectName: message.objectName,
            businessID: message.businessID, known: message.isKnown, digest: message.digest, persistence: message.persistence,
            countsAsUnread: message.countsAsUnread, searchableWords: message.searchableWords, parentID: message.parentID,
            threadRootID: message.threadRootID, replyCount: message.replyCount, reason: message.reason, envelope: message.envelopeBytes)
    }
}

extension RemoteConversation {
    /// The JSON of a member's conversation: its counts, and its last message when it has one.
    package init(_ summary: ConversationSummary) {
        self.init(
            id: summary.id, unreadCount: summary.unreadCount, messageCount: summary.messageCount,
            lastMessage: summary.messageCount > 0 ? RemoteMessage(summary.lastMessage) : nil)
    }
}
