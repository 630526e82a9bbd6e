import Foundation
import GRDB
import Missive

/// The messages isolated plugins failed on, in the `plugin_failure` table.
extension SQLiteMessageStore {
    public func recordPluginFailures(_ failures: [PluginFailure]) async throws(StoreError) {
        guard !failures.isEmpty else { return }
        try await write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO plugin_failure(plugin_sha256, object_name, content_sha256, operation, reason, plugin_file, failed_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
            for failure in failures {
                try statement.execute(arguments: [
                    failure.key.pluginSHA256, failure.key.objectName, failure.key.contentSHA256, failure.key.operation.rawValue, failure.reason,
                    failure.file, StoreRules.milliseconds(failure.date),
                ])
            }
        }
    }

    public func pluginFailures() async throws(StoreError) -> [PluginFailure] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT plugin_sha256, object_name, content_sha256, operation, reason, plugin_file, failed_at FROM plugin_failure
                    ORDER BY failed_at, plugin_sha256, object_name, content_sha256, operation
                    """
            ).map { row in
                PluginFailure(
                    key: PluginFailure.Key(
                        pluginSHA256: row[0], objectName: row[1], contentSHA256: row[2], operation: PluginFailure.Operation(rawValue: row[3])),
                    reason: row[4], file: row[5], date: StoreRules.date(milliseconds: row[6]))
            }
        }
    }

    @discardableResult
    public func forgetPluginFailures(pluginSHA256s: Set<String>?) async throws(StoreError) -> Int {
        try await write { db in
            guard let pluginSHA256s else {
                try db.execute(sql: "DELETE FROM plugin_failure")
                return db.changesCount
            }
            var forgotten = 0
            for sha256 in pluginSHA256s {
                try db.execute(sql: "DELETE FROM plugin_failure WHERE plugin_sha256 = ?", arguments: [sha256])
                forgotten += db.changesCount
            }
            return forgotten
        }
    }
}
