/// A conversation's read mark and unread count.
public struct ReadState: Sendable, Hashable {
    /// The id of the last message read, if any is.
    public var readUpTo: String?
    /// The unread count.
    public var unreadCount: Int

    /// Creates a read state.
    public init(readUpTo: String?, unreadCount: Int) {
        self.readUpTo = readUpTo
        self.unreadCount = unreadCount
    }
}
