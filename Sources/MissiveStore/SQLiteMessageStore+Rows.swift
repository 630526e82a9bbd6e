import Foundation
import GRDB
import Missive

/// Reading a ``StoredMessage`` from its row, and the searchable words as one column keeps them.
extension SQLiteMessageStore {
    /// A stored message from a row that starts with the columns of ``MessageColumn/selection``, each read at
    /// its case's position (GRDB's lookups by name fold the case of every name).
    func storedMessage(_ row: Row) -> StoredMessage {
        Self.storedMessage(row, reader: reader)
    }

    /// A stored message from a row, its ``StoredMessage/countsAsUnread`` for `reader` (`nil`: for any member
    /// but its sender).
    static func storedMessage(_ row: Row, reader: String?) -> StoredMessage {
        func at(_ column: MessageColumn) -> Int { column.rawValue }
        let words: String = row[at(.words)]
        let sender: String = row[at(.senderID)]
        let counted: Bool = row[at(.counted)]
        let envelope: Data = row[at(.envelope)]
        return StoredMessage(
            id: row[at(.id)], conversationID: row[at(.conversationID)], senderID: sender, sentAt: row[at(.sentAt)],
            objectName: row[at(.objectName)], businessID: row[at(.businessID)], isKnown: row[at(.known)], digest: row[at(.digest)],
            persistence: Persistence(rawValue: row[at(.persistence)]) ?? .persisted, countsAsUnread: counted && reader != sender,
            searchableWords: StoreRules.splitWords(words),
            parentID: row[at(.parentID)], threadRootID: row[at(.rootID)], replyCount: row[at(.replyCount)], reason: row[at(.reason)],
            envelopeBytes: [UInt8](envelope))
    }
}
