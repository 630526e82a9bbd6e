/// The columns of the `message` table a ``StoredMessage`` is read from, the same in both backends (SQLite's schema
/// and PostgreSQL's name them alike): the one list that every SELECT of a message (``selection``) and each
/// backend's reading of its row use, so that they cannot disagree. A case's raw value is its position in the
/// selection.
package enum MessageColumn: Int, CaseIterable, Sendable {
    case id, conversationID, senderID, sentAt, objectName, businessID, known, digest, persistence, counted, words, parentID, rootID
    case replyCount, reason, envelope

    /// The column's name in the `message` table.
    package var name: String {
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
    package static let selection = allCases.map { "message.\($0.name)" }.joined(separator: ", ")

    /// The position of the first column a query adds after ``selection``.
    package static let end = allCases.count
}
