import Missive

/// A store of one account's messages: what their persistence flags say to keep, unread counters kept as
/// messages arrive, are read and are deleted, full-text search, quote replies, and unknown messages that
/// decode once their plugin is installed.
///
/// The contract every backend keeps, and that the store's test suite checks:
/// - **Flags.** A message is stored when the persistence in effect is `persisted` or `counted` (see
///   `Message.persistence`: the type's flag, or for an unknown message the sender's flag, else
///   `persisted`). `none` and `status` messages are not stored; ``ingest(_:)`` reports them.
/// - **Lossless.** The envelope is stored byte for byte (``IncomingMessage/envelopeBytes``), beside the
///   decoded columns.
/// - **Idempotent.** A message whose id is already stored is skipped and reported, never stored twice.
/// - **Atomic.** One call of ``ingest(_:)``, ``delete(messageID:)``, ``markRead(conversation:upTo:)`` or
///   ``redecode(with:progress:)`` is one transaction: all of it is kept, or none.
/// - **Unread.** A conversation's unread count is the number of its `counted` messages from others
///   than the ``owner`` that come after the read mark, in the order (``StoredMessage/sentAt``, id). It
///   is a counter kept on every change, not a scan; ``checkConsistency()`` recounts it.
/// - **Replies** are one level deep: a reply to a reply belongs to the thread of its root.
///
/// Every method is `async`, so that a backend behind a network (a database server) fits the same protocol;
/// ``SQLiteMessageStore`` runs its work on GRDB's own queues.
public protocol MessageStore: Sendable {
    /// The account whose store this is: its own messages never count as unread. `nil` when the store has
    /// none, and then every message is from someone else.
    var owner: String? { get }

    /// Applies each message's persistence flag: stores those to keep, in one transaction.
    ///
    /// - Returns: one outcome per message, in order.
    func ingest(_ messages: [IncomingMessage]) async throws(StoreError) -> IngestReport

    /// The stored message with this id, if any.
    func message(id: String) async throws(StoreError) -> StoredMessage?

    /// A conversation's messages in the order sent (``StoredMessage/sentAt``, then id): the newest `limit`
    /// of them, or all.
    func messages(inConversation conversationID: String, limit: Int?) async throws(StoreError) -> [StoredMessage]

    /// Every conversation that has stored messages, newest activity first.
    func conversations() async throws(StoreError) -> [ConversationSummary]

    /// The unread count of one conversation; 0 for a conversation the store does not know.
    func unreadCount(conversation conversationID: String) async throws(StoreError) -> Int

    /// The unread count of every conversation that has one above zero.
    func unreadCounts() async throws(StoreError) -> [String: Int]

    /// The sum of every conversation's unread count.
    func totalUnreadCount() async throws(StoreError) -> Int

    /// Moves the conversation's read mark to the message `messageID`: it and everything before it are
    /// read. A mark never moves back; marking an earlier message changes nothing.
    ///
    /// - Returns: the read mark in effect after the call (the earlier one, when it was further) and the
    ///   conversation's unread count.
    /// - Throws: ``StoreError/Code/notFound`` when the message is not stored in that conversation.
    @discardableResult
    func markRead(conversation conversationID: String, upTo messageID: String) async throws(StoreError) -> ReadState

    /// A conversation's read mark and unread count; no mark and 0 for a conversation the store does not know.
    func readState(conversation conversationID: String) async throws(StoreError) -> ReadState

    /// Searches the searchable words of stored messages (for an unknown message, the sender's fallback
    /// text), best match first.
    ///
    /// - Throws: ``StoreError/Code/malformedQuery`` for a query without words or with an unbalanced quote.
    func search(_ query: SearchQuery, conversation conversationID: String?, limit: Int) async throws(StoreError) -> [SearchHit]

    /// The message a reply quotes, looked up in the store.
    func quotedOriginal(of message: StoredMessage) async throws(StoreError) -> QuotedOriginal?

    /// The replies in a message's thread, in the order sent.
    func replies(to messageID: String) async throws(StoreError) -> [StoredMessage]

    /// Deletes one message.
    ///
    /// - Throws: ``StoreError/Code/notFound`` when it is not stored; ``StoreError/Code/hasReplies`` when
    ///   replies are attached to it: they must be deleted first.
    func delete(messageID: String) async throws(StoreError)

    /// Decodes again every stored unknown message whose type `registry` now knows, in one transaction,
    /// updating its columns, its search entry and the unread counters.
    ///
    /// Running it again changes nothing. Messages that still fail keep their (possibly new) reason.
    /// - Parameters:
    ///   - registry: the host's registry, with the plugins installed since.
    ///   - progress: called after every message looked at, with the count done and the total.
    func redecode(with registry: MessageRegistry, progress: (@Sendable (Int, Int) -> Void)?) async throws(StoreError) -> RedecodeReport

    /// Recounts unread counts, message counts, newest messages and reply counts from the rows, and checks
    /// the database and its search index; reports every counter that differs.
    func checkConsistency() async throws(StoreError) -> ConsistencyReport
}

extension MessageStore {
    /// Every message of a conversation, in the order sent.
    public func messages(inConversation conversationID: String) async throws(StoreError) -> [StoredMessage] {
        try await messages(inConversation: conversationID, limit: nil)
    }

    /// Searches every conversation, 50 hits at most.
    public func search(_ query: String) async throws(StoreError) -> [SearchHit] {
        try await search(SearchQuery(parsing: query), conversation: nil, limit: 50)
    }

    /// Decodes stored unknown messages again, without progress reports.
    public func redecode(with registry: MessageRegistry) async throws(StoreError) -> RedecodeReport {
        try await redecode(with: registry, progress: nil)
    }
}
