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

    init(id: String, unreadCount: Int, messageCount: Int, lastMessage: StoredMessageJSON?) {
        self.id = id
        self.unreadCount = unreadCount
        self.messageCount = messageCount
        self.lastMessage = lastMessage
    }

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
