import MissiveStore
import PostgresNIO

/// Members and read marks: who belongs to a conversation, how far each has read, and the counters that follow.
///
/// Each call locks the conversation's row first (as ingest does when it updates the counters), so that a mark
/// that moves and a message that arrives at the same time are counted once, in one order or the other.
extension PostgresMessageStore {
    @discardableResult
    public func markRead(member memberID: String, conversation conversationID: String, upTo messageID: String) async throws(StoreError) -> ReadState {
        try await transaction { transaction in
            let total = try await transaction.query("SELECT counted_total FROM conversation WHERE id = \(conversationID) FOR UPDATE")
                .first.map { try $0.decode(Int.self) }
            guard
                let sentAt = try await transaction.query(
                    "SELECT sent_at FROM message WHERE id = \(messageID) AND conversation_id = \(conversationID)"
                ).first.map({ try $0.decode(Int64.self) }), let total
            else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored in conversation '\(conversationID)'")
            }
            guard
                let member = try await transaction.query(
                    """
                    SELECT read_message_id, (read_sent_at, read_message_id) >= (\(sentAt), \(messageID)), seen FROM member
                    WHERE conversation_id = \(conversationID) AND member_id = \(memberID) AND active
                    """
                ).first.map({ try $0.decode((String?, Bool?, Int).self) })
            else {
                throw StoreError(.notAMember, "'\(memberID)' is not a member of conversation '\(conversationID)'")
            }
            if let mark = member.0, member.1 == true {
                return ReadState(readUpTo: mark, unreadCount: total - member.2)
            }
            // What is still unread after the new mark: an index range over the counted messages only.
            let unread = try await transaction.query(
                """
                SELECT COUNT(*)::bigint FROM message
                WHERE conversation_id = \(conversationID) AND counted
                    AND (sent_at, id) > (\(sentAt), \(messageID)) AND sender_id <> \(memberID)
                """
            )[0].decode(Int.self)
            try await transaction.query(
                """
                UPDATE member SET read_sent_at = \(sentAt), read_message_id = \(messageID), seen = \(total - unread)
                WHERE conversation_id = \(conversationID) AND member_id = \(memberID)
                """)
            transaction.recordChange(.read, conversation: conversationID, message: messageID, member: memberID)
            return ReadState(readUpTo: messageID, unreadCount: unread)
        }
    }

    @discardableResult
    public func join(member memberID: String, conversation conversationID: String) async throws(StoreError) -> ReadState {
        try await transaction { transaction in
            // Creates the conversation if it has no message yet, and locks its row either way.
            let (total, lastSentAt, lastID) = try await transaction.query(
                """
                INSERT INTO conversation AS c (id) VALUES (\(conversationID))
                ON CONFLICT (id) DO UPDATE SET id = c.id
                RETURNING counted_total, last_sent_at, last_message_id
                """
            )[0].decode((Int, Int64?, String?).self)
            if let state = try await transaction.query(
                "SELECT read_message_id, seen FROM member WHERE conversation_id = \(conversationID) AND member_id = \(memberID) AND active"
            ).first.map({ try $0.decode((String?, Int).self) }) {
                return ReadState(readUpTo: state.0, unreadCount: total - state.1)
            }
            try await transaction.query(
                """
                INSERT INTO member AS m (conversation_id, member_id, active, seen, read_sent_at, read_message_id)
                VALUES (\(conversationID), \(memberID), true, \(total), \(lastSentAt), \(lastID))
                ON CONFLICT (conversation_id, member_id) DO UPDATE SET
                    active = true, seen = excluded.seen, read_sent_at = excluded.read_sent_at, read_message_id = excluded.read_message_id
                """)
            transaction.recordChange(.joined, conversation: conversationID, member: memberID)
            return ReadState(readUpTo: lastID, unreadCount: 0)
        }
    }

    public func leave(member memberID: String, conversation conversationID: String) async throws(StoreError) {
        try await transaction { transaction in
            let left = try await transaction.query(
                """
                UPDATE member SET active = false WHERE conversation_id = \(conversationID) AND member_id = \(memberID) AND active
                RETURNING 1
                """
            ).count
            guard left > 0 else {
                throw StoreError(.notAMember, "'\(memberID)' is not a member of conversation '\(conversationID)'")
            }
            transaction.recordChange(.left, conversation: conversationID, member: memberID)
        }
    }
}
