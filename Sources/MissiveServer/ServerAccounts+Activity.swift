import GRDB

extension ServerAccounts {
    /// Whether `member` still has a token that is not revoked: a live connection of a member whose tokens were all
    /// revoked (`missive serve users revoke`, from any process) is closed.
    func hasValidToken(member: String) async throws(AccountError) -> Bool {
        do {
            return try await database.read { db in
                try Bool.fetchOne(db, sql: "SELECT 1 FROM token WHERE member = ? AND revoked_at IS NULL LIMIT 1", arguments: [member]) ?? false
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }
}
