import Missive

/// A store of messages for one account or for many: what their persistence flags say to keep, the members of
/// each conversation with their read marks and unread counters, full-text search, quote replies, unknown
/// messages that decode once their plugin is installed, and a feed of every change.
///
/// The contract every backend keeps, and that the store's test suite checks on each of them:
/// - **Flags.** A message is stored when the persistence in effect is `persisted` or `counted` (see
///   `Message.persistence`: the type's flag, or for an unknown message the sender's flag, else
///   `persisted`). `none` and `status` messages are not stored; ``ingest(_:)`` reports them.
/// - **Lossless.** The envelope is stored byte for byte (``IncomingMessage/envelopeBytes``), beside the
///   decoded columns.
/// - **Idempotent.** A message whose id is already stored is skipped and reported, never stored twice, also
///   when several writers ingest it at once.
/// - **Atomic.** Every call that writes is one transaction: all of it is kept, or none.
/// - **Members.** A conversation has members (``join(member:conversation:)``, ``leave(member:conversation:)``).
///   A member who joins starts with everything already stored read; one who leaves stops counting. A
///   ``StoreKind/personal(owner:)`` store makes its owner a member of each conversation when its first message
///   is stored, so that a one-account host never manages members.
/// - **Unread.** A member's unread count in a conversation is the number of its `counted` messages from others
///   than that member that come after the member's read mark, in the order (``StoredMessage/sentAt``, id).
///   It is a counter kept on every change, never a scan; ``checkConsistency()`` recounts it.
/// - **Replies** are one level deep: a reply to a reply belongs to the thread of its root.
/// - **Changes.** Every write appends its changes to a feed, each at a position that grows in the order
///   the writes committed (``changes(after:limit:)``), so that a follower resumes from the last position it
///   handled and misses nothing.
///
/// Every method is `async`, so that a backend behind a network (a database server) fits the same protocol.
/// The methods without a member (``conversations()``, ``unreadCount(conversation:)``, ...) are the
/// one-account API: they act for the ``reader`` of a personal store.
public protocol MessageStore: Sendable {
    /// Whether the store is one account's (and whose) or many members'.
    var kind: StoreKind { get }

    /// Where the store is, for messages: a file's path, or a server's URL without its password.
    var location: String { get }

    /// Lets go of the store's connections once its owner is done with it (a server that stops). Calls after it may
    /// fail with ``StoreError/Code/unavailable``. The default does nothing: a SQLite store closes its file when the last
    /// reference to it goes away; the PostgreSQL store closes its pool and its listening connection.
    func close() async

    // MARK: Writing

    /// Applies each message's persistence flag: stores those to keep, in one transaction.
    ///
    /// - Returns: one outcome per message, in order.
    func ingest(_ messages: [IncomingMessage]) async throws(StoreError) -> IngestReport

    /// Replaces a stored message with a new version of it (an edit: a vote in a poll, a corrected text): the
    /// same id, conversation and sender, new content. Its columns, search entry and counters follow.
    ///
    /// - Returns: the message as stored now.
    /// - Throws: ``StoreError/Code/notFound`` when no message has its id; ``StoreError/Code/conflict`` when the
    ///   new version names another conversation or sender, or its persistence says not to store it.
    @discardableResult
    func replace(_ message: IncomingMessage) async throws(StoreError) -> StoredMessage

