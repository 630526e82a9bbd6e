import GRDB

/// The change feed: a table of changes whose positions grow in commit order, since SQLite serializes writes.
extension SQLiteMessageStore {
    public func changes(after position: Int64, limit: Int) async throws(StoreError) -> [StoreChange] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MessageColumn.selection), message.seq, change.position, change.kind, change.conversation_id,
                        change.message_id, change.member_id
                    FROM change LEFT JOIN message ON message.id = change.message_id AND change.kind IN ('stored', 'edited')
                    WHERE change.position > ? ORDER BY change.position LIMIT ?
                    """,
                arguments: [position, max(0, limit)]
            ).compactMap { row in
                let end = MessageColumn.end
                guard let kind = StoreChange.Kind(rawValue: row[end + 2]) else { return nil }
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
}
