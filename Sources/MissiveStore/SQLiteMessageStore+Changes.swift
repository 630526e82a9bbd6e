import Foundation
import GRDB
import Missive

/// The change feed: a table of changes whose positions grow in commit order, since SQLite serializes writes.
extension SQLiteMessageStore {
    public func changes(after position: Int64, limit: Int) async throws(StoreError) -> [StoreChange] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MessageColumn.selection), message.seq, change.position, change.kind, change.conversation_id,
                        change.message_id, change.member_id, change.envelope, change.persistence
                    FROM change LEFT JOIN message ON message.id = change.message_id AND change.kind IN ('stored', 'edited')
                    WHERE change.position > ? ORDER BY change.position LIMIT ?
                    """,
                arguments: [position, max(0, limit)]
            ).compactMap { row in
                let end = MessageColumn.end
                guard let kind = StoreChange.Kind(rawValue: row[end + 2]) else { return nil }
                if kind == .transient {
                    let raw = (row[end + 7] as Int64?).flatMap { UInt32(exactly: $0) }
                    guard let envelope = row[end + 6] as Data?, let persistence = raw.flatMap(Persistence.init(rawValue:)) else { return nil }
                    return StoreChange(
                        position: row[end + 1], transient: Array(envelope), persistence: persistence, conversationID: row[end + 3],
                        messageID: (row[end + 4] as String?) ?? "", memberID: (row[end + 5] as String?) ?? "")
                }
                let message = (row[end] as Int64?) == nil ? nil : self.storedMessage(row)
                return StoreChange(
                    position: row[end + 1], kind: kind, conversationID: row[end + 3], messageID: row[end + 4], memberID: row[end + 5],
                    message: message)
            }
        }
    }

    public func lastChangePosition() async throws(StoreError) -> Int64 {
        try await read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(position), 0) FROM change") ?? 0 }
    }

    /// Polls the feed's newest position every 20 ms until it passes `position` or `timeout` has passed: the
    /// writers may be other processes, which SQLite cannot signal.
    public func waitForChanges(after position: Int64, timeout: Duration) async throws(StoreError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if try await lastChangePosition() > position { return }
            do {
                try await Task.sleep(for: min(.milliseconds(20), deadline - clock.now))
            } catch {
                return  // cancelled: the follower stops.
            }
        }
    }

    /// Appends the transient change, after removing those older than ``StoreChange/transientLifetime``, in one
    /// write.
    @discardableResult
    public func publishTransient(_ message: IncomingMessage) async throws(StoreError) -> Int64 {
        let envelope = message.message.envelope
        guard message.isTransient else {
            throw StoreError(.conflict, "\(envelope.id): its persistence says to store it, not to publish it", path: path)
        }
        let bytes = Data(message.envelopeBytes)
        let persistence = Int64(message.message.persistence.rawValue)
        return try await write { db in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try db.cachedStatement(sql: "DELETE FROM change WHERE kind = 'transient' AND published_at < ?")
                .execute(arguments: [now - StoreChange.transientLifetime])
            try db.cachedStatement(
                sql: """
                    INSERT INTO change(kind, conversation_id, message_id, member_id, envelope, persistence, published_at)
                    VALUES ('transient', ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [envelope.conversationID, envelope.id, envelope.senderID, bytes, persistence, now])
            return db.lastInsertedRowID
        }
    }
}
