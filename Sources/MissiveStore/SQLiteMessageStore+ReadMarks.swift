import GRDB

/// Read marks: a conversation's mark and the unread count after it.
extension SQLiteMessageStore {
    @discardableResult
    public func markRead(conversation conversationID: String, upTo messageID: String) async throws(StoreError) -> ReadState {
        try await write { db in
            guard
                let target = try Row.fetchOne(
                    db, sql: "SELECT sent_at FROM message WHERE id = ? AND conversation_id = ?", arguments: [messageID, conversationID])
            else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored in conversation '\(conversationID)'")
            }
            let sentAt: Int64 = target[0]
            let mark = try Row.fetchOne(db, sql: "SELECT read_sent_at, read_message_id, unread FROM conversation WHERE id = ?", arguments: [conversationID])
            if let mark, let markSentAt = mark[0] as Int64?, let markID = mark[1] as String?,
                (sentAt, messageID) <= (markSentAt, markID)
            {
                return ReadState(readUpTo: markID, unreadCount: mark[2] as Int)
            }
            // What is still unread after the new mark: an index range over the counted messages only.
            let unread =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT COUNT(*) FROM message INDEXED BY message_counted
                        WHERE conversation_id = :conversation AND counted = 1
                            AND (sent_at > :sentAt OR (sent_at = :sentAt AND id > :id))
                        """,
                    arguments: ["conversation": conversationID, "sentAt": sentAt, "id": messageID]) ?? 0
            try db.execute(
                sql: "UPDATE conversation SET read_sent_at = ?, read_message_id = ?, unread = ? WHERE id = ?",
                arguments: [sentAt, messageID, unread, conversationID])
            return ReadState(readUpTo: messageID, unreadCount: unread)
        }
    }

    /// A conversation's read mark, as a position (sentAt, id), or `nil` when nothing is read.
    static func readMark(of conversationID: String, _ db: Database) throws -> (Int64, String)? {
        guard
            let mark = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT read_sent_at, read_message_id FROM conversation WHERE id = ?"), arguments: [conversationID]),
            let sentAt = mark[0] as Int64?, let id = mark[1] as String?
        else { return nil }
        return (sentAt, id)
    }

    /// Whether `message` comes after its conversation's read mark.
    static func isAfterReadMark(_ message: StoredMessage, _ db: Database) throws -> Bool {
        guard let mark = try readMark(of: message.conversationID, db) else { return true }
        return (message.sentAt, message.id) > mark
    }
}
