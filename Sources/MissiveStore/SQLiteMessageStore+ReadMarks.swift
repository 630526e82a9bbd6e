import GRDB

/// Members and read marks: who belongs to a conversation, how far each has read, and the counters that follow.
extension SQLiteMessageStore {
    @discardableResult
    public func markRead(member memberID: String, conversation conversationID: String, upTo messageID: String) async throws(StoreError) -> ReadState {
        try await write { db in
            guard
                let target = try Row.fetchOne(
                    db, sql: "SELECT sent_at FROM message WHERE id = ? AND conversation_id = ?", arguments: [messageID, conversationID])
            else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored in conversation '\(conversationID)'")
            }
            let sentAt: Int64 = target[0]
            guard
                let member = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT m.read_sent_at, m.read_message_id, c.counted_total, c.counted_total - m.seen
                        FROM member m JOIN conversation c ON c.id = m.conversation_id
                        WHERE m.conversation_id = ? AND m.member_id = ? AND m.active = 1
                        """,
                    arguments: [conversationID, memberID])
            else {
                throw StoreError(.notAMember, "'\(memberID)' is not a member of conversation '\(conversationID)'")
            }
            if let markSentAt = member[0] as Int64?, let markID = member[1] as String?, (sentAt, messageID) <= (markSentAt, markID) {
                return ReadState(readUpTo: markID, unreadCount: member[3] as Int)
            }
            // What is still unread after the new mark: an index range over the counted messages only.
            let unread =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT COUNT(*) FROM message INDEXED BY message_counted
                        WHERE conversation_id = :conversation AND counted = 1
                            AND (sent_at > :sentAt OR (sent_at = :sentAt AND id > :id)) AND sender_id != :member
                        """,
                    arguments: ["conversation": conversationID, "sentAt": sentAt, "id": messageID, "member": memberID]) ?? 0
            let total: Int = member[2]
            try db.execute(
                sql: "UPDATE member SET read_sent_at = ?, read_message_id = ?, seen = ? WHERE conversation_id = ? AND member_id = ?",
                arguments: [sentAt, messageID, total - unread, conversationID, memberID])
            try Self.appendChange(.read, conversation: conversationID, message: messageID, member: memberID, db)
            return ReadState(readUpTo: messageID, unreadCount: unread)
        }
    }

    @discardableResult
    public func join(member memberID: String, conversation conversationID: String) async throws(StoreError) -> ReadState {
        try await write { db in try Self.join(member: memberID, conversation: conversationID, db) }
    }

    /// Makes `memberID` a member with everything stored so far read; nothing when it is one already.
    static func join(member memberID: String, conversation conversationID: String, _ db: Database) throws -> ReadState {
        if let state = try Row.fetchOne(
            db,
            sql: """
                SELECT m.read_message_id, c.counted_total - m.seen FROM member m JOIN conversation c ON c.id = m.conversation_id
                WHERE m.conversation_id = ? AND m.member_id = ? AND m.active = 1
                """,
            arguments: [conversationID, memberID])
        {
            return ReadState(readUpTo: state[0], unreadCount: state[1])
        }
        try db.execute(sql: "INSERT OR IGNORE INTO conversation(id) VALUES (?)", arguments: [conversationID])
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO member(conversation_id, member_id, active, seen, read_sent_at, read_message_id)
                SELECT id, ?, 1, counted_total, last_sent_at, last_message_id FROM conversation WHERE id = ?
                """,
            arguments: [memberID, conversationID])
        try appendChange(.joined, conversation: conversationID, member: memberID, db)
        let mark = try String.fetchOne(db, sql: "SELECT last_message_id FROM conversation WHERE id = ?", arguments: [conversationID])
        return ReadState(readUpTo: mark, unreadCount: 0)
    }

    public func leave(member memberID: String, conversation conversationID: String) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE member SET active = 0 WHERE conversation_id = ? AND member_id = ? AND active = 1", arguments: [conversationID, memberID])
            guard db.changesCount > 0 else {
                throw StoreError(.notAMember, "'\(memberID)' is not a member of conversation '\(conversationID)'")
            }
            try Self.appendChange(.left, conversation: conversationID, member: memberID, db)
        }
    }
}
