import GRDB

/// Full-text search over the searchable words (see ``SearchQuery``).
extension SQLiteMessageStore {
    public func search(_ query: SearchQuery, member memberID: String?, conversation conversationID: String?, limit: Int) async throws(StoreError)
        -> [SearchHit]
    {
        let expression = query.matchExpression
        return try await read { db in
            let rows: [Row]
            do {
                // Ranked inside the index first, so that only the hits kept are read from the messages (a
                // common word matches a fifth of them). Equal ranks: the message stored last first.
                // A member's search is not ranked by bm25: FTS5 weighs each word by how many messages of the whole
                // store hold it, so the order of a member's hits would tell how common a word is in conversations
                // the member is not in. Its hits all rank 0, newest first.
                rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(MessageColumn.selection), hit.score
                        FROM (
                            SELECT rowid, CASE WHEN ?4 IS NULL THEN bm25(message_search) ELSE 0.0 END AS score FROM message_search
                            WHERE message_search MATCH ?1
                                AND (?2 IS NULL OR rowid IN (SELECT seq FROM message WHERE conversation_id = ?2))
                                AND (?4 IS NULL OR EXISTS (
                                    SELECT 1 FROM message JOIN member ON member.conversation_id = message.conversation_id
                                    WHERE message.seq = message_search.rowid AND member.member_id = ?4 AND member.active = 1))
                            ORDER BY score, rowid DESC
                            LIMIT ?3
                        ) AS hit
                        JOIN message ON message.seq = hit.rowid
                        ORDER BY hit.score, message.seq DESC
                        """,
                    arguments: [expression, conversationID, max(0, limit), memberID])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
                throw StoreError(.malformedQuery, "the query '\(query.description)' cannot be searched: \(error.message ?? "\(error)")")
            }
            return rows.map { row in
                let message = self.storedMessage(row)
                return SearchHit(message: message, rank: row[MessageColumn.end], snippet: query.snippet(of: message.searchableWords))
            }
        }
    }
}
