import Foundation
import MissiveCore

/// A command line split into words: spaces separate them, a double-quoted word (JSON's escapes inside) is one.
package enum ChatWords {
    /// One word.
    package struct Word: Sendable, Hashable {
        /// The word as typed (with its quotes, for a quoted one).
        package var text: String
        /// Whether it was in double quotes.
        package var isQuoted: Bool

        /// The word as an action's argument: a JSON value when it is one (a quoted word is a JSON string), else a
        /// string.
        package var argument: ActionArgument {
            if (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil { return ActionArgument(json: text) }
            return .string(text)
        }
    }

    /// The words of `line`.
    package static func split(_ line: String) -> [Word] {
        var words: [Word] = []
        var current = ""
        var quoted = false
        var inQuotes = false
        var escaped = false
        for character in line {
            if inQuotes {
                current.append(character)
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inQuotes = false
                }
            } else if character == " " {
                if !current.isEmpty { words.append(Word(text: current, isQuoted: quoted)) }
                current = ""
                quoted = false
            } else {
                if character == "\"" {
                    inQuotes = true
                    quoted = true
                }
                current.append(character)
            }
        }
        if !current.isEmpty { words.append(Word(text: current, isQuoted: quoted)) }
        return words
    }
}
