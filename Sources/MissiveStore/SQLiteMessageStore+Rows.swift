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

/// The columns of the `message` table a ``StoredMessage`` is read from: the one list that both the SELECT
/// (``selection``) and ``SQLiteMessageStore/storedMessage(_:)`` use, so that the two cannot disagree. A case's
/// raw value is its position in the selection.
enum MessageColumn: Int, CaseIterable {
    case id, conversationID, senderID, sentAt, objectName, businessID, known, digest, persistence, counted, words, parentID, rootID
    case replyCount, reason, envelope

    /// The column's name in the `message` table.
    var name: String {
        switch self {
        case .id: "id"
        case .conversationID: "conversation_id"
        case .senderID: "sender_id"
        case .sentAt: "sent_at"
        case .objectName: "object_name"
        case .businessID: "business_id"
        case .known: "known"
        case .digest: "digest"
        case .persistence: "persistence"
        case .counted: "counted"
        case .words: "words"
        case .parentID: "parent_id"
        case .rootID: "root_id"
        case .replyCount: "reply_count"
        case .reason: "reason"
        case .envelope: "envelope"
        }
    }

    /// The columns in order, each qualified by its table, as a SELECT lists them: `message.id, message.conversation_id, ...`.
    static let selection = allCases.map { "message.\($0.name)" }.joined(separator: ", ")

    /// The position of the first column a query adds after ``selection``.
    static let end = allCases.count
}
