import Missive
import MissiveStore
import NIOCore
import PostgresNIO

/// The columns of the `message` table a `StoredMessage` is read from, in the order of ``selection``, and what
/// a message's row holds: its words, its search vector, and the text PostgreSQL can keep.
enum MessageColumns {
    /// The columns as a SELECT lists them, each qualified by its table.
    static let selection = [
        "id", "conversation_id", "sender_id", "sent_at", "object_name", "business_id", "known", "digest", "persistence", "counted", "words",
        "parent_id", "root_id", "reply_count", "reason", "envelope",
    ].map { "message.\($0)" }.joined(separator: ", ")

    /// How many columns ``selection`` lists: the position of the first column a query adds after them.
    static let count = 16

    /// A stored message from a row that starts with the columns of ``selection``; its
    /// `StoredMessage/countsAsUnread` for `reader` (`nil`: for any member but its sender).
    static func storedMessage(_ row: PostgresRow, reader: String?) throws -> StoredMessage {
        let (id, conversationID, senderID, sentAt, objectName, businessID, known, digest, persistence, counted, words) = try row.decode(
            (String, String, String, Int64, String, String?, Bool, String, Int, Bool, String).self)
        let columns = row.makeRandomAccess()
        let envelope = try columns[15].decode(ByteBuffer.self)
        return StoredMessage(
            id: id, conversationID: conversationID, senderID: senderID, sentAt: sentAt, objectName: objectName, businessID: businessID,
            isKnown: known, digest: digest, persistence: Persistence(rawValue: UInt32(truncatingIfNeeded: persistence)) ?? .persisted,
            countsAsUnread: counted && reader != senderID,
            searchableWords: StoreRules.splitWords(words),
            parentID: try columns[11].decode(String?.self), threadRootID: try columns[12].decode(String?.self),
            replyCount: try columns[13].decode(Int.self), reason: try columns[14].decode(String?.self),
            envelopeBytes: Array(envelope.readableBytesView))
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
