import Missive
import MissiveStore
import PostgresNIO

/// The messages isolated plugins failed on, in the `plugin_failure` table that every process on the store shares.
extension PostgresMessageStore {
    public func recordPluginFailures(_ failures: [PluginFailure]) async throws(StoreError) {
        guard !failures.isEmpty else { return }
        try await transaction { transaction in
            for failure in failures {
                try await transaction.query(
                    """
                    INSERT INTO plugin_failure(plugin_sha256, object_name, content_sha256, operation, reason, plugin_file, failed_at)
                    VALUES (\(failure.key.pluginSHA256), \(failure.key.objectName.replacingNUL(with: "\u{FFFD}")), \(failure.key.contentSHA256),
                        \(failure.key.operation.rawValue.replacingNUL(with: "\u{FFFD}")), \(failure.reason.replacingNUL(with: "\u{FFFD}")),
                        \(failure.file.replacingNUL(with: "\u{FFFD}")), \(StoreRules.milliseconds(failure.date)))
                    ON CONFLICT (plugin_sha256, object_name, content_sha256, operation)
                    DO UPDATE SET reason = excluded.reason, plugin_file = excluded.plugin_file, failed_at = excluded.failed_at
                    """)
            }
        }
    }

    public func pluginFailures() async throws(StoreError) -> [PluginFailure] {
        try await read { transaction in
            try await transaction.query(
                """
                SELECT plugin_sha256, object_name, content_sha256, operation, reason, plugin_file, failed_at FROM plugin_failure
                ORDER BY failed_at, plugin_sha256, object_name, content_sha256, operation
                """
            ).map { row in
                let (plugin, objectName, content, operation, reason, file, failedAt) = try row.decode(
                    (String, String, String, String, String, String, Int64).self)
                return PluginFailure(
                    key: PluginFailure.Key(
                        pluginSHA256: plugin, objectName: objectName, contentSHA256: content, operation: PluginFailure.Operation(rawValue: operation)),
                    reason: reason, file: file, date: StoreRules.date(milliseconds: failedAt))
            }
        }
    }

    @discardableResult
    public func forgetPluginFailures(pluginSHA256s: Set<String>?) async throws(StoreError) -> Int {
        try await transaction { transaction in
            guard let pluginSHA256s else {
                return try await transaction.query("WITH gone AS (DELETE FROM plugin_failure RETURNING 1) SELECT COUNT(*)::bigint FROM gone")[0]
                    .decode(Int.self)
            }
            var forgotten = 0
            for sha256 in pluginSHA256s.sorted() {
                forgotten += try await transaction.query(
                    "WITH gone AS (DELETE FROM plugin_failure WHERE plugin_sha256 = \(sha256) RETURNING 1) SELECT COUNT(*)::bigint FROM gone"
                )[0].decode(Int.self)
            }
            return forgotten
        }
    }
}
