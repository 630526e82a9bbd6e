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

extension LinkMessage: MessageViewContent {
    /// The text, and a "View details" link to the page.
    var view: ViewElement {
        .vstack {
            ViewElement.text(text)
            ViewElement.link("View details", url: link)
        }
    }
}

/// A poll: a question, its options and, once people vote, the votes for each option. Searchable by question
/// and options, counted as unread.
@MissiveMessage("demo:poll", businessID: "poll", persistence: .counted)
struct PollMessage: Codable, MessageContentView {
    var question: String
    var options: [String]
    /// The votes for each option, in the order of `options`; absent before anyone votes. Added after the
    /// first version of the type, so optional: older senders' polls stay valid.
    var votes: [Int]?

    static var examples: [PollMessage] {
        [
            PollMessage(question: "Lunch?", options: ["Pizza", "Sushi", "Salad"]),
            PollMessage(question: "Where to?", options: ["Pizza", "Sushi"], votes: [1, 3]),
        ]
    }

    init(question: String, options: [String], votes: [Int]? = nil) {
        self.question = question
        self.options = options
        self.votes = votes
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decoder.decode(Self.self, from: content)
        guard !question.isEmpty else { throw DemoError("a poll needs a question") }
        guard options.count >= 2 else { throw DemoError("a poll needs at least two options, got \(options.count)") }
        if let votes {
            guard votes.count == options.count else { throw DemoError("a poll has \(options.count) options but \(votes.count) vote counts") }
            guard votes.allSatisfy({ $0 >= 0 }) else { throw DemoError("a vote count is negative") }
        }
    }

    var digest: String { "[Poll] \(question)" }
    var searchableWords: [String]? { [question] + options }
}

extension PollMessage: MessageViewContent {
    /// The question, then for each option its share of the votes as a bar, its count, and a vote button
    /// whose argument is the option's index.
    var view: ViewElement {
        let counts = votes ?? Array(repeating: 0, count: options.count)
        let total = counts.reduce(0, +)
        return .vstack(spacing: 1) {
            ViewElement.text(question, role: .title)
            ViewElement.vstack {
                for (index, option) in options.enumerated() {
                    ViewElement.hstack(spacing: 2) {
                        ViewElement.progress(
                            option, fraction: total == 0 ? 0 : Double(counts[index]) / Double(total),
                            detail: counts[index] == 1 ? "1 vote" : "\(counts[index]) votes")
                        ViewElement.button("Vote", action: "vote", values: [.integer(Int64(index))])
                    }
                }
            }
            ViewElement.text(total == 1 ? "1 vote" : "\(total) votes", role: .caption)
        }
    }
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
