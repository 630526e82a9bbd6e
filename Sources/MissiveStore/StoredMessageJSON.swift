import MissiveCore

/// A stored message as JSON, the same for `missive store show --format json` (`stored-message` in
/// docs/CLI-JSON.md) and the server's API: the fields the store keeps, and the envelope as it was received, byte
/// for byte. Written by `JSONWriterEncoder`, which splices ``envelope`` in unchanged.
package struct StoredMessageJSON: Encodable, Sendable {
    package var id: String
    package var conversationID: String
    package var senderID: String
    package var sentAt: Int64
    package var objectName: String
    package var businessID: String?
    package var known: Bool
    package var digest: String
    package var persistence: PersistenceJSON
    package var countsAsUnread: Bool
    package var searchableWords: [String]
    package var parentID: String?
    package var threadRootID: String?
    package var replyCount: Int
    package var reason: String?
    /// The stored envelope, byte for byte.
    package var envelope: RawJSON

    /// Every field as given.
    package init(
        id: String, conversationID: String, senderID: String, sentAt: Int64, objectName: String, businessID: String?, known: Bool, digest: String,
        persistence: PersistenceJSON, countsAsUnread: Bool, searchableWords: [String], parentID: String?, threadRootID: String?, replyCount: Int,
        reason: String?, envelope: RawJSON
    ) {
        self.id = id
        self.conversationID = conversationID
        self.senderID = senderID
        self.sentAt = sentAt
        self.objectName = objectName
        self.businessID = businessID
        self.known = known
        self.digest = digest
        self.persistence = persistence
        self.countsAsUnread = countsAsUnread
        self.searchableWords = searchableWords
        self.parentID = parentID
        self.threadRootID = threadRootID
        self.replyCount = replyCount
        self.reason = reason
        self.envelope = envelope
    }

    /// The JSON of `message`.
    package init(_ message: StoredMessage) {
        self.init(
            id: message.id, conversationID: message.conversationID, senderID: message.senderID, sentAt: message.sentAt, objectName: message.objectName,
            businessID: message.businessID, known: message.isKnown, digest: message.digest, persistence: PersistenceJSON(message.persistence),
            countsAsUnread: message.countsAsUnread, searchableWords: message.searchableWords, parentID: message.parentID,
            threadRootID: message.threadRootID, replyCount: message.replyCount, reason: message.reason, envelope: RawJSON(message.envelopeBytes))
    }
}
