import Foundation
import GRDB

/// What the full-text index holds and how a query is matched against it.
///
/// The index uses SQLite's `unicode61` tokenizer with `remove_diacritics 2`, which folds case and Latin
/// diacritics (`Café` matches `cafe`). That tokenizer keeps a run of Chinese or Japanese characters as one
/// token, so a word inside a sentence (`北京` in `我明天去北京出差`) could never match. SQLite's `trigram`
/// tokenizer finds substrings, but only of three characters or more, and most Chinese words are two
/// characters long. So the store splits every run of CJK characters (Han, Hiragana, Katakana, Hangul)
/// into overlapping pairs before indexing, plus the run's last character alone: `去北京出差` becomes
/// `去北 北京 京出 出差 差`. A query's run becomes the same pairs, matched as a phrase, so any substring of
/// two characters or more matches exactly where it occurs; a single character matches as a prefix of a
/// pair. Other text is indexed as written. Both sides are first put in Unicode compatibility form
/// (NFKC), so full-width letters match their ASCII forms.
enum SearchText {
    /// The text indexed for a message's searchable words.
    static func document(_ words: [String]) -> String {
        var output = ""
        for word in words {
            if !output.isEmpty { output.append(" ") }
            append(compatibilityForm(word), to: &output, trailingSingle: true)
        }
        return output.utf8.contains(0) ? output.replacingOccurrences(of: "\u{0}", with: " ") : output
    }

    /// The text in Unicode compatibility form (NFKC); ASCII text, which NFKC leaves as it is, is not copied.
    static func compatibilityForm(_ text: String) -> String {
        text.utf8.allSatisfy { $0 < 0x80 } ? text : text.precomposedStringWithCompatibilityMapping
    }

    /// Appends `text` with each CJK run split into pairs; `trailingSingle` adds each run's last character
    /// alone, as documents have it. A query leaves it out when its run ends the term, where the document
    /// may go on with more characters.
    static func append(_ text: String, to output: inout String, trailingSingle: Bool) {
        // Most text has no CJK character (none below U+1100): it is indexed as written.
        guard text.utf8.contains(where: { $0 >= 0xE1 }), text.unicodeScalars.contains(where: isCJK) else {
            output.append(text)
            return
        }
        var run: [Unicode.Scalar] = []
        func flush(last: Bool) {
            defer { run.removeAll(keepingCapacity: true) }
            guard !run.isEmpty else { return }
            output.append(" ")
            if run.count == 1 {
                output.unicodeScalars.append(run[0])
            } else {
                for index in 0..<(run.count - 1) {
                    if index > 0 { output.append(" ") }
                    output.unicodeScalars.append(run[index])
                    output.unicodeScalars.append(run[index + 1])
                }
                if trailingSingle || !last {
                    output.append(" ")
                    output.unicodeScalars.append(run[run.count - 1])
                }
            }
            output.append(" ")
        }
        for scalar in text.unicodeScalars {
            if isCJK(scalar) {
                run.append(scalar)
            } else {
                flush(last: false)
                output.unicodeScalars.append(scalar)
            }
        }
        flush(last: true)
    }

    /// Whether a code point belongs to a script written without spaces between words (or, for Hangul,
    /// with particles joined to words): Han, Hiragana, Katakana, Hangul, and their extensions.
    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF,  // Hiragana, Katakana
            0x31F0...0x31FF,  // Katakana phonetic extensions
            0x3400...0x4DBF,  // CJK extension A
            0x4E00...0x9FFF,  // CJK unified ideographs
            0xF900...0xFAFF,  // CJK compatibility ideographs
            0x1100...0x11FF, 0x3130...0x318F, 0xAC00...0xD7AF,  // Hangul
            0x20000...0x3134F:  // CJK extensions B to G
            true
        default:
            false
        }
    }
}

