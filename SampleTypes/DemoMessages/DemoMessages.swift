import Foundation
import MissivePluginKit

/// A text with a link, as in the classic custom-message tutorial. Its digest is the text; its action, Open,
/// gives the link to open.
@MissiveMessage("demo:link", businessID: "text_link", persistence: .counted)
struct LinkMessage: Codable, MessageTextContent {
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
        self = try MissiveJSON.decode(Self.self, from: content)
        guard !text.isEmpty else { throw DemoError("a link card needs a text") }
    }

    var digest: String { text.split(whereSeparator: \.isNewline).joined(separator: " ") }
    var searchableWords: [String]? { [text] }

    /// The page the card links to, for the host to open.
    @MissiveAction("open", title: "Open", icon: "link", priority: 10)
    func open() throws -> URL {
        guard let url = URL(string: link), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            throw DemoError("the link '\(link)' is not an http or https URL")
        }
        return url
    }
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

/// A poll: a question, its options and, once people vote, the votes for each option and who voted for which.
/// Searchable by question and options, counted as unread. People vote with its `vote` action (a second vote
/// by the same voter moves it), and the composer's Poll item creates one.
@MissiveMessage("demo:poll", businessID: "poll", persistence: .counted)
struct PollMessage: Codable, MessageTextContent {
    var question: String
    var options: [String]
    /// The votes for each option, in the order of `options`; absent before anyone votes. Added after the
    /// first version of the type, so optional: older senders' polls stay valid.
    var votes: [Int]?
    /// Which option each voter chose, by voter id, for the votes cast through `vote`; `votes` may also count
    /// votes cast before it was kept. Optional, as `votes` is.
    var voters: [String: Int]?

    static var examples: [PollMessage] {
        [
            PollMessage(question: "Lunch?", options: ["Pizza", "Sushi", "Salad"]),
            PollMessage(question: "Where to?", options: ["Pizza", "Sushi"], votes: [1, 3]),
            PollMessage(question: "Tea or coffee?", options: ["Tea", "Coffee"], votes: [1, 1], voters: ["alice": 0, "bob": 1]),
        ]
    }

    init(question: String, options: [String], votes: [Int]? = nil, voters: [String: Int]? = nil) {
        self.question = question
        self.options = options
        self.votes = votes
        self.voters = voters
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
        guard !question.isEmpty else { throw DemoError("a poll needs a question") }
        guard options.count >= 2 else { throw DemoError("a poll needs at least two options, got \(options.count)") }
        if let votes {
            guard votes.count == options.count else { throw DemoError("a poll has \(options.count) options but \(votes.count) vote counts") }
            guard votes.allSatisfy({ $0 >= 0 }) else { throw DemoError("a vote count is negative") }
        }
        if let voters {
            guard let votes else { throw DemoError("a poll names voters but has no vote counts") }
            for (voter, option) in voters {
                guard !voter.isEmpty else { throw DemoError("a voter's id is empty") }
                guard options.indices.contains(option) else { throw DemoError("voter \(voter) chose option \(option), which the poll does not have") }
            }
            for (option, count) in votes.enumerated() where voters.values.filter({ $0 == option }).count > count {
                throw DemoError("option \(option) has \(count) votes but more voters chose it")
            }
        }
    }

    var digest: String { "[Poll] \(question)" }
    var searchableWords: [String]? { [question] + options }

    /// Records `voter`'s vote for option `option` (from 0): its tally goes up, and a voter who voted before
    /// has the earlier vote moved.
    @MissiveAction("vote", title: "Vote", icon: "checkmark.circle", priority: 10, examples: [[0, "alice"], [1, "bob"]])
    func vote(option: Int32, voter: String) throws -> PollMessage {
        guard options.indices.contains(Int(option)) else {
            throw ActionRefusal("option \(option) is not one of the poll's options (0 to \(options.count - 1))")
        }
        guard !voter.isEmpty else { throw ActionRefusal("a vote needs the voter's id") }
        var counts = votes ?? Array(repeating: 0, count: options.count)
        var ballots = voters ?? [:]
        if let earlier = ballots[voter] { counts[earlier] -= 1 }
        counts[Int(option)] += 1
        ballots[voter] = Int(option)
        return PollMessage(question: question, options: options, votes: counts, voters: ballots)
    }

    /// A new poll: the question, and the options one per line (blank lines left out); 2 to 10 options.
    @MissiveAction("demo.poll.create", title: "Poll", icon: "chart.bar", priority: 50, examples: [["Lunch?", "Pizza\nSushi\nSalad"]])
    static func create(question: String, options: String) throws -> PollMessage {
        let trimmedQuestion = question.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmedQuestion.isEmpty else { throw ActionRefusal("a poll needs a question") }
        let list = options.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard (2...10).contains(list.count) else { throw ActionRefusal("a poll needs 2 to 10 options, one per line; got \(list.count)") }
        return PollMessage(question: trimmedQuestion, options: list)
    }
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
struct TypingMessage: Codable, MessageTextContent {
    var userID: String
    var isTyping: Bool

    static var examples: [TypingMessage] { [TypingMessage(userID: "alice", isTyping: true)] }

    var digest: String { isTyping ? "\(userID) is typing…" : "\(userID) stopped typing" }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// The plugin's entry. A host that compiles these types in (the decode benchmark's floor) defines
// MISSIVE_COMPILED_IN and registers the types itself, so it leaves the entry out.
#if !MISSIVE_COMPILED_IN
#MissivePlugin(
    name: "DemoMessages", version: "1.0.0", vendor: "Missive Samples",
    types: [LinkMessage.self, PollMessage.self, TypingMessage.self])
#endif
