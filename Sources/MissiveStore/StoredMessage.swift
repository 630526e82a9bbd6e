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
    /// Whether it counts towards unread counts: a `counted` message counts for every member but its sender.
    /// A personal store says it for its owner (false for the owner's own messages); a shared store says
    /// whether it counts for the members other than its sender.
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

/// What a reply quotes.
public enum QuotedOriginal: Sendable, Hashable {
    /// The original is stored.
    case found(StoredMessage)
    /// The original, named by its id, is not in the store ("original message not found").
    case notFound(parentID: String)
}
