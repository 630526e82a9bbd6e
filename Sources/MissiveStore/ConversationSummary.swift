/// One conversation in the list: its newest message and its unread count.
public struct ConversationSummary: Sendable, Hashable {
    /// The conversation's id.
    public var id: String
    /// Its unread count.
    public var unreadCount: Int
    /// How many messages it has stored.
    public var messageCount: Int
    /// Its newest message, in the order sent.
    public var lastMessage: StoredMessage

    /// Creates a summary.
    public init(id: String, unreadCount: Int, messageCount: Int, lastMessage: StoredMessage) {
        self.id = id
        self.unreadCount = unreadCount
        self.messageCount = messageCount
        self.lastMessage = lastMessage
    }
}
