import MissiveStore
import PostgresNIO

/// Full-text search over the searchable words (see `SearchQuery`): a `tsquery` of SQLite's tokens against the
/// `search` vectors and their GIN index.
extension PostgresMessageStore {
    public func search(_ query: SearchQuery, member memberID: String?, conversation conversationID: String?, limit: Int) async throws(StoreError)
        -> [SearchHit]
    {
        let reader = self.reader
        let tsquery: String?
        do {
            tsquery = try MessageColumns.tsquery(query)
        } catch {
            throw StoreError(.database, "cannot tokenize the query '\(query.description)': \(error)", path: location)
        }
        // A term without a token SQLite indexes matches no message there either.
        guard let tsquery, limit > 0 else { return [] }
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(tsquery)
        var sql = """
            SELECT \(MessageColumns.selection), (-ts_rank(message.search, $1::tsquery))::float8 AS score
            FROM message WHERE message.search @@ $1::tsquery
            """
        if let conversationID {
            bindings.append(conversationID)
            sql += " AND message.conversation_id = $\(bindings.count)"
        }
        if let memberID {
            bindings.append(memberID)
            sql += " AND message.conversation_id IN (SELECT conversation_id FROM member WHERE member_id = $\(bindings.count) AND active)"
        }
        bindings.append(limit)
        // Equal ranks: the message stored last first, as on SQLite.
        sql += " ORDER BY score, message.seq DESC LIMIT $\(bindings.count)"
        let statement = PostgresQuery(unsafeSQL: sql, binds: bindings)
        return try await read { transaction in
            try await transaction.query(statement).map { row in
                let message = try MessageColumns.storedMessage(row, reader: reader)
                return SearchHit(
                    message: message, rank: try row.makeRandomAccess()[MessageColumns.count].decode(Double.self),
                    snippet: query.snippetText(of: message.searchableWords))
            }
        }
    }
}
