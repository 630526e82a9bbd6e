import Foundation
import MissivePluginKit

/// A text with a link, as in the classic custom-message tutorial. Its digest is the text.
@MissiveMessage("demo:link", businessID: "text_link", persistence: .counted)
struct LinkMessage: Codable, MessageContentView {
    var text: String
    var link: String

    static var examples: [LinkMessage] {
        [
            LinkMessage(text: "Welcome to Missive", link: "https://example.com/welcome"),
            LinkMessage(text: "Ünïcödé — 链接 ✓", link: "https://example.com/a?b=c&d=e"),
        ]
    }

    init(text: String, link: String) {
        self.text = text
        self.link = link
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decoder.decode(Self.self, from: content)
        guard !text.isEmpty else { throw DemoError("a link card needs a text") }
    }

    var digest: String { text.split(whereSeparator: \.isNewline).joined(separator: " ") }
    var searchableWords: [String]? { [text] }
}

/// A poll: a question and its options, searchable by both, counted as unread.
@MissiveMessage("demo:poll", businessID: "poll", persistence: .counted)
struct PollMessage: Codable, MessageContentView {
    var question: String
    var options: [String]

    static var examples: [PollMessage] {
        [PollMessage(question: "Lunch?", options: ["Pizza", "Sushi", "Salad"])]
    }

    init(question: String, options: [String]) {
        self.question = question
        self.options = options
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decoder.decode(Self.self, from: content)
        guard !question.isEmpty else { throw DemoError("a poll needs a question") }
        guard options.count >= 2 else { throw DemoError("a poll needs at least two options, got \(options.count)") }
    }

    var digest: String { "[Poll] \(question)" }
    var searchableWords: [String]? { [question] + options }
}

/// A typing indicator: a status message, never stored and never pushed.
@MissiveMessage("demo:typing", persistence: .status)
struct TypingMessage: Codable, MessageContentView {
    var userID: String
    var isTyping: Bool

    static var examples: [TypingMessage] { [TypingMessage(userID: "alice", isTyping: true)] }

    var digest: String { isTyping ? "\(userID) is typing…" : "\(userID) stopped typing" }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

#MissivePlugin(
    name: "DemoMessages", version: "1.0.0", vendor: "Missive Samples",
    types: [LinkMessage.self, PollMessage.self, TypingMessage.self])
