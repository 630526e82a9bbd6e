import Foundation
import Missive
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// The store, on a real SQLite file, with messages decoded through the real sample plugins.
@Suite struct StoreTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    /// A text message.
    static func text(
        _ id: String, _ text: String, in conversation: String = "c1", from sender: String = "bob", at sentAt: Int64,
        replyingTo parentID: String? = nil, objectName: String = "MS:Text", persistence: Persistence? = nil
    ) -> Envelope {
        let content = #"{"content":"# + String(decoding: try! JSONEncoder().encode(text), as: UTF8.self) + "}"
        return Envelope(
            id: id, conversationID: conversation, senderID: sender, sentAt: sentAt, objectName: objectName, content: Array(content.utf8),
            parentID: parentID, persistence: persistence)
    }

    func ingest(_ envelopes: [Envelope], into store: some MessageStore) async throws -> IngestReport {
        try await store.ingest(envelopes, registry: registry)
    }

    // MARK: Flags and unread counts

    @Test(arguments: StoreBackend.allCases)
    func theSampleConversationIsStoredAndCountedAsEachFlagSays(backend: StoreBackend) async throws {
        let store = try await backend.newStore(owner: "alice")
        let lines = try Fixtures.conversationLines()
        let incoming = try lines.map { line throws(MissiveError) in try IncomingMessage(line: line, registry: registry) }
        let report = try await store.ingest(incoming)
        // The typing indicators (status) are not stored; everything else is.
        let notStored = zip(incoming, report.outcomes).filter { $0.1 != .stored }.map { $0.0.message.envelope.id }
        #expect(notStored == ["m04", "m31"])
        #expect(report.outcomes[3] == .notStored(.status))
        #expect(try await store.message(id: "m04") == nil)
        // Unread: counted messages from others. Each message's flag is the one in effect: the type's, or for an
        // unknown message the sender's (m11 says counted, m14 counted), else persisted (m12, m22, m32).
        let unread = try await store.messages(inConversation: "team").filter(\.countsAsUnread).map(\.id)
        #expect(
            unread == [
                "m02", "m05", "m06", "m07", "m08", "m10", "m11", "m14", "m15", "m16", "m17", "m18", "m20", "m21", "m23", "m27", "m28",
                "m29", "m30",
            ])
        #expect(try await store.unreadCount(conversation: "team") == 19)
        #expect(try await store.totalUnreadCount() == 19)
        let order = try #require(try await store.message(id: "m11"))
        #expect(!order.isKnown && order.persistence == .counted && order.countsAsUnread)
        let receipt = try #require(try await store.message(id: "m12"))
        #expect(!receipt.isKnown && receipt.persistence == .persisted && !receipt.countsAsUnread)
        #expect(receipt.reason?.contains("no type is registered") == true)
        // alice's own counted messages are stored but never unread.
        let own = try #require(try await store.message(id: "m01"))
        #expect(own.persistence == .counted && !own.countsAsUnread)
        // The envelope is kept byte for byte.
        #expect(try await store.message(id: "m12")?.envelopeBytes == lines[11])
        #expect(try await store.checkConsistency().problems == [])
    }

    @Test(arguments: StoreBackend.allCases)
    func noneAndStatusAreNotStoredAndAnUnknownMessageUsesTheSendersFlag(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        let report = try await ingest(
            [
                Self.text("a", "kept, not counted", at: 1, persistence: Persistence.none),  // a known type: the type's flag wins
                Self.text("b", "unknown, counted", at: 2, objectName: "acme:thing", persistence: .counted),
                Self.text("c", "unknown, not stored", at: 3, objectName: "acme:thing", persistence: Persistence.none),
                Self.text("d", "unknown, status", at: 4, objectName: "acme:thing", persistence: .status),
                Self.text("e", "unknown, no flag", at: 5, objectName: "acme:thing"),
            ], into: store)
        #expect(report.outcomes == [.stored, .stored, .notStored(.none), .notStored(.status), .stored])
        #expect(try await store.message(id: "b")?.countsAsUnread == true)
        #expect(try await store.message(id: "e")?.persistence == .persisted)
        // a (MS:Text is counted) and b.
        #expect(try await store.unreadCount(conversation: "c1") == 2)
    }

    @Test(arguments: StoreBackend.allCases)
    func idsHoldingANULAreRefusedRatherThanCutShort(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        var sender = Self.text("s", "spoofed sender", at: 3)
        sender.senderID = "alice\u{0}mallory"
        let report = try await ingest([Self.text("a\u{0}x", "one", at: 1), Self.text("a", "two", at: 2), sender], into: store)
        #expect(report.outcomes[1] == .stored)
        guard case .refused(let reason) = report.outcomes[0], case .refused = report.outcomes[2] else {
            Issue.record("expected refusals: \(report.outcomes)")
            return
        }
        #expect(reason.contains("id holds U+0000"))
        #expect(try await store.messages(inConversation: "c1").map(\.id) == ["a"])
    }

    @Test(arguments: StoreBackend.allCases)
    func ingestIsIdempotentByMessageID(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        let batch = [Self.text("a", "one", at: 1), Self.text("b", "two", at: 2)]
        #expect(try await ingest(batch, into: store).storedCount == 2)
        var changed = Self.text("a", "a different text under the same id", at: 9)
        changed.conversationID = "c2"
        let again = try await ingest(batch + [changed, Self.text("c", "three", at: 3)], into: store)
        #expect(again.outcomes == [.duplicate, .duplicate, .duplicate, .stored])
        #expect(try await store.messages(inConversation: "c1").map(\.id) == ["a", "b", "c"])
        #expect(try await store.message(id: "a")?.digest == "one")
        #expect(try await store.unreadCount(conversation: "c1") == 3)
        #expect(try await store.conversations().map(\.id) == ["c1"])
        #expect(try await store.checkConsistency().isConsistent)
    }

    @Test(arguments: StoreBackend.allCases)
    func readMarksMoveOnlyForwardAndCountsFollowThem(backend: StoreBackend) async throws {
        let store = try await backend.newStore(owner: "alice")
        _ = try await ingest(
            [
                Self.text("m1", "one", at: 10), Self.text("m2", "two", at: 20), Self.text("m3", "mine", from: "alice", at: 30),
                Self.text("m4", "four", at: 40), Self.text("x1", "elsewhere", in: "c2", at: 15),
            ], into: store)
        #expect(try await store.unreadCounts() == ["c1": 3, "c2": 1])
        #expect(try await store.markRead(conversation: "c1", upTo: "m2") == ReadState(readUpTo: "m2", unreadCount: 1))
        #expect(try await store.markRead(conversation: "c1", upTo: "m1") == ReadState(readUpTo: "m2", unreadCount: 1))  // never back
        #expect(try await store.readState(conversation: "c1") == ReadState(readUpTo: "m2", unreadCount: 1))
        #expect(try await store.readState(conversation: "nowhere") == ReadState(readUpTo: nil, unreadCount: 0))
        // A message that arrives late, sent before the mark, is already read; one after it is not.
        _ = try await ingest([Self.text("m0", "late", at: 5), Self.text("m5", "new", at: 50)], into: store)
        #expect(try await store.unreadCount(conversation: "c1") == 2)
        #expect(try await store.totalUnreadCount() == 3)
        await #expect(throws: StoreError.self) { try await store.markRead(conversation: "c1", upTo: "x1") }
        await #expect(throws: StoreError.self) { try await store.markRead(conversation: "c1", upTo: "nope") }
        #expect(try await store.markRead(conversation: "c1", upTo: "m5").unreadCount == 0)
        // Newest activity first.
        #expect(try await store.conversations().map(\.id) == ["c1", "c2"])
        #expect(try await store.conversations().first?.lastMessage.id == "m5")
        #expect(try await store.checkConsistency().isConsistent)
    }

    @Test(arguments: StoreBackend.allCases)
    func aStoreRemembersItsKindAndOwner(backend: StoreBackend) async throws {
        let location = try await backend.newLocation()
        do {
            let store = try await backend.open(location, kind: nil)
            _ = try await ingest([Self.text("m1", "one", from: "alice", at: 1), Self.text("m2", "two", at: 2)], into: store)
            #expect(try await store.unreadCount(conversation: "c1") == 2)
        }
        // Naming the owner later recounts: alice's own message no longer counts.
        #expect(try await backend.open(location, kind: .personal(owner: "alice")).unreadCount(conversation: "c1") == 1)
        #expect(try await backend.open(location, kind: nil).owner == "alice")
        let error = await #expect(throws: StoreError.self) { try await backend.open(location, kind: .personal(owner: "bob")) }
        #expect(error?.code == .ownerMismatch)
        #expect(error?.description.contains("'alice'") == true)
        // A personal store is not opened as a shared one, nor the other way round.
        let asShared = await #expect(throws: StoreError.self) { try await backend.open(location, kind: .shared) }
        #expect(asShared?.code == .kindMismatch)
        let shared = try await backend.newLocation()
        _ = try await backend.open(shared, kind: .shared)
        #expect(try await backend.open(shared, kind: nil).kind == .shared)
        let asPersonal = await #expect(throws: StoreError.self) { try await backend.open(shared, kind: .personal(owner: "alice")) }
        #expect(asPersonal?.code == .kindMismatch)
    }

    @Test func aFileThatIsNotAStoreIsRefusedWithItsPath() async throws {
        let path = try Fixtures.temporaryDirectory() + "/notes.txt"
        try Data("not a database, just some text that is long enough to be read as a header".utf8).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: StoreError.self) { try SQLiteMessageStore(path: path) }
        #expect(error.code == .cannotOpen)
        #expect(error.description.hasPrefix(path + ": "))
        let missing = try #require(throws: StoreError.self) { try SQLiteMessageStore(path: "/nonexistent-folder/x/store.sqlite") }
        #expect(missing.code == .cannotOpen)
    }

    // MARK: Search

    @Test(arguments: StoreBackend.allCases)
    func searchFindsChineseAndJapaneseWordsInsideSentences(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        _ = try await ingest(
            [
                Self.text("zh", "我明天去北京出差，下午开会", at: 1), Self.text("zh2", "北方的天气很冷", at: 2),
                Self.text("ja", "寿司が大好きです", at: 3), Self.text("ko", "서울에서 만나요", at: 4),
            ], into: store)
        #expect(try await store.search("北京").map(\.message.id) == ["zh"])
        #expect(try await store.search("出差").map(\.message.id) == ["zh"])
        #expect(try await store.search("明天去北京").map(\.message.id) == ["zh"])
        #expect(Set(try await store.search("北").map(\.message.id)) == ["zh", "zh2"])  // one character: anywhere
        #expect(try await store.search("大好き").map(\.message.id) == ["ja"])
        #expect(try await store.search("서울").map(\.message.id) == ["ko"])
        #expect(try await store.search("京北").isEmpty)  // not a substring
        let hit = try #require(try await store.search("北京").first)
        #expect(hit.snippet.contains("[北京]"))
    }

    @Test(arguments: StoreBackend.allCases)
    func searchFoldsCaseDiacriticsAndWidthAndRanksBetterMatchesFirst(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        _ = try await ingest(
            [
                Self.text("a", "Meet at the Café Nero", at: 1), Self.text("b", "ＦＵＬＬ width text", at: 2),
                Self.text("c", "cafe cafe cafe, all day cafe", at: 3), Self.text("d", "Lunch plans", in: "c2", at: 4),
                Self.text("e", "lunch at noon", at: 5),
            ], into: store)
        #expect(try await store.search("cafe").map(\.message.id) == ["c", "a"])
        #expect(try await store.search("CAFÉ nero").map(\.message.id) == ["a"])
        #expect(try await store.search("full").map(\.message.id) == ["b"])
        #expect(try await store.search("\"lunch plans\"").map(\.message.id) == ["d"])
        #expect(try await store.search("lun*").count == 2)
        // A prefix's snippet marks a word that starts with it, not the letters inside another word.
        _ = try await ingest([Self.text("f", "salun lunar", at: 6)], into: store)
        #expect(try await store.search("lun*").first { $0.message.id == "f" }?.snippet == "salun [lun]ar")
        #expect(try await store.search(SearchQuery(parsing: "lunch"), conversation: "c2", limit: 10).map(\.message.id) == ["d"])
        #expect(try await store.search("Café nero").first?.snippet == "Meet at the [Café] Nero")
    }

    @Test(arguments: StoreBackend.allCases, ["", "   ", "\"unclosed phrase", "***", "!!! ,,,"])
    func aMalformedQueryIsAClearError(backend: StoreBackend, query: String) async throws {
        let store = try await backend.newStore()
        _ = try await ingest([Self.text("a", "hello", at: 1)], into: store)
        let error = try await #require(throws: StoreError.self) { try await store.search(query) }
        #expect(error.code == .malformedQuery)
        #expect(error.message.contains("query"))
    }

    @Test(arguments: StoreBackend.allCases, ["AND", "OR hello", "hello NOT", "NEAR(a b)", "col:hello", "^hello", "a\"\"b", "hello)", "-x", "'"])
    func searchSyntaxOfSQLiteInAQueryIsSearchedAsWords(backend: StoreBackend, query: String) async throws {
        let store = try await backend.newStore()
        _ = try await ingest([Self.text("a", "hello AND world", at: 1)], into: store)
        // Never a crash, never SQLite's own syntax error: operators are words like any other.
        do {
            _ = try await store.search(query)
        } catch {
            #expect(error.code == .malformedQuery, "\(error)")
        }
        #expect(try await store.search("AND").map(\.message.id) == ["a"])
    }

    // MARK: Quote replies

    @Test(arguments: StoreBackend.allCases)
    func repliesAreOneLevelDeepAndBlockDeletingTheirOriginal(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        _ = try await ingest(
            [
                Self.text("root", "original", at: 1), Self.text("r1", "reply", at: 2, replyingTo: "root"),
                Self.text("r2", "reply to the reply", at: 3, replyingTo: "r1"), Self.text("lost", "to nothing", at: 4, replyingTo: "gone"),
            ], into: store)
        #expect(try await store.message(id: "root")?.replyCount == 2)
        #expect(try await store.message(id: "r2")?.threadRootID == "root")
        #expect(try await store.message(id: "r2")?.parentID == "r1")
        #expect(try await store.replies(to: "root").map(\.id) == ["r1", "r2"])
        let r2 = try #require(try await store.message(id: "r2"))
        #expect(try await store.quotedOriginal(of: r2) == .found(try #require(try await store.message(id: "r1"))))
        let lost = try #require(try await store.message(id: "lost"))
        #expect(try await store.quotedOriginal(of: lost) == .notFound(parentID: "gone"))

        let refused = try await #require(throws: StoreError.self) { try await store.delete(messageID: "root") }
        #expect(refused.code == .hasReplies && refused.message.contains("2 replies"))
        try await store.delete(messageID: "r2")
        #expect(try await store.message(id: "root")?.replyCount == 1)
        try await store.delete(messageID: "r1")
        try await store.delete(messageID: "root")
        #expect(try await store.message(id: "root") == nil)
        #expect(try await #require(throws: StoreError.self) { try await store.delete(messageID: "root") }.code == .notFound)
        #expect(try await store.unreadCount(conversation: "c1") == 1)
        #expect(try await store.conversations().first?.lastMessage.id == "lost")
        #expect(try await store.checkConsistency().isConsistent)
    }

    @Test(arguments: StoreBackend.allCases)
    func repliesThatArriveBeforeTheirOriginalJoinItsThread(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        _ = try await ingest([Self.text("r2", "reply to a reply", at: 3, replyingTo: "r1"), Self.text("r1b", "second", at: 4, replyingTo: "r1")], into: store)
        _ = try await ingest([Self.text("r1", "reply", at: 2, replyingTo: "root")], into: store)
        #expect(try await store.message(id: "r2")?.threadRootID == "root")
        _ = try await ingest([Self.text("root", "original", at: 1)], into: store)
        #expect(try await store.message(id: "root")?.replyCount == 3)
        #expect(try await store.message(id: "r1")?.replyCount == 0)
        #expect(try await store.checkConsistency().isConsistent)
    }

    /// A reply names its parent by id, and ids are unique across conversations: a parent of another conversation
    /// is taken exactly as one never stored, so that a reply neither reaches into that conversation (its counts, its
    /// threads, its text) nor tells whether the id exists there.
    @Test(arguments: StoreBackend.allCases)
    func aThreadStaysInItsConversation(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        _ = try await ingest([Self.text("theirs", "secret plan", in: "other", at: 1)], into: store)
        _ = try await ingest(
            [
                Self.text("probe", "reply", in: "mine", at: 2, replyingTo: "theirs"),
                Self.text("control", "reply", in: "mine", at: 3, replyingTo: "never-stored"),
                // Waiting for a root that then arrives in another conversation.
                Self.text("early", "reply", in: "mine", at: 4, replyingTo: "later"),
            ], into: store)
        _ = try await ingest([Self.text("later", "elsewhere", in: "other", at: 5)], into: store)
        let probe = try #require(try await store.message(id: "probe"))
        let control = try #require(try await store.message(id: "control"))
        // The same as a parent that does not exist: its id as the thread's root, and nothing found to quote.
        #expect(probe.threadRootID == "theirs" && control.threadRootID == "never-stored")
        #expect(try await store.quotedOriginal(of: probe) == .notFound(parentID: "theirs"))
        #expect(try await store.message(id: "early")?.threadRootID == "later")
        // The other conversation is as it was.
        #expect(try await store.message(id: "theirs")?.replyCount == 0)
        #expect(try await store.message(id: "later")?.replyCount == 0)
        #expect(try await store.replies(to: "theirs").isEmpty)
        #expect(try await store.replies(to: "later").isEmpty)
        #expect(try await store.checkConsistency().isConsistent)
        // Deleting the probe leaves the other conversation's counts alone, and its message can go.
        try await store.delete(messageID: "probe")
        #expect(try await store.message(id: "theirs")?.replyCount == 0)
        try await store.delete(messageID: "theirs")
        #expect(try await store.checkConsistency().isConsistent)
        // Within one conversation, the same replies join their threads.
        _ = try await ingest(
            [Self.text("root", "original", in: "mine", at: 6), Self.text("reply", "answer", in: "mine", at: 7, replyingTo: "root")], into: store)
        #expect(try await store.message(id: "root")?.replyCount == 1)
        #expect(try await store.replies(to: "root").map(\.id) == ["reply"])
    }

    @Test(arguments: StoreBackend.allCases)
    func deletingUpdatesSearchUnreadAndTheNewestMessage(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        _ = try await ingest([Self.text("a", "unique zebra", at: 1), Self.text("b", "later", at: 2)], into: store)
        #expect(try await store.search("zebra").count == 1)
        try await store.delete(messageID: "a")
        #expect(try await store.search("zebra").isEmpty)
        try await store.delete(messageID: "b")
        #expect(try await store.unreadCount(conversation: "c1") == 0)
        #expect(try await store.conversations().isEmpty)
        #expect(try await store.checkConsistency().isConsistent)
    }

    // MARK: Unknown messages come back

    @Test(arguments: StoreBackend.allCases)
    func installingAPluginAndRedecodingMakesUnknownMessagesKnownAndSearchable(backend: StoreBackend) async throws {
        // Before: every sample plugin but DemoMessages (links, polls, typing), from the real .so files.
        let without = MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(["DemoMedia", "CRating", "MatrixBridge"])))
        #expect(without.rejections.isEmpty)
        let store = try await backend.newStore(owner: "alice")
        let lines = try Fixtures.conversationLines()
        _ = try await store.ingest(lines.map { line throws(MissiveError) in try IncomingMessage(line: line, registry: without.registry) })
        let link = try #require(try await store.message(id: "m02"))
        #expect(!link.isKnown && link.persistence == .persisted && !link.countsAsUnread)
        #expect(try await store.search("Salad").isEmpty)
        // An unknown message is found by the sender's fallback text, what a host without its type shows.
        #expect(try await store.search("Friday drinks").map(\.message.id) == ["m13"])
        let before = try await store.unreadCount(conversation: "team")

        // After: the plugin is installed.
        let report = try await store.redecode(with: registry)
        let links = try #require(report.types.first { $0.objectName == "demo:link" })
        #expect(links.decoded == 2 && links.stillUnknown == 0 && links.unreadChanged == 2)
        #expect(report.types.first { $0.objectName == "acme:order" }?.stillUnknown == 1)
        let known = try #require(try await store.message(id: "m02"))
        #expect(known.isKnown && known.persistence == .counted && known.countsAsUnread && known.reason == nil)
        #expect(known.digest.contains("New menu is up"))
        #expect(try await store.search("menu").map(\.message.id).contains("m02"))
        #expect(try await store.search("Salad").map(\.message.id).sorted() == ["m03", "m25"])
        // Unread now follows the type's flag, counted, where the sender declared none: the links from others (m02,
        // m23, and m20 through MS:Custom) now count; the polls m03 and m25 are alice's own.
        let custom = try #require(report.types.first { $0.objectName == "MS:Custom" })
        #expect(custom.decoded == 2 && custom.stillUnknown == 1 && custom.unreadChanged == 1)
        #expect(try await store.unreadCount(conversation: "team") == before + 3)
        #expect(try await store.checkConsistency().problems == [])
        // Still unknown: kept, with their reason.
        #expect(try await store.message(id: "m11")?.reason?.contains("no type is registered") == true)
        // Idempotent.
        let again = try await store.redecode(with: registry)
        #expect(again.decodedCount == 0)
        #expect(try await store.unreadCount(conversation: "team") == before + 3)
    }

    @Test(arguments: StoreBackend.allCases)
    func redecodingAfterAnInstallGivesWhatIngestingWithThePluginGives(backend: StoreBackend) async throws {
        // Every sample plugin missing at first, then all installed: m15, which the rating plugin refuses, turns
        // from an unknown type without a flag (persisted) into refused content of a counted type.
        let bare = MessageRegistry.Builder().build()
        let lines = try Fixtures.conversationLines()
        let late = try await backend.newStore(owner: "alice")
        _ = try await late.ingest(lines.map { line throws(MissiveError) in try IncomingMessage(line: line, registry: bare) })
        _ = try await late.redecode(with: registry)
        let direct = try await backend.newStore(owner: "alice")
        _ = try await direct.ingest(lines.map { line throws(MissiveError) in try IncomingMessage(line: line, registry: registry) })
        let lateMessages = try await late.messages(inConversation: "team")
        let directMessages = try await direct.messages(inConversation: "team")
        // Status messages (typing) are the only difference: not stored when their type is known at ingest.
        #expect(lateMessages.map(\.id).filter { !["m04", "m31"].contains($0) } == directMessages.map(\.id))
        for message in directMessages {
            let redecoded = try #require(lateMessages.first { $0.id == message.id })
            #expect(redecoded == message, "\(message.id)")
        }
        let m15 = try #require(directMessages.first { $0.id == "m15" })
        #expect(!m15.isKnown && m15.persistence == .counted && m15.countsAsUnread)
        // The typing indicators stored while unknown (the sender said status: not stored) are not there at all.
        #expect(try await late.message(id: "m04") == nil)
        #expect(try await late.unreadCount(conversation: "team") == (try await direct.unreadCount(conversation: "team")))
        #expect(try await late.checkConsistency().problems == [])
    }

    @Test(arguments: StoreBackend.allCases)
    func aQueryIsBoundedAndRepeatedTermsCountOnce(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        _ = try await ingest([Self.text("a", String(repeating: "ha ", count: 5_000), at: 1)], into: store)
        #expect(try await store.search(String(repeating: "ha ", count: 300)).map(\.message.id) == ["a"])
        #expect(try SearchQuery(parsing: "ha HA ha hä").terms.count == 2)
        let many = try #require(throws: StoreError.self) { try SearchQuery(parsing: (1...40).map { "w\($0)" }.joined(separator: " ")) }
        #expect(many.message.contains("at most 32"))
        let long = try #require(throws: StoreError.self) { try SearchQuery(parsing: String(repeating: "x", count: 2_000)) }
        #expect(long.code == .malformedQuery)
        // A message's indexed words are capped, so one huge message cannot stall the index.
        let huge = Self.text("huge", String(repeating: "word ", count: 100_000) + "needle", at: 2)
        _ = try await ingest([huge], into: store)
        #expect(try await store.message(id: "huge")?.searchableWords.joined().utf8.count == SQLiteMessageStore.maxIndexedBytes)
        #expect(try await store.search("needle").isEmpty)
        #expect(try await store.search("word").map(\.message.id) == ["huge"])
    }

    @Test(arguments: StoreBackend.allCases)
    func storedMessagesDecodeAgainThroughTheirStoredEnvelope(backend: StoreBackend) async throws {
        let store = try await backend.newStore()
        let line = Array(#"{"id":"p","conversationID":"c1","senderID":"bob","sentAt":1,"objectName":"demo:poll","content":{"question":"Q?","options":["a","b"],"x-new":[1,2.50]},"extra":true}"#.utf8)
        _ = try await store.ingest([try IncomingMessage(line: line, registry: registry)])
        let stored = try #require(try await store.message(id: "p"))
        #expect(stored.envelopeBytes == line)
        let message = try stored.decoded(with: registry)
        #expect(message.isKnown && message.envelope.encoded() == line)
    }

    // MARK: Paths

    /// A relative path is made absolute when the store opens, so that the pool's later connections and
    /// SQLite's journal files stay on the same file even if a plugin changes the working directory.
    @Test func aRelativePathIsMadeAbsoluteWhenTheStoreOpens() throws {
        let directory = FileManager.default.currentDirectoryPath
        #expect(SQLiteMessageStore.absolute("data/store.sqlite") == directory + "/data/store.sqlite")
        #expect(SQLiteMessageStore.absolute("/var/x.sqlite") == "/var/x.sqlite")
        #expect(SQLiteMessageStore.absolute(":memory:") == ":memory:")
        let folder = try Fixtures.temporaryDirectory()
        let store = try SQLiteMessageStore(path: folder + "/store.sqlite")
        #expect(store.path == folder + "/store.sqlite")
    }
}
