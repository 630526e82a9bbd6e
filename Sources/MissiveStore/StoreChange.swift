import Missive

/// One entry of a store's change feed (``MessageStore/changes(after:limit:)``).
public struct StoreChange: Sendable, Hashable {
    /// What changed. New kinds may be added: don't switch exhaustively.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case stored, edited, deleted, read, joined, left, transient
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
        /// A message its persistence keeps out of the store (`none`, `status`) was published through the feed
        /// (``MessageStore/publishTransient(_:)``): ``StoreChange/envelope`` and ``StoreChange/persistence``
        /// carry it, ``StoreChange/messageID`` is its id and ``StoreChange/memberID`` its sender.
        public static let transient = Kind(.transient)

        /// The feed's spelling: `stored`, `edited`, `deleted`, `read`, `joined`, `left`, `transient`.
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
    /// The member who read, joined or left; for ``Kind/transient``, the sender.
    public var memberID: String?
    /// For ``Kind/stored`` and ``Kind/edited``: the message as it is stored now, `nil` when it has been
    /// deleted since (a later ``Kind/deleted`` change says so).
    public var message: StoredMessage?
    /// For ``Kind/transient``: the envelope as it was published, byte for byte; `nil` for the other kinds.
    public var envelope: [UInt8]?
    /// For ``Kind/transient``: the message's persistence (`none` or `status`); `nil` for the other kinds.
    public var persistence: Persistence?

    /// How long a ``Kind/transient`` change stays in the feed, in milliseconds: 10 minutes. Each publish removes
    /// the older ones.
    public static let transientLifetime: Int64 = 10 * 60 * 1000

    /// Creates a change. Stores make them; followers read them.
    public init(position: Int64, kind: Kind, conversationID: String, messageID: String?, memberID: String?, message: StoredMessage?) {
        self.position = position
        self.kind = kind
        self.conversationID = conversationID
        self.messageID = messageID
        self.memberID = memberID
        self.message = message
    }

    /// Creates a ``Kind/transient`` change: `envelope`, sent by `memberID` in `conversationID` with the
    /// persistence `persistence`, published at `position`.
    public init(position: Int64, transient envelope: [UInt8], persistence: Persistence, conversationID: String, messageID: String, memberID: String) {
        self.init(position: position, kind: .transient, conversationID: conversationID, messageID: messageID, memberID: memberID, message: nil)
        self.envelope = envelope
        self.persistence = persistence
    }
}

/// Messages that the store does not keep, carried by its feed: how several processes over one store (the server's
/// instances) hand a typing indicator or a `none` message to each other's connections.
///
/// A transient change is never counted, never in history or search; it is in the feed, in order with the other
/// changes, for ``StoreChange/transientLifetime`` (10 minutes): each publish first removes the transient changes
/// older than that, so the feed does not grow with them. A follower that resumes from further back than that
/// misses them, as a member who was offline misses a typing indicator.
extension MessageStore {
    /// The default for a store that cannot carry transient messages: it refuses.
    ///
    /// - Throws: ``StoreError/Code/unsupported``, always.
    @discardableResult
    public func publishTransient(_ message: IncomingMessage) async throws(StoreError) -> Int64 {
        throw StoreError(.unsupported, "this store cannot publish messages it does not keep (`none`, `status`) on its change feed", path: location)
    }
}

extension IncomingMessage {
    /// Whether the message can be published through the feed: its persistence keeps it out of the store.
    package var isTransient: Bool { message.persistence == .none || message.persistence == .status }
}