/// A search query: words and quoted phrases that must all match, each word optionally a prefix.
///
/// The grammar: terms separated by white space; a term is a word, or a phrase between double quotes
/// (`"lunch plans"`); a word or phrase followed by `*` matches as a prefix (`sush*`). Case, Latin
/// diacritics and full-width forms are ignored; Chinese and Japanese text matches anywhere inside a
/// sentence. A query without words, or with an unbalanced quote, is refused.
public struct SearchQuery: Sendable, Hashable, CustomStringConvertible {
    /// One term of a query.
    public struct Term: Sendable, Hashable {
        /// The words, as written (without quotes or `*`).
        public var text: String
        /// Whether the term matches as a prefix.
        public var isPrefix: Bool
    }

    /// The terms, all of which must match.
    public let terms: [Term]

    /// The most terms a query may have (after repeated ones are collapsed).
    public static let maxTerms = 32

    /// The longest query, in bytes of UTF-8.
    public static let maxBytes = 1_024

    /// The query as written.
    public let description: String

    /// Parses a query.
    ///
    /// - Throws: ``StoreError/Code/malformedQuery`` naming the problem.
    public init(parsing query: String) throws(StoreError) {
        guard query.utf8.count <= Self.maxBytes else {
            throw StoreError(.malformedQuery, "the query is \(query.utf8.count) bytes long; at most \(Self.maxBytes) are searched for")
        }
        var terms: [Term] = []
        var characters = Array(query)[...]
        var position = 0
        func isSpace(_ character: Character) -> Bool { character.isWhitespace }
        while let first = characters.first {
            if isSpace(first) {
                characters.removeFirst()
                position += 1
                continue
            }
            var text = ""
            if first == "\"" {
                let start = position
                characters.removeFirst()
                position += 1
                guard let close = characters.firstIndex(of: "\"") else {
                    throw StoreError(.malformedQuery, "the quote at character \(start + 1) of the query is never closed")
                }
                text = String(characters[characters.startIndex..<close])
                position += close - characters.startIndex + 1
                characters = characters[(close + 1)...]
            } else {
                while let next = characters.first, !isSpace(next), next != "\"" {
                    text.append(next)
                    characters.removeFirst()
                    position += 1
                }
            }
            var isPrefix = false
            if characters.first == "*" {
                isPrefix = true
                characters.removeFirst()
                position += 1
            } else if first != "\"", text.hasSuffix("*") {
                isPrefix = true
                text.removeLast()
            }
            if text.contains(where: { $0.isLetter || $0.isNumber }) {
                terms.append(Term(text: text, isPrefix: isPrefix))
            }
        }
        guard !terms.isEmpty else {
            throw StoreError(.malformedQuery, "the query has no words to search for")
        }
        // A term given twice matches the same messages once: repeating it only costs (FTS5's phrase matching
        // grows with each copy).
        var seen: Set<String> = []
        terms = terms.filter { seen.insert(SearchText.compatibilityForm($0.text).lowercased() + ($0.isPrefix ? "*" : "")).inserted }
        guard terms.count <= Self.maxTerms else {
            throw StoreError(.malformedQuery, "the query has \(terms.count) different terms; at most \(Self.maxTerms) are searched for")
        }
        self.terms = terms
        self.description = query
    }

    /// The FTS5 match expression: each term a quoted phrase, CJK runs split as the index splits them.
    var matchExpression: String {
        terms.map { term in
            let folded = SearchText.compatibilityForm(term.text)
            var phrase = ""
            SearchText.append(folded, to: &phrase, trailingSingle: false)
            // A term ending in one CJK character matches it as the first of a pair, or alone.
            let endsInSingleCJK: Bool = {
                let scalars = Array(folded.unicodeScalars)
                guard let last = scalars.last, SearchText.isCJK(last) else { return false }
                return scalars.count == 1 || !SearchText.isCJK(scalars[scalars.count - 2])
            }()
            let quoted = "\"" + phrase.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            return term.isPrefix || endsInSingleCJK ? quoted + " *" : quoted
        }.joined(separator: " AND ")
    }

    /// The first place `term` occurs in `text`; with `atWordStart`, only where a word begins (a prefix term
    /// matches words that start with it).
    private static func firstMatch(of term: String, in text: String, options: String.CompareOptions, atWordStart: Bool) -> Range<String.Index>? {
        var searchStart = text.startIndex
        while let range = text.range(of: term, options: options, range: searchStart..<text.endIndex) {
            if !atWordStart || range.lowerBound == text.startIndex || !text[text.index(before: range.lowerBound)].isLetter && !text[text.index(before: range.lowerBound)].isNumber {
                return range
            }
            searchStart = range.upperBound
        }
        return nil
    }

