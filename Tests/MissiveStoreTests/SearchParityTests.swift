import Foundation
import Missive
import MissivePostgresStore
import MissiveStore
import MissiveTestSupport
import Testing

/// The same queries against a SQLite store and a PostgreSQL store holding the same messages give the same hits:
/// Chinese words inside sentences, Japanese, Korean, folded case and diacritics, full-width letters, phrases and
/// prefixes.
@Suite struct SearchParityTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    static let corpus: [(id: String, conversation: String, text: String)] = [
        ("m01", "c1", "我明天去北京出差"),
        ("m02", "c1", "北京烤鸭很好吃"),
        ("m03", "c2", "东京和京都都很美"),
        ("m04", "c2", "今日は東京へ行きます"),
        ("m05", "c2", "京"),
        ("m06", "c3", "서울에서 만나요"),
        ("m07", "c3", "서울역 앞에서"),
        ("m08", "c1", "Café au lait at the CAFE"),
        ("m09", "c1", "déjà vu, again"),
        ("m10", "c3", "naïve résumé"),
        ("m11", "c3", "Ｆｕｌｌｗｉｄｔｈ letters"),
        ("m12", "c1", "lunch plans for today"),
        ("m13", "c2", "plans for lunch"),
        ("m14", "c2", "e-mail me at bob@example.com"),
        ("m15", "c3", "Straße und STRASSE"),
        ("m16", "c1", "Ωmega ά 1.5 x² ½ हिन्दी"),
        ("m17", "c2", "planning the plan, plant plans"),
        ("m18", "c3", "it's O'Brien's \\back\\slash"),
    ]

    static let queries = [
        "北京", "京", "北", "北京出差", "烤鸭", "東京", "京都", "東京へ", "行き", "서울", "만나", "서울*", "cafe", "CAFÉ", "café*", "deja",
        "\"déjà vu\"", "resume", "naive résumé", "fullwidth", "full*", "\"lunch plans\"", "lunch plans", "plan*", "\"plans for\"", "mail",
        "e-mail", "example.com", "strasse", "straße", "omega", "ωmega", "ά", "1.5", "x²", "½", "हिन्दी", "O'Brien's", "\\back\\", "nothing",
        "lunch nothing", "\"for lunch\"", "pla*", "p*",
    ]

    @Test func theSameQueriesFindTheSameMessagesOnBothBackends() async throws {
        let sqlite = try SQLiteMessageStore(path: try Fixtures.temporaryDirectory() + "/store.sqlite", kind: .shared)
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let postgres = try await StoreLocation(parsing: url).open(kind: .shared)
        let envelopes = Self.corpus.map { StoreTests.text($0.id, $0.text, in: $0.conversation, from: "bob", at: 1_000 + Int64($0.id.dropFirst())!) }
        for store in [sqlite, postgres] as [any MessageStore] {
            #expect(try await store.ingest(envelopes, registry: registry).storedCount == Self.corpus.count)
            try await store.join(member: "alice", conversation: "c1")
            try await store.join(member: "alice", conversation: "c3")
        }
        var found = 0
        for text in Self.queries {
            let query = try SearchQuery(parsing: text)
            for (member, conversation) in [(nil, nil), ("alice", nil), (nil, "c2"), ("alice", "c3")] as [(String?, String?)] {
                let onSQLite = try await sqlite.search(query, member: member, conversation: conversation, limit: 100).map(\.message.id)
                let onPostgres = try await postgres.search(query, member: member, conversation: conversation, limit: 100).map(\.message.id)
                #expect(Set(onPostgres) == Set(onSQLite), "\(text) (member \(member ?? "-"), conversation \(conversation ?? "-"))")
                #expect(onPostgres.count == Set(onPostgres).count)
                found += onSQLite.count
            }
        }
        // What the parity stands on: the queries do find things, where a reader expects them.
        #expect(found > 60)
        func hits(_ text: String) async throws -> [String] {
            try await postgres.search(SearchQuery(parsing: text), member: nil, conversation: nil, limit: 100).map(\.message.id).sorted()
        }
        #expect(try await hits("北京") == ["m01", "m02"])
        #expect(try await hits("京") == ["m01", "m02", "m03", "m04", "m05"])
        #expect(try await hits("東京") == ["m04"])
        #expect(try await hits("서울") == ["m06", "m07"])
        #expect(try await hits("cafe") == ["m08"])
        #expect(try await hits("resume") == ["m10"])
        #expect(try await hits("fullwidth") == ["m11"])
        #expect(try await hits("\"lunch plans\"") == ["m12"])
        #expect(try await hits("lunch plans") == ["m12", "m13"])
        #expect(try await hits("plan*") == ["m12", "m13", "m17"])
        // Snippets come from the same words on both.
        let snippet = try await postgres.search(SearchQuery(parsing: "deja"), member: nil, conversation: nil, limit: 1).first?.snippet
        #expect(snippet == "[déjà] vu, again")
    }

    @Test func equalRanksListTheMessageStoredLastFirst() async throws {
        let url = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(url) }
        let store = try await StoreLocation(parsing: url).open(kind: .shared)
        let envelopes = (1...5).map { StoreTests.text("m\($0)", "same words", in: "c1", from: "bob", at: Int64($0)) }
        _ = try await store.ingest(envelopes, registry: registry)
        let hits = try await store.search(SearchQuery(parsing: "same"), member: nil, conversation: nil, limit: 3)
        #expect(hits.map(\.message.id) == ["m5", "m4", "m3"])
        #expect(Set(hits.map(\.rank)).count == 1)
        #expect(try await store.search(SearchQuery(parsing: "same"), member: nil, conversation: nil, limit: 0).isEmpty)
    }
}