    /// Replaces a stored message with the version `transform` makes of it, in one step: no other write to the
    /// message comes between the read `transform` is given and the write of what it returns, whether it comes from
    /// this process or from another on the same database. It is the way to change a message from what it holds now
    /// (a vote in a poll: two votes at once, through two servers on one database, both count).
    ///
    /// `transform` runs while the message is locked against other writers (SQLite: inside the write transaction;
    /// PostgreSQL: with the message's row locked by `SELECT … FOR UPDATE`), so it should be quick. It may run more
    /// than once when the database has the transaction retried; only the last run's result is kept. When it
    /// throws, nothing is written and its error is thrown as it is.
    ///
    /// The protocol's default (for a store that implements only ``replace(_:)``) reads, transforms and replaces
    /// with the message's id held in a lock of this process: it is atomic among the callers of one process only.
    /// ``SQLiteMessageStore`` and the PostgreSQL store implement it in the database.
    ///
    /// - Returns: the message as stored now.
    /// - Throws: ``StoreError`` ``StoreError/Code/notFound`` when no message has the id, and
    ///   ``StoreError/Code/conflict`` when the new version has another id or breaks a rule of ``replace(_:)``;
    ///   otherwise the error `transform` threw.
    @discardableResult
    func replace(messageID: String, with transform: @escaping @Sendable (StoredMessage) throws -> IncomingMessage) async throws -> StoredMessage

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

    // MARK: Members

    /// Makes `memberID` a member of the conversation (creating the conversation when it has no message yet).
    /// Everything stored so far counts as read for the new member. Joining a conversation one is a member of
    /// changes nothing.
    ///
    /// - Returns: the member's read mark and unread count.
    @discardableResult
    func join(member memberID: String, conversation conversationID: String) async throws(StoreError) -> ReadState

    /// Ends a membership: the member no longer reads, searches or counts anything in the conversation.
    ///
    /// - Throws: ``StoreError/Code/notAMember`` when it is not a member.
    func leave(member memberID: String, conversation conversationID: String) async throws(StoreError)

    /// The members of a conversation, sorted.
    func members(ofConversation conversationID: String) async throws(StoreError) -> [String]

    /// The conversations `memberID` belongs to now, those without messages included, sorted by id.
    func conversationIDs(member memberID: String) async throws(StoreError) -> [String]

    // MARK: Reading

    /// The stored message with this id, if any.
    func message(id: String) async throws(StoreError) -> StoredMessage?

    /// A conversation's messages in the order sent (``StoredMessage/sentAt``, then id): the newest `limit`
    /// of them, or all. The store does not check who asks: a host checks membership first.
    func messages(inConversation conversationID: String, limit: Int?) async throws(StoreError) -> [StoredMessage]

    /// A page of a conversation's messages next to another of its messages, in the order sent: the `limit`
    /// messages just before `cursor`'s message, or just after it. Empty when the cursor's message is not in the
    /// conversation. The store does not check who asks.
    func messages(inConversation conversationID: String, from cursor: HistoryCursor, limit: Int) async throws(StoreError) -> [StoredMessage]

    /// The conversations `memberID` belongs to that have stored messages, newest activity first, with the
    /// member's unread counts.
    func conversations(member memberID: String) async throws(StoreError) -> [ConversationSummary]

    /// A member's unread count in one conversation; 0 when it is not a member or the conversation is unknown.
    func unreadCount(member memberID: String, conversation conversationID: String) async throws(StoreError) -> Int

    /// A member's unread count in every conversation where it is above zero.
    func unreadCounts(member memberID: String) async throws(StoreError) -> [String: Int]

    /// The sum of a member's unread counts.
    func totalUnreadCount(member memberID: String) async throws(StoreError) -> Int

    /// Moves the member's read mark in the conversation to the message `messageID`: it and everything before
    /// it are read. A mark never moves back; marking an earlier message changes nothing.
    ///
    /// - Returns: the read mark in effect after the call (the earlier one, when it was further) and the
    ///   member's unread count.
    /// - Throws: ``StoreError/Code/notFound`` when the message is not stored in that conversation;
    ///   ``StoreError/Code/notAMember`` when the member does not belong to it.
    @discardableResult
    func markRead(member memberID: String, conversation conversationID: String, upTo messageID: String) async throws(StoreError) -> ReadState

    /// A member's read mark and unread count in a conversation; no mark and 0 when it is not a member.
    func readState(member memberID: String, conversation conversationID: String) async throws(StoreError) -> ReadState

