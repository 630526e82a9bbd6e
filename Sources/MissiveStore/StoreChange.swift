/// One entry of a store's change feed (``MessageStore/changes(after:limit:)``).
public struct StoreChange: Sendable, Hashable {
    /// What changed. New kinds may be added: don't switch exhaustively.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case stored, edited, deleted, read, joined, left
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A kind from its feed spelling (``description``); `nil` for a spelling this version does not know.
        public init?(rawValue: String) {
            guard let base = Base(rawValue: rawValue) else { return nil }
            self.base = base
        }

        /// A message was stored: ``StoreChange/messageID``, and ``StoreChange/message`` unless deleted since.
        public static let stored = Kind(.stored)
        /// A stored message changed: replaced by a new version, or decoded again after an install.
        public static let edited = Kind(.edited)
        /// A message was deleted.
        public static let deleted = Kind(.deleted)
        /// ``StoreChange/memberID``'s read mark moved to ``StoreChange/messageID``.
        public static let read = Kind(.read)
        /// ``StoreChange/memberID`` joined the conversation.
        public static let joined = Kind(.joined)
        /// ``StoreChange/memberID`` left the conversation.
        public static let left = Kind(.left)

        /// The feed's spelling: `stored`, `edited`, `deleted`, `read`, `joined`, `left`.
        public var description: String { base.rawValue }
    }

    /// Where the change is in the feed: positions grow in the order writes committed, with gaps.
    public var position: Int64
    /// What changed.
    public var kind: Kind
    /// The conversation it happened in.
    public var conversationID: String
    /// The message stored, edited or deleted; for ``Kind/read``, the read mark.
    public var messageID: String?
    /// The member who read, joined or left.
    public var memberID: String?
    /// For ``Kind/stored`` and ``Kind/edited``: the message as it is stored now, `nil` when it has been
    /// deleted since (a later ``Kind/deleted`` change says so).
    public var message: StoredMessage?

    /// Creates a change. Stores make them; followers read them.
    public init(position: Int64, kind: Kind, conversationID: String, messageID: String?, memberID: String?, message: StoredMessage?) {
        self.position = position
        self.kind = kind
        self.conversationID = conversationID
        self.messageID = messageID
        self.memberID = memberID
        self.message = message
    }
}
