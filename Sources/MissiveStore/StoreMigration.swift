/// What `missive store migrate` needs of a store, on both backends: the rows as stored, and a way to write them
/// into another store as they are, without decoding them again.
///
/// A migration copies the messages in batches in the source's order of ingestion. Each batch is one transaction
/// of the destination, which also records how far it got for that source (``migrationProgress(source:)``), so an
/// interrupted migration resumes after the last batch committed and a second run copies only what is new.
/// The members and their read marks come last, and then every counter is recounted from the rows.
/// The destination's change feed gets no entries for what is copied: a follower of the new store starts at its
/// ``MessageStore/lastChangePosition()``.
package protocol MigratingStore: MessageStore {
    /// Up to `limit` stored messages ingested after the one at `sequence` (0: from the first), in order of
    /// ingestion, each with its sequence number.
    func exportMessages(after sequence: Int64, limit: Int) async throws(StoreError) -> [(sequence: Int64, message: StoredMessage)]

    /// Every membership, active or not, with its read mark.
    func exportMembers() async throws(StoreError) -> [MembershipRecord]

    /// Stores copies of `messages` as they are (a message whose id is stored is skipped) and records that the
    /// source `source` has been copied up to `sequence`, in one transaction.
    ///
    /// - Returns: how many were new.
    func importMessages(_ messages: [StoredMessage], source: String, through sequence: Int64) async throws(StoreError) -> Int

    /// How far the source `source` has been copied: the sequence number of its last message copied, 0 for none.
    func migrationProgress(source: String) async throws(StoreError) -> Int64

    /// Writes the memberships (a membership already there takes the copy's state), then recounts every
    /// counter from the rows, in one transaction.
    func finishImport(members: [MembershipRecord]) async throws(StoreError)
}

/// One membership as a migration copies it.
package struct MembershipRecord: Sendable, Hashable {
    package var conversationID: String
    package var memberID: String
    package var active: Bool
    /// The read mark: the message's position, or `nil` when nothing is read.
    package var readSentAt: Int64?
    package var readMessageID: String?

    package init(conversationID: String, memberID: String, active: Bool, readSentAt: Int64?, readMessageID: String?) {
        self.conversationID = conversationID
        self.memberID = memberID
        self.active = active
        self.readSentAt = readSentAt
        self.readMessageID = readMessageID
    }
}
