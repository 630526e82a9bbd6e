import Missive

/// A message as a store keeps it: the envelope byte for byte, and the columns decoded from it when it was
/// ingested (or last re-decoded).
public struct StoredMessage: Sendable, Hashable {
    /// The message's id.
    public var id: String
    /// The conversation it belongs to.
    public var conversationID: String
    /// Who sent it.
    public var senderID: String
    /// When it was sent, in milliseconds since the Unix epoch.
    public var sentAt: Int64
    /// The objectName it was sent under.
    public var objectName: String
    /// The business identifier of its type, or for an unknown message the value of its container's key.
    public var businessID: String?
    /// Whether a registered type decoded it.
    public var isKnown: Bool
    /// The conversation digest.
    public var digest: String
    /// The persistence flag that was applied: `persisted` or `counted`.
    public var persistence: Persistence
    /// Whether it counts towards the unread count: a `counted` message from someone else than the owner.
    public var countsAsUnread: Bool
    /// The words it is searched by: its type's searchable words, or for an unknown message the sender's
    /// fallback text; at most ``SQLiteMessageStore/maxIndexedBytes`` of them.
    public var searchableWords: [String]
    /// The message it quotes, as the envelope says.
    public var parentID: String?
    /// The thread it belongs to: the root of its parent's thread, or the parent itself. Replies are one
    /// level deep, so a reply to a reply belongs to the root's thread.
    public var threadRootID: String?
    /// How many stored replies belong to its thread.
    public var replyCount: Int
    /// Why it is unknown, for an unknown message.
    public var reason: String?
    /// The envelope, exactly as stored.
    public var envelopeBytes: [UInt8]

    /// Creates a stored message. Stores make them; hosts read them.
    public init(
        id: String, conversationID: String, senderID: String, sentAt: Int64, objectName: String, businessID: String?,
        isKnown: Bool, digest: String, persistence: Persistence, countsAsUnread: Bool, searchableWords: [String],
        parentID: String?, threadRootID: String?, replyCount: Int, reason: String?, envelopeBytes: [UInt8]
    ) {
        self.id = id
        self.conversationID = conversationID
        self.senderID = senderID
        self.sentAt = sentAt
        self.objectName = objectName
        self.businessID = businessID
        self.isKnown = isKnown
        self.digest = digest
        self.persistence = persistence
        self.countsAsUnread = countsAsUnread
        self.searchableWords = searchableWords
        self.parentID = parentID
        self.threadRootID = threadRootID
        self.replyCount = replyCount
        self.reason = reason
        self.envelopeBytes = envelopeBytes
    }

    /// The stored envelope, parsed.
    public func envelope() throws(StoreError) -> Envelope {
        do {
            return try Envelope(parsing: envelopeBytes)
        } catch {
            throw StoreError(.malformedEnvelope, "stored message \(id) cannot be read back: \(error.message)")
        }
    }

    /// The stored envelope decoded through `registry`: with the plugins installed now, which may know
    /// more types than when it was stored.
    public func decoded(with registry: MessageRegistry) throws(StoreError) -> Message {
        registry.decode(try envelope())
    }
}

extension StoredMessage: CustomStringConvertible {
    /// `id in conversation from sender: digest`, with `(unknown objectName)` for an unknown message.
    public var description: String {
        "\(id) in \(conversationID) from \(senderID): \(digest)" + (isKnown ? "" : " (unknown \(objectName))")
    }
}

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

/// What ``MessageStore/ingest(_:)`` did with each message.
public struct IngestReport: Sendable, Hashable {
    /// What happened to one message.
    public enum Outcome: Sendable, Hashable {
        /// It was stored.
        case stored
        /// A message with its id was already stored; nothing changed.
        case duplicate
        /// Its persistence flag (`none` or `status`) says not to store it; the caller may still show it.
        case notStored(Persistence)
        /// The store cannot keep it as it is, for the reason given: an id, conversation, sender, objectName
        /// or parent id holding U+0000, which SQLite's text ends at (it would be stored cut short).
        case refused(String)
    }

    /// One outcome per message given, in order.
    public var outcomes: [Outcome]

    /// Creates a report.
    public init(outcomes: [Outcome]) {
        self.outcomes = outcomes
    }

    /// How many messages were stored.
    public var storedCount: Int { outcomes.count { $0 == .stored } }
    /// How many were already stored.
    public var duplicateCount: Int { outcomes.count { $0 == .duplicate } }
    /// How many were refused.
    public var refusedCount: Int { outcomes.count { if case .refused = $0 { true } else { false } } }
    /// How many were not stored because of their flag.
    public var notStoredCount: Int { outcomes.count { if case .notStored = $0 { true } else { false } } }
}

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

/// One search result.
public struct SearchHit: Sendable, Hashable {
    /// The message found.
    public var message: StoredMessage
    /// The match's rank: lower is better (SQLite's bm25, negated scores).
    public var rank: Double
    /// The searchable words around the first match, with the match between `[` and `]`.
    public var snippet: String

    /// Creates a hit.
    public init(message: StoredMessage, rank: Double, snippet: String) {
        self.message = message
        self.rank = rank
        self.snippet = snippet
    }
}

/// What a reply quotes.
public enum QuotedOriginal: Sendable, Hashable {
    /// The original is stored.
    case found(StoredMessage)
    /// The original, named by its id, is not in the store ("original message not found").
    case notFound(parentID: String)
}

/// What ``MessageStore/redecode(with:progress:)`` did, per objectName.
public struct RedecodeReport: Sendable, Hashable {
    /// The outcome for one objectName.
    public struct TypeReport: Sendable, Hashable {
        /// The objectName the messages were sent under.
        public var objectName: String
        /// How many now decode and were updated.
        public var decoded: Int
        /// How many still fail.
        public var stillUnknown: Int
        /// The reason of the last message that still fails, if any.
        public var reason: String?
        /// How many of the decoded ones changed whether they count as unread.
        public var unreadChanged: Int

        /// Creates a report.
        public init(objectName: String, decoded: Int, stillUnknown: Int, reason: String?, unreadChanged: Int) {
            self.objectName = objectName
            self.decoded = decoded
            self.stillUnknown = stillUnknown
            self.reason = reason
            self.unreadChanged = unreadChanged
        }
    }

    /// One report per objectName among the stored unknown messages, sorted by objectName.
    public var types: [TypeReport]

    /// Creates a report.
    public init(types: [TypeReport]) {
        self.types = types
    }

    /// How many messages now decode.
    public var decodedCount: Int { types.reduce(0) { $0 + $1.decoded } }
    /// How many still fail.
    public var stillUnknownCount: Int { types.reduce(0) { $0 + $1.stillUnknown } }
}

/// What ``MessageStore/checkConsistency()`` found.
public struct ConsistencyReport: Sendable, Hashable {
    /// Each counter that differs from a recount, or problem the database reported, in words.
    public var problems: [String]

    /// Creates a report.
    public init(problems: [String]) {
        self.problems = problems
    }

    /// Whether every counter equals its recount and the database checks passed.
    public var isConsistent: Bool { problems.isEmpty }
}