    /// The searchable words around the first place a term occurs, with the match between `[` and `]`;
    /// the start of the words when no term occurs as written.
    func snippet(of words: [String], radius: Int = 32) -> String {
        let text = words.joined(separator: " ").split(whereSeparator: { $0.isNewline }).joined(separator: " ")
        let options: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive, .widthInsensitive]
        for term in terms {
            let letters = term.text.trimmingCharacters(in: CharacterSet.alphanumerics.inverted)
            guard !letters.isEmpty, let range = Self.firstMatch(of: letters, in: text, options: options, atWordStart: term.isPrefix) else { continue }
            let before = text[text.startIndex..<range.lowerBound].suffix(radius)
            let after = text[range.upperBound...].prefix(radius)
            let lead = before.startIndex > text.startIndex ? "…" : ""
            let tail = after.endIndex < text.endIndex ? "…" : ""
            return lead + before + "[" + text[range] + "]" + after + tail
        }
        return text.count > radius * 2 ? String(text.prefix(radius * 2)) + "…" : text
    }
}

extension SearchQuery {
    /// The text SQLite's store indexes for a message's searchable words (its `search_text` column): CJK runs
    /// split into pairs, compatibility forms applied.
    package static func indexedText(of words: [String]) -> String {
        SearchText.document(words)
    }

    /// The searchable words around the first place a term occurs, with the match between `[` and `]`, as
    /// ``SearchHit/snippet`` has them on every backend.
    package func snippetText(of words: [String]) -> String {
        snippet(of: words)
    }

    /// The tokens SQLite's search index makes of each text, in order: what `unicode61` with
    /// `remove_diacritics 2` keeps of it, folded as the index folds it. Another backend indexes these tokens
    /// (their positions are their offsets in the array) so that its hits are SQLite's; it runs SQLite's own
    /// tokenizer, on an in-memory database, rather than a copy of its rules.
    package static func indexTokens(of texts: [String]) throws -> [[String]] {
        guard !texts.isEmpty else { return [] }
        let queue = try DatabaseQueue()
        return try queue.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE tokens USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2')")
            try db.execute(sql: "CREATE VIRTUAL TABLE token_instance USING fts5vocab(tokens, instance)")
            let insert = try db.makeStatement(sql: "INSERT INTO tokens(rowid, text) VALUES (?, ?)")
            for (index, text) in texts.enumerated() {
                try insert.execute(arguments: [index + 1, text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: " ") : text])
            }
            var tokens = Array(repeating: [(offset: Int, token: String)](), count: texts.count)
            let rows = try Row.fetchCursor(db, sql: "SELECT term, doc, offset FROM token_instance")
            while let row = try rows.next() {
                let document: Int = row[1]
                tokens[document - 1].append((row[2], row[0]))
            }
            return tokens.map { $0.sorted { $0.offset < $1.offset }.map(\.token) }
        }
    }
}

extension SearchQuery {
    /// The query's terms as SQLite's MATCH expression has them: each term's phrase (CJK runs split into pairs, as
    /// ``matchExpression`` writes it) and whether it matches as a prefix. Another backend tokenizes each phrase
    /// with ``indexTokens(of:)`` to match the same messages.
    package var matchPhrases: [(phrase: String, isPrefix: Bool)] {
        terms.map { term in
            let folded = SearchText.compatibilityForm(term.text)
            var phrase = ""
            SearchText.append(folded, to: &phrase, trailingSingle: false)
            let scalars = Array(folded.unicodeScalars)
            var endsInSingleCJK = false
            if let last = scalars.last, SearchText.isCJK(last) {
                endsInSingleCJK = scalars.count == 1 || !SearchText.isCJK(scalars[scalars.count - 2])
            }
            return (phrase, term.isPrefix || endsInSingleCJK)
        }
    }
}
