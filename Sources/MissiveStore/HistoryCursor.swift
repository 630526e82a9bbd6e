/// Where a page of history begins: next to a message of the conversation, in the order messages were sent
/// (``StoredMessage/sentAt``, then id).
public enum HistoryCursor: Sendable, Hashable {
    /// The messages sent before the message with this id, the nearest last.
    case before(String)
    /// The messages sent after the message with this id, the nearest first.
    case after(String)
}
