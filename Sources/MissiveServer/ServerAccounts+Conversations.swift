import Foundation
import GRDB

/// Which conversation ids have been made through the server, in the accounts file (table `conversation_claim`).
///
/// Making a conversation is a check (the id is free) followed by writes (each member joins). Instances that share
/// a data folder make that one step by claiming the id here first: the claim is a single `INSERT` into a table
/// whose key is the id, so of two instances that make the same id at once exactly one wins, and the other answers
/// `409` before anyone joins. Ids made before this table existed, or through `missive store members`, are not
/// claimed: the server still checks the store for them.
extension ServerAccounts {
    /// Claims the conversation id `id` for `member`: `true` when this call made the claim, `false` when the id was
    /// claimed before (by anyone, on any instance that shares this file).
    func claimConversation(_ id: String, by member: String) async throws(AccountError) -> Bool {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            return try await database.write { db in
                try db.execute(
                    sql: "INSERT OR IGNORE INTO conversation_claim(id, member, claimed_at) VALUES (?, ?, ?)", arguments: [id, member, now])
                return db.changesCount == 1
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// Gives up a claim this instance made for a conversation it then failed to make, so that the id can be used.
    func releaseConversationClaim(_ id: String, by member: String) async throws(AccountError) {
        do {
            try await database.write { db in
                try db.execute(sql: "DELETE FROM conversation_claim WHERE id = ? AND member = ?", arguments: [id, member])
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }
}
