import Missive
import MissiveStore
import NIOCore
import PostgresNIO

/// Reading a `StoredMessage` from a row whose columns are `MessageColumn`'s (the list the SQLite store reads too), and what
/// a message's row holds: its words, its search vector, and the text PostgreSQL can keep.
enum MessageColumns {
    /// The message columns as a SELECT lists them, each qualified by its table: the store's one list.
    static let selection = MessageColumn.selection

    /// How many columns ``selection`` lists: the position of the first column a query adds after them.
    static let count = MessageColumn.end

    /// A stored message from a row that starts with the columns of ``selection``, each read at its column's
    /// position; its `StoredMessage/countsAsUnread` for `reader` (`nil`: for any member but its sender).
    static func storedMessage(_ row: PostgresRow, reader: String?) throws -> StoredMessage {
        let columns = row.makeRandomAccess()
        func at<T: PostgresDecodable>(_ column: MessageColumn, _ type: T.Type) throws -> T { try columns[column.rawValue].decode(type) }
        let senderID = try at(.senderID, String.self)
        let persistence = try at(.persistence, Int.self)
        return StoredMessage(
            id: try at(.id, String.self), conversationID: try at(.conversationID, String.self), senderID: senderID, sentAt: try at(.sentAt, Int64.self),
            objectName: try at(.objectName, String.self), businessID: try at(.businessID, String?.self), isKnown: try at(.known, Bool.self),
            digest: try at(.digest, String.self), persistence: Persistence(rawValue: UInt32(truncatingIfNeeded: persistence)) ?? .persisted,
            countsAsUnread: try at(.counted, Bool.self) && reader != senderID,
            searchableWords: StoreRules.splitWords(try at(.words, String.self)),
            parentID: try at(.parentID, String?.self), threadRootID: try at(.rootID, String?.self),
            replyCount: try at(.replyCount, Int.self), reason: try at(.reason, String?.self),
            envelopeBytes: Array(try at(.envelope, ByteBuffer.self).readableBytesView))
    }

    // MARK: Search vectors

    /// PostgreSQL's largest lexeme position; later tokens all take it.
    static let maxPosition = 16_383
    /// PostgreSQL's longest lexeme, in bytes.
    static let maxLexemeBytes = 2_046

    /// A `tsvector` literal of tokens, each at its position (its offset + 1): `'cafe':1 'deja':2,5`.
    static func vector(_ tokens: [String]) -> String {
        var positions: [String: [Int]] = [:]
        var order: [String] = []
        for (offset, token) in tokens.enumerated() {
            let lexeme = lexemeText(token)
            if positions[lexeme] == nil { order.append(lexeme) }
            positions[lexeme, default: []].append(min(offset + 1, maxPosition))
        }
        return order.map { lexeme in
            quoted(lexeme) + ":" + positions[lexeme, default: []].map(String.init).joined(separator: ",")
        }.joined(separator: " ")
    }

    /// A `tsquery` literal that matches what SQLite's MATCH expression of `query` matches: each term a phrase
    /// (`<->`) of its tokens, the last one a prefix (`:*`) where SQLite's is, all terms required (`&`). `nil`
    /// when a term has no token at all (SQLite then finds nothing).
    static func tsquery(_ query: SearchQuery) throws -> String? {
        let phrases = query.matchPhrases
        let tokenized = try SearchQuery.indexTokens(of: phrases.map(\.phrase))
        var terms: [String] = []
        for (phrase, tokens) in zip(phrases, tokenized) {
            guard !tokens.isEmpty else { return nil }
            var parts = tokens.map { quoted(lexemeText($0)) }
            if phrase.isPrefix { parts[parts.count - 1] += ":*" }
            terms.append(parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " <-> ") + ")")
        }
        return terms.joined(separator: " & ")
    }

    /// A token as PostgreSQL keeps it: at most ``maxLexemeBytes`` bytes, cut on a character boundary.
    private static func lexemeText(_ token: String) -> String {
        guard token.utf8.count > maxLexemeBytes else { return token }
        var cut = ""
        for character in token {
            guard cut.utf8.count + character.utf8.count <= maxLexemeBytes else { break }
            cut.append(character)
        }
        return cut
    }

    /// A lexeme quoted for a `tsvector` or `tsquery` literal.
    private static func quoted(_ lexeme: String) -> String {
        // Most lexemes hold neither character: they are copied as they are (a generic `replacing` per lexeme was
        // the largest single cost of the PostgreSQL ingest's own work).
        guard lexeme.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "'") }) else { return "'" + lexeme + "'" }
        // By scalar, as the server reads the literal: a backslash or quote followed by a combining mark is still one.
        var quoted = String.UnicodeScalarView()
        quoted.append("'")
        for scalar in lexeme.unicodeScalars {
            if scalar == "\\" || scalar == "'" { quoted.append(scalar) }
            quoted.append(scalar)
        }
        quoted.append("'")
        return String(quoted)
    }
}

extension String {
    /// The text with every U+0000 (which PostgreSQL's text cannot hold) replaced.
    func replacingNUL(with replacement: String) -> String {
        utf8.contains(0) ? replacing("\u{0}", with: replacement) : self
    }
}
