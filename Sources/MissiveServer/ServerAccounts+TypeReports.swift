import MissiveWire
import Foundation
import GRDB

/// The types each member's client said it can draw (docs/SERVER.md, "Type reports"): the last report of each member,
/// whatever device sent it, in the accounts file. `type_report` holds when each member last reported, and
/// `type_report_entry` the types of that report, one row each, so that asking about one type reads one row a member.
extension ServerAccounts {
    /// Replaces `member`'s report with `types`, in one transaction, and returns it as kept.
    func replaceTypeReport(member: String, types: [ReportedType]) async throws(AccountError) -> TypeReport {
        let reportedAt = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            try await database.write { db in
                try db.execute(sql: "DELETE FROM type_report_entry WHERE member = ?", arguments: [member])
                try db.execute(
                    sql: "INSERT INTO type_report(member, reported_at) VALUES (?, ?) ON CONFLICT(member) DO UPDATE SET reported_at = excluded.reported_at",
                    arguments: [member, reportedAt])
                let insert = try db.cachedStatement(sql: "INSERT INTO type_report_entry(member, object_name, version) VALUES (?, ?, ?)")
                for type in types { try insert.execute(arguments: [member, type.objectName, type.version]) }
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
        return TypeReport(member: member, reportedAt: reportedAt, types: types.sorted { $0.objectName < $1.objectName })
    }

    /// `member`'s last report, its types sorted by objectName; `nil` when it never reported.
    func typeReport(member: String) async throws(AccountError) -> TypeReport? {
        do {
            return try await database.read { db -> TypeReport? in
                guard let reportedAt = try Int64.fetchOne(db, sql: "SELECT reported_at FROM type_report WHERE member = ?", arguments: [member]) else {
                    return nil
                }
                let types = try Row.fetchAll(
                    db, sql: "SELECT object_name, version FROM type_report_entry WHERE member = ? ORDER BY object_name", arguments: [member]
                ).map { ReportedType(objectName: $0[0], version: $0[1]) }
                return TypeReport(member: member, reportedAt: reportedAt, types: types)
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// What each of `members` reported about `objectName`: for each member that reported, when, and the version it
    /// draws the type with (`nil` when its report does not list the type). Members that never reported are absent.
    func typeReports(of members: [String], about objectName: String) async throws(AccountError) -> [String: (reportedAt: Int64, version: String?)] {
        do {
            return try await database.read { db in
                var found: [String: (reportedAt: Int64, version: String?)] = [:]
                for member in members {
                    guard let row = try Row.fetchOne(
                        db,
                        sql: """
                            SELECT r.reported_at, e.version FROM type_report r
                            LEFT JOIN type_report_entry e ON e.member = r.member AND e.object_name = ?
                            WHERE r.member = ?
                            """,
                        arguments: [objectName, member])
                    else { continue }
                    let reportedAt: Int64 = row[0]
                    let version: String? = row[1]
                    found[member] = (reportedAt, version)
                }
                return found
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }
}
