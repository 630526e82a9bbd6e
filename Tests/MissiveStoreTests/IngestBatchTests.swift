import Foundation
import Missive
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// One big ingest: more messages than one multi-row insert of search and feed entries holds, with
/// duplicates, replies and refusals among them.
@Suite struct IngestBatchTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    // Both backends write a batch in statements of many rows. SQLite lists a batch's feed entries in the order
    // given; PostgreSQL writes a batch in the order of its ids (so that writers with overlapping batches never
    // deadlock) and lists them in that order: a feed is ordered between transactions, not within one.
    @Test(arguments: StoreBackend.allCases)
    func aBigBatchKeepsEveryOutcomeSearchEntryAndFeedEntryInOrder(backend: StoreBackend) async throws {
        let store = try await backend.newStore(owner: "alice")
        _ = try await store.ingest([StoreTests.text("early", "stored before", at: 0)], registry: registry)
        let start = try await store.lastChangePosition()
        var batch: [Envelope] = []
        var expected: [IngestReport.Outcome] = []
        var storedIDs: [String] = []
        var unread = 1  // "early", from bob
        for index in 0..<250 {
            let id = "b\(index)"
            switch index {
            case 3:
                // A reply whose parent comes later in the same batch.
                batch.append(StoreTests.text(id, "word\(index)", from: "carol", at: Int64(index), replyingTo: "b5"))
            case 7:
                // A reply to that reply.
                batch.append(StoreTests.text(id, "word\(index)", from: "carol", at: Int64(index), replyingTo: "b3"))
            case 120:
                // A reply to a message stored earlier in the same batch.
                batch.append(StoreTests.text(id, "word\(index)", from: "carol", at: Int64(index), replyingTo: "b5"))
            default:
                batch.append(StoreTests.text(id, "word\(index)", from: index % 3 == 0 ? "alice" : "bob", at: Int64(index)))
            }
            expected.append(.stored)
            storedIDs.append(id)
            if batch.last?.senderID != "alice" { unread += 1 }
            if index == 50 {
                // The same id again in the batch, and one stored by an earlier batch: the first one stays.
                batch.append(StoreTests.text("b10", "another text", at: 999))
                batch.append(StoreTests.text("early", "another text", at: 999))
                expected += [.duplicate, .duplicate]
            }
            if index == 200 {
                batch.append(StoreTests.text("bad\u{0}id", "refused", at: 999))
                expected.append(.refused("its id holds U+0000, which the store cannot keep"))
            }
        }
        let report = try await store.ingest(batch, registry: registry)
        #expect(report.outcomes == expected)

        // Every stored message is found by its own word, in the first chunk, the middle and the remainder.
        for index in [0, 99, 100, 199, 200, 249] {
            #expect(try await store.search("word\(index)").map(\.message.id) == ["b\(index)"])
        }
        #expect(try await store.search("another").isEmpty)
        #expect(try await store.message(id: "b10")?.sentAt == 10)
        // The feed: one stored entry per message stored, in the order given, after the reader's join of
        // the conversation (made by the earlier batch).
        let changes = try await store.changes(after: start, limit: 1_000)
        #expect(changes.map(\.kind) == Array(repeating: StoreChange.Kind.stored, count: 250))
        if backend == .sqlite {
            #expect(changes.map { $0.messageID ?? "-" } == storedIDs)
        } else {
            #expect(changes.map { $0.messageID ?? "-" }.sorted() == storedIDs.sorted())
        }
        // Threads: b3 waited for b5, which came later in the batch; b7 replied to b3 and so joined b5's
        // thread; b120 found b5 stored earlier in the batch.
        #expect(try await store.message(id: "b5")?.replyCount == 3)
        #expect(try await store.message(id: "b7")?.threadRootID == "b5")
        #expect(try await store.replies(to: "b5").map(\.id) == ["b3", "b7", "b120"])
        // Counters: everything stored but alice's own messages counts.
        #expect(unread == 1 + 250 - 82)
        #expect(try await store.unreadCount(conversation: "c1") == unread)
        #expect(try await store.conversations().first?.lastMessage.id == "b249")
        #expect(try await store.checkConsistency().problems == [])
    }
}
