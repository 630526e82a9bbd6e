import ArgumentParser
import Missive
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search the stored messages' searchable words, best match first.",
            discussion: """
                Words must all match; "a phrase" matches words in order; word* matches a prefix. Case, Latin \
                diacritics and full-width forms are ignored, and Chinese and Japanese words are found inside \
                sentences. With --member, only the conversations that member belongs to are searched; without it, \
                every conversation of the store.
                """)

        @Argument(parsing: .allUnrecognized, help: "The query: its words may start with '-'.")
        var words: [String] = []

        /// The query as one string.
        var query: String { words.joined(separator: " ") }

        @Option(help: "Search one conversation only.")
        var conversation: String?

        @Option(help: "At most this many results.")
        var limit: Int = 20

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if limit < 1 { throw ValidationError("--limit must be at least 1, not \(limit)") }
            if words.isEmpty { throw ValidationError("give a query: the words to search for") }
        }

        func run() async throws {
            let database = try await store.open()
            let hits: [SearchHit]
            do {
                hits = try await database.search(SearchQuery(parsing: query), member: store.member, conversation: conversation, limit: limit)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                guard !hits.isEmpty else { return Console.out("No messages match \(query)") }
                Console.out(cleanTable([["ID", "CONVERSATION", "SENDER", "MATCH"]] + hits.map { hit in
                    [hit.message.id, hit.message.conversationID, hit.message.senderID, hit.snippet]
                }))
            case .json:
                try Console.out(json: StoreSearchJSON(query: query, hits: hits.map {
                    StoreSearchJSON.Hit(snippet: $0.snippet, rank: $0.rank, message: StoredMessageJSON($0.message))
                }))
            }
        }
    }
}

/// `missive store search --format json`.
struct StoreSearchJSON: CLIJSON {
    static let documentedAs = "store-search"
    let schemaVersion = 1
    var query: String
    var hits: [Hit]

    /// One match.
    struct Hit: Encodable {
        var snippet: String
        /// Lower is better.
        var rank: Double
        var message: StoredMessageJSON
    }
}
