import Foundation
import GRDB

/// `none` messages kept for the members who were offline when they were sent, as RongCloud's server keeps them:
/// they are not history (the store never sees them), only a delivery owed. A member's next event-stream
/// connection receives them, oldest first, and they are forgotten. They wait in the accounts file (table
/// `pending`), at most ``pendingLimit`` per member (the oldest give way) and ``pendingLifetime`` long.
extension ServerAccounts {
    /// The most `none` messages kept for one member.
    static let pendingLimit = 1_000
    /// How long a `none` message waits for its member: seven days.
    static let pendingLifetime: Int64 = 7 * 24 * 3600 * 1000

    /// Keeps `envelope`, sent in `conversation`, for each of `members`.
    func keepPending(_ envelope: [UInt8], conversation: String, for members: [String]) async throws(AccountError) {
        guard !members.isEmpty else { return }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            try await database.write { db in
                for member in members {
                    try db.execute(
                        sql: "INSERT INTO pending(member, conversation, envelope, kept_at) VALUES (?, ?, ?, ?)",
                        arguments: [member, conversation, Data(envelope), now])
                    try db.execute(
                        sql: """
                            DELETE FROM pending WHERE member = ?1 AND (kept_at < ?2 OR sequence <= (
                                SELECT sequence FROM pending WHERE member = ?1 ORDER BY sequence DESC LIMIT 1 OFFSET ?3))
                            """,
                        arguments: [member, now - Self.pendingLifetime, Self.pendingLimit])
                }
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// The `none` messages kept for `member` (conversation and envelope, oldest first), which are forgotten.
    func takePending(for member: String) async throws(AccountError) -> [(conversation: String, envelope: [UInt8])] {
        let oldest = Int64(Date().timeIntervalSince1970 * 1000) - Self.pendingLifetime
        do {
            return try await database.write { db in
                let rows = try Row.fetchAll(
                    db, sql: "SELECT conversation, envelope FROM pending WHERE member = ? AND kept_at >= ? ORDER BY sequence",
                    arguments: [member, oldest])
                try db.execute(sql: "DELETE FROM pending WHERE member = ?", arguments: [member])
                return rows.map { row in (row[0], Array(row[1] as Data)) }
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }
}