    /// Searches the searchable words of stored messages (for an unknown message, the sender's fallback
    /// text), best match first: in the conversations `memberID` belongs to, or in all when it is `nil`; in
    /// one conversation when `conversationID` is given.
    ///
    /// - Throws: ``StoreError/Code/malformedQuery`` for a query without words or with an unbalanced quote.
    func search(_ query: SearchQuery, member memberID: String?, conversation conversationID: String?, limit: Int) async throws(StoreError)
        -> [SearchHit]

    /// The message a reply quotes, looked up in the store.
    func quotedOriginal(of message: StoredMessage) async throws(StoreError) -> QuotedOriginal?

    /// The replies in a message's thread, in the order sent.
    func replies(to messageID: String) async throws(StoreError) -> [StoredMessage]

    // MARK: The change feed

    /// The changes after `position`, in order, at most `limit` of them. Position 0 is before the first change.
    func changes(after position: Int64, limit: Int) async throws(StoreError) -> [StoreChange]

    /// The position of the newest change; 0 when there is none.
    func lastChangePosition() async throws(StoreError) -> Int64

    /// Returns when a change after `position` may have been committed, by this process or another, or when
    /// `timeout` has passed: a wake-up for a follower, never the data itself (read it with
    /// ``changes(after:limit:)``).
    func waitForChanges(after position: Int64, timeout: Duration) async throws(StoreError)

    // MARK: Maintenance

    /// Recounts unread counts, message counts, newest messages and reply counts from the rows, and checks
    /// the database and its search index; reports every counter that differs.
    func checkConsistency() async throws(StoreError) -> ConsistencyReport

    // MARK: Transient messages

    /// Appends a message whose persistence keeps it out of the store (`none`, `status`) to the change feed, as a
    /// ``StoreChange/Kind/transient`` change that carries its envelope byte for byte, so that every follower of
    /// the feed (every server process over this store) hands it on. Nothing else is written: it is never
    /// counted, never in history or search, and it leaves the feed after ``StoreChange/transientLifetime`` (removed by a
    /// later publish). A store without a feed to carry it keeps the default, which throws
    /// ``StoreError/Code/unsupported``.
    ///
    /// - Returns: the change's position.
    /// - Throws: ``StoreError/Code/conflict`` for a message whose persistence says to store it.
    @discardableResult
    func publishTransient(_ message: IncomingMessage) async throws(StoreError) -> Int64

    // MARK: Plugin failures

    /// Keeps messages that isolated plugins failed on (a crash, a hang, a forbidden call: `PluginFailure`), so that
    /// a later process on the store does not hand them to the same plugin build again. A failure with the key of one
    /// kept replaces it. The store's default throws ``StoreError/Code/unsupported``.
    func recordPluginFailures(_ failures: [PluginFailure]) async throws(StoreError)

    /// Every plugin failure the store keeps, oldest first. The store's default keeps none.
    func pluginFailures() async throws(StoreError) -> [PluginFailure]

    /// Forgets the plugin failures of the plugin builds whose SHA-256s are given, or all of them when `pluginSHA256s`
    /// is `nil`, so that their messages are tried again (`missive store redecode` forgets them all).
    ///
    /// - Returns: how many were forgotten.
    @discardableResult
    func forgetPluginFailures(pluginSHA256s: Set<String>?) async throws(StoreError) -> Int
}

extension MessageStore {
    /// Does nothing: a store that holds connections it must let go of implements ``close()``.
    public func close() async {}

    /// The conversations of `memberID` that have messages, for a store that does not list memberships itself.
    public func conversationIDs(member memberID: String) async throws(StoreError) -> [String] {
        try await conversations(member: memberID).map(\.id).sorted()
    }

