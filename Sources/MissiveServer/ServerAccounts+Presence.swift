import Foundation
import GRDB

/// Who is online on any instance of the server: the instances that share a data folder share its accounts file,
/// and each writes there which members have a live event-stream connection to it (table `presence`: instance,
/// member, how many connections, when it last said so, and until when that holds).
///
/// An instance writes a member's row as soon as the member's first connection opens or its last one closes, and
/// all its rows again every ``presenceHeartbeat`` (5 s). A row holds for ``presenceLifetime`` (three heartbeats,
/// 15 s) after it was written: the rows of an instance that died without a word (a crash, `kill -9`) stop counting
/// that long after its last heartbeat, and are deleted a minute later by any instance's heartbeat. An instance that
/// stops cleanly deletes its rows. The table is made by the accounts file's migrations (``ServerSchema``).
extension ServerAccounts {
    /// How often an instance writes all its rows again.
    static let presenceHeartbeat: Duration = .seconds(5)
    /// How long a row holds after it was written, in milliseconds: three heartbeats.
    static let presenceLifetime: Int64 = 15_000

    /// Records that `member` has `connections` live connections to `instance` (none: the row goes).
    func setPresence(instance: String, member: String, connections: Int) async throws(AccountError) {
        let now = Self.presenceNow()
        try await presenceWrite { db in
            if connections > 0 {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO presence(instance, member, connections, written_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                    arguments: [instance, member, connections, now, now + Self.presenceLifetime])
            } else {
                try db.execute(sql: "DELETE FROM presence WHERE instance = ? AND member = ?", arguments: [instance, member])
            }
        }
    }

    /// Writes all of `instance`'s rows again (`members`: each member connected to it, with its count of
    /// connections), and deletes the rows of any instance that expired more than a minute ago.
    func writeHeartbeat(instance: String, members: [String: Int]) async throws(AccountError) {
        let now = Self.presenceNow()
        try await presenceWrite { db in
            try db.execute(sql: "DELETE FROM presence WHERE instance = ? OR expires_at < ?", arguments: [instance, now - 60_000])
            let insert = try db.cachedStatement(
                sql: "INSERT INTO presence(instance, member, connections, written_at, expires_at) VALUES (?, ?, ?, ?, ?)")
            for (member, connections) in members where connections > 0 {
                try insert.execute(arguments: [instance, member, connections, now, now + Self.presenceLifetime])
            }
        }
    }

    /// Deletes every row of `instance`: it stops.
    func withdrawPresence(instance: String) async throws(AccountError) {
        try await presenceWrite { db in try db.execute(sql: "DELETE FROM presence WHERE instance = ?", arguments: [instance]) }
    }

    /// Those of `members` that an instance other than `instance` says are online now.
    func onlineElsewhere(_ members: [String], instance: String) async throws(AccountError) -> Set<String> {
        guard !members.isEmpty else { return [] }
        let now = Self.presenceNow()
        do {
            return try await database.read { db in
                var online = Set<String>()
                var start = 0
                while start < members.count {
                    let chunk = Array(members[start..<min(start + 500, members.count)])
                    let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                    var arguments = StatementArguments(chunk)
                    arguments += [instance, now]
                    for member in try String.fetchAll(
                        db, sql: "SELECT DISTINCT member FROM presence WHERE member IN (\(marks)) AND instance <> ? AND expires_at > ?",
                        arguments: arguments)
                    {
                        online.insert(member)
                    }
                    start += chunk.count
                }
                return online
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    private func presenceWrite(_ body: @escaping @Sendable (Database) throws -> Void) async throws(AccountError) {
        do {
            try await database.write(body)
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    private static func presenceNow() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }
}
