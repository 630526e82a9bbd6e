import MissiveCore
import MissiveStore

// The JSON the API answers with, written by the project's JSON writer: members in declaration order, an absent
// optional as `null`, and stored envelopes spliced in byte for byte. docs/SERVER.md shows each.

/// `GET /api/v1/me`.
struct MeJSON: Encodable {
    var member: String
}

/// `GET /api/v1/conversations`.
struct ConversationListJSON: Encodable {
    var conversations: [ConversationSummaryJSON]
}

/// One conversation of a member, with its unread count and its last message.
struct ConversationSummaryJSON: Encodable {
    var id: String
    var unreadCount: Int
    var messageCount: Int
    var lastMessage: StoredMessageJSON?

    init(_ summary: ConversationSummary) {
        id = summary.id
        unreadCount = summary.unreadCount
        messageCount = summary.messageCount
        lastMessage = summary.messageCount > 0 ? StoredMessageJSON(summary.lastMessage) : nil
    }
}

/// `GET /api/v1/conversations/{id}`, and a conversation just made.
struct ConversationJSON: Encodable {
    var id: String
    var members: [String]
    var readUpTo: String?
    var unreadCount: Int
}

/// `GET /api/v1/conversations/{id}/messages`.
struct MessageListJSON: Encodable {
    var messages: [StoredMessageJSON]
}

/// A stored message, as `missive store show --format json` writes it (`stored-message`).
struct StoredMessageJSON: Encodable {
    var id: String
    var conversationID: String
    var senderID: String
    var sentAt: Int64
    var objectName: String
    var businessID: String?
    var known: Bool
    var digest: String
    var persistence: PersistenceJSON
    var countsAsUnread: Bool
    var searchableWords: [String]
    var parentID: String?
    var threadRootID: String?
    var replyCount: Int
    var reason: String?
    /// The stored envelope, byte for byte.
    var envelope: RawJSON

    init(_ message: StoredMessage) {
        id = message.id
        conversationID = message.conversationID
        senderID = message.senderID
        sentAt = message.sentAt
        objectName = message.objectName
        businessID = message.businessID
        known = message.isKnown
        digest = message.digest
        persistence = PersistenceJSON(name: message.persistence.name, value: message.persistence.rawValue)
        countsAsUnread = message.countsAsUnread
        searchableWords = message.searchableWords
        parentID = message.parentID
        threadRootID = message.threadRootID
        replyCount = message.replyCount
        reason = message.reason
        envelope = RawJSON(message.envelopeBytes)
    }
}

/// `{"name": "counted", "value": 3}`.
struct PersistenceJSON: Encodable {
    var name: String
    var value: UInt32
}
