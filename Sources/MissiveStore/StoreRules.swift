import Foundation
import Missive

/// What every backend keeps of a message in the same way: the words it is searched by, the column that holds
/// them, the messages no backend can keep, and what an edit may not change. One definition, so that SQLite and
/// PostgreSQL store, refuse and search the same.
package enum StoreRules {
    /// Searchable words are kept in one column, separated by U+001F (a control character, which no word
    /// needs: one inside a word becomes a space).
    package static let wordSeparator: Character = "\u{1F}"

    /// The words as one column. A NUL (which ends SQLite's text and which PostgreSQL's text cannot hold) and
    /// U+001F become spaces. Both are rare: a word without either byte is taken as it is, without Foundation's
    /// search, which costs more than the rest of an ingested row.
    package static func joinWords(_ words: [String]) -> String {
        var joined = ""
        for (index, word) in words.enumerated() {
            if index > 0 { joined.append(wordSeparator) }
            if word.utf8.contains(where: { $0 == 0x1F || $0 == 0 }) {
                joined += String(String.UnicodeScalarView(word.unicodeScalars.map { $0 == "\u{1F}" || $0 == "\u{0}" ? " " : $0 }))
            } else {
                joined += word
            }
        }
        return joined
    }

    /// The words of a column ``joinWords(_:)`` wrote.
    package static func splitWords(_ column: String) -> [String] {
        column.isEmpty ? [] : column.split(separator: wordSeparator, omittingEmptySubsequences: false).map(String.init)
    }

    /// The words a message is searched by: its type's searchable words, or for an unknown message the
    /// sender's fallback text (what a host without the type shows), at most
    /// `SQLiteMessageStore.maxIndexedBytes` of them, cut on a character boundary.
    package static func indexedWords(_ message: Message) -> [String] {
        var words = message.content.searchableWords
        if let unknown = message.unknown, words.isEmpty, let fallback = unknown.fallbackText { words = [fallback] }
        var budget = SQLiteMessageStore.maxIndexedBytes
        var kept: [String] = []
        for word in words {
            guard budget > 0 else { break }
            if word.utf8.count <= budget {
                kept.append(word)
                budget -= word.utf8.count
            } else {
                var cut = ""
                for character in word {
                    guard cut.utf8.count + character.utf8.count <= budget else { break }
                    cut.append(character)
                }
                kept.append(cut)
                budget = 0
            }
        }
        return kept
    }

    /// Why no store can keep a message as it is, if none can: an identifier holding U+0000, which SQLite's
    /// text ends at (it would be stored cut short, and could pass for another) and PostgreSQL's cannot hold.
    package static func refusal(of message: Message) -> String? {
        let envelope = message.envelope
        for (name, value) in [
            ("id", envelope.id), ("conversationID", envelope.conversationID), ("senderID", envelope.senderID),
            ("objectName", message.content.objectName), ("parentID", envelope.parentID ?? ""),
        ] where value.utf8.contains(0) {
            return "its \(name) holds U+0000, which the store cannot keep"
        }
        return nil
    }

    /// Why `message` cannot replace `stored` (``MessageStore/replace(_:)``), if it cannot: an edit keeps the
    /// message's conversation, sender, time and quoted message, is stored by its flag, and can be kept.
    package static func editConflict(replacing stored: StoredMessage, with message: Message) -> StoreError? {
        let envelope = message.envelope
        for (name, old, new) in [
            ("conversation", stored.conversationID, envelope.conversationID), ("sender", stored.senderID, envelope.senderID),
            ("time sent", "\(stored.sentAt)", "\(envelope.sentAt)"), ("quoted message", stored.parentID ?? "none", envelope.parentID ?? "none"),
        ] where old != new {
            return StoreError(.conflict, "message '\(envelope.id)': an edit cannot change its \(name) ('\(old)' to '\(new)')")
        }
        guard message.persistence.isStored else {
            return StoreError(.conflict, "message '\(envelope.id)': the new version's persistence (\(message.persistence)) says not to store it")
        }
        if let refusal = refusal(of: message) { return StoreError(.conflict, "message '\(envelope.id)': \(refusal)") }
        return nil
    }

    /// A date as whole milliseconds since 1970, as the stores keep a plugin failure's date.
    package static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date of ``milliseconds(_:)``.
    package static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
