/// One search result.
public struct SearchHit: Sendable, Hashable {
    /// The message found.
    public var message: StoredMessage
    /// The match's rank: lower is better (SQLite's bm25, negated scores).
    public var rank: Double
    /// The searchable words around the first match, with the match between `[` and `]`.
    public var snippet: String

    /// Creates a hit.
    public init(message: StoredMessage, rank: Double, snippet: String) {
        self.message = message
        self.rank = rank
        self.snippet = snippet
    }
}