    /// A page next to `cursor`, for a store that does not page itself: it reads the whole conversation.
    public func messages(inConversation conversationID: String, from cursor: HistoryCursor, limit: Int) async throws(StoreError) -> [StoredMessage] {
        let all = try await messages(inConversation: conversationID, limit: nil)
        switch cursor {
        case .before(let id):
            guard let index = all.firstIndex(where: { $0.id == id }) else { return [] }
            return Array(all[..<index].suffix(Swift.max(0, limit)))
        case .after(let id):
            guard let index = all.firstIndex(where: { $0.id == id }) else { return [] }
            return Array(all[(index + 1)...].prefix(Swift.max(0, limit)))
        }
    }

    /// The member the one-account API acts for: a personal store's owner (or `""`, an account without a name,
    /// when it has none); `nil` for a shared store.
    public var reader: String? {
        switch kind {
        case .personal(let owner): owner ?? ""
        case .shared: nil
        }
    }

    /// A personal store's owner: its own messages never count as unread. `nil` for a shared store and for a
    /// personal store without a named owner.
    public var owner: String? {
        if case .personal(let owner) = kind { return owner }
        return nil
    }

    /// ``reader``, or the error a shared store gives the one-account API.
    private func requireReader(_ call: String) throws(StoreError) -> String {
        guard let reader else {
            throw StoreError(.memberRequired, "a shared store has no owner: \(call) needs a member", path: location)
        }
        return reader
    }

    /// Every message of a conversation, in the order sent.
    public func messages(inConversation conversationID: String) async throws(StoreError) -> [StoredMessage] {
        try await messages(inConversation: conversationID, limit: nil)
    }

    /// The reader's conversations that have stored messages, newest activity first.
    ///
    /// - Throws: ``StoreError/Code/memberRequired`` on a shared store.
    public func conversations() async throws(StoreError) -> [ConversationSummary] {
        try await conversations(member: try requireReader("conversations()"))
    }

    /// The reader's unread count in one conversation; 0 for a conversation the store does not know.
    public func unreadCount(conversation conversationID: String) async throws(StoreError) -> Int {
        try await unreadCount(member: try requireReader("unreadCount(conversation:)"), conversation: conversationID)
    }

    /// The reader's unread count of every conversation that has one above zero.
    public func unreadCounts() async throws(StoreError) -> [String: Int] {
        try await unreadCounts(member: try requireReader("unreadCounts()"))
    }

    /// The sum of the reader's unread counts.
    public func totalUnreadCount() async throws(StoreError) -> Int {
        try await totalUnreadCount(member: try requireReader("totalUnreadCount()"))
    }

    /// Moves the reader's read mark; see ``markRead(member:conversation:upTo:)``.
    @discardableResult
    public func markRead(conversation conversationID: String, upTo messageID: String) async throws(StoreError) -> ReadState {
        try await markRead(member: try requireReader("markRead(conversation:upTo:)"), conversation: conversationID, upTo: messageID)
    }

    /// The reader's read mark and unread count in a conversation.
    public func readState(conversation conversationID: String) async throws(StoreError) -> ReadState {
        try await readState(member: try requireReader("readState(conversation:)"), conversation: conversationID)
    }

    /// Searches every conversation of the store, or one of them: a personal store holds its owner's
    /// conversations only; a shared store's operator searches them all.
    public func search(_ query: SearchQuery, conversation conversationID: String?, limit: Int) async throws(StoreError) -> [SearchHit] {
        try await search(query, member: nil, conversation: conversationID, limit: limit)
    }

    /// Searches every conversation of the store, 50 hits at most.
    public func search(_ query: String) async throws(StoreError) -> [SearchHit] {
        try await search(SearchQuery(parsing: query), conversation: nil, limit: 50)
    }

    /// Decodes stored unknown messages again, without progress reports.
    public func redecode(with registry: MessageRegistry) async throws(StoreError) -> RedecodeReport {
        try await redecode(with: registry, progress: nil)
    }
}
