import Foundation
import Missive
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// A shared store: conversations with members, each with its own read mark and unread count.
@Suite struct MemberTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    func ingest(_ envelopes: [Envelope], into store: some MessageStore) async throws -> IngestReport {
        try await store.ingest(envelopes, registry: registry)
    }

    func text(_ id: String, from sender: String, at sentAt: Int64, in conversation: String = "team", _ words: String = "hello") -> Envelope {
        StoreTests.text(id, words, in: conversation, from: sender, at: sentAt)
    }

    @Test(arguments: StoreBackend.allCases)
    func aCountedMessageCountsForEveryMemberButItsSender(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        for member in ["alice", "bob", "carol"] { try await store.join(member: member, conversation: "team") }
        _ = try await ingest([text("m1", from: "alice", at: 10), text("m2", from: "bob", at: 20), text("m3", from: "alice", at: 30)], into: store)
        #expect(try await store.unreadCount(member: "alice", conversation: "team") == 1)
        #expect(try await store.unreadCount(member: "bob", conversation: "team") == 2)
        #expect(try await store.unreadCount(member: "carol", conversation: "team") == 3)
        #expect(try await store.members(ofConversation: "team") == ["alice", "bob", "carol"])
        // Each member's mark is its own.
        #expect(try await store.markRead(member: "carol", conversation: "team", upTo: "m2") == ReadState(readUpTo: "m2", unreadCount: 1))
        #expect(try await store.unreadCount(member: "bob", conversation: "team") == 2)
        // A message that arrives late, sent before carol's mark, is read for carol and unread for bob.
        _ = try await ingest([text("m0", from: "alice", at: 5)], into: store)
        #expect(try await store.unreadCount(member: "carol", conversation: "team") == 1)
        #expect(try await store.unreadCount(member: "bob", conversation: "team") == 3)
        #expect(try await store.totalUnreadCount(member: "bob") == 3)
        #expect(try await store.checkConsistency().problems == [])
    }

    /// A member's conversations, those without a message yet included; those it left are gone.
    @Test(arguments: StoreBackend.allCases)
    func aMembersConversationsIncludeTheEmptyOnesAndNotThoseItLeft(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        for conversation in ["team", "new", "old"] { try await store.join(member: "bob", conversation: conversation) }
        try await store.join(member: "alice", conversation: "team")
        _ = try await ingest([text("m1", from: "alice", at: 10)], into: store)
        try await store.leave(member: "bob", conversation: "old")
        #expect(try await store.conversationIDs(member: "bob") == ["new", "team"])
        #expect(try await store.conversations(member: "bob").map(\.id) == ["team"], "the summaries keep to conversations with messages")
        #expect(try await store.conversationIDs(member: "alice") == ["team"])
        #expect(try await store.conversationIDs(member: "nobody") == [])
    }

    /// A message edited (its search entry rewritten) and then more messages stored, in one process: the store's
    /// prepared statements are shared between the two paths.
    @Test(arguments: StoreBackend.allCases)
    func messagesAreStoredAfterAnEdit(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        _ = try await ingest([text("m1", from: "alice", at: 10, "first words")], into: store)
        let edited = registry.decode(text("m1", from: "alice", at: 10, "second words"))
        _ = try await store.replace(IncomingMessage(edited))
        let report = try await ingest([text("m2", from: "bob", at: 20), text("m3", from: "bob", at: 30)], into: store)
        #expect(report.storedCount == 2, "\(report)")
        #expect(try await store.search(SearchQuery(parsing: "second"), member: nil, conversation: nil, limit: 10).map(\.message.id) == ["m1"])
        #expect(try await store.checkConsistency().problems == [])
    }

    /// History by pages: before or after a message of the conversation, in the order sent, the same on both
    /// backends; a cursor from another conversation gives nothing.
    @Test(arguments: StoreBackend.allCases)
    func pagesOfHistoryFollowTheOrderSent(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        // Two at the same time: the id breaks the tie.
        let envelopes = [text("a", from: "x", at: 10), text("c", from: "x", at: 20), text("b", from: "x", at: 20), text("d", from: "x", at: 30), text("e", from: "x", at: 40)]
        _ = try await ingest(envelopes + [text("z", from: "x", at: 25, in: "other")], into: store)
        func ids(_ cursor: HistoryCursor, _ limit: Int) async throws -> [String] {
            try await store.messages(inConversation: "team", from: cursor, limit: limit).map(\.id)
        }
        #expect(try await ids(.before("d"), 2) == ["b", "c"])
        #expect(try await ids(.before("b"), 10) == ["a"])
        #expect(try await ids(.before("a"), 10) == [])
        #expect(try await ids(.after("b"), 2) == ["c", "d"])
        #expect(try await ids(.after("e"), 2) == [])
        #expect(try await ids(.after("z"), 10) == [], "z is another conversation's")
        #expect(try await ids(.before("nothing"), 10) == [])
    }

    @Test(arguments: StoreBackend.allCases)
    func aMemberWhoJoinsInheritsNoUnreadAndOneWhoLeavesStopsCounting(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        try await store.join(member: "alice", conversation: "team")
        _ = try await ingest([text("m1", from: "alice", at: 10), text("m2", from: "alice", at: 20)], into: store)
        // dave joins: the history is read for him.
        #expect(try await store.join(member: "dave", conversation: "team") == ReadState(readUpTo: "m2", unreadCount: 0))
        #expect(try await store.unreadCount(member: "dave", conversation: "team") == 0)
        _ = try await ingest([text("m3", from: "alice", at: 30)], into: store)
        #expect(try await store.unreadCount(member: "dave", conversation: "team") == 1)
        // Joining again changes nothing.
        #expect(try await store.join(member: "dave", conversation: "team") == ReadState(readUpTo: "m2", unreadCount: 1))
        // dave leaves: he stops counting, and no longer lists, reads or searches the conversation.
        try await store.leave(member: "dave", conversation: "team")
        _ = try await ingest([text("m4", from: "alice", at: 40, "a secret plan")], into: store)
        #expect(try await store.unreadCount(member: "dave", conversation: "team") == 0)
        #expect(try await store.unreadCounts(member: "dave") == [:])
        #expect(try await store.conversations(member: "dave").isEmpty)
        #expect(try await store.search(SearchQuery(parsing: "secret"), member: "dave", conversation: nil, limit: 10).isEmpty)
        #expect(try await store.search(SearchQuery(parsing: "secret"), member: "alice", conversation: nil, limit: 10).map(\.message.id) == ["m4"])
        let notMember = await #expect(throws: StoreError.self) { try await store.markRead(member: "dave", conversation: "team", upTo: "m4") }
        #expect(notMember?.code == .notAMember)
        let leaveAgain = await #expect(throws: StoreError.self) { try await store.leave(member: "dave", conversation: "team") }
        #expect(leaveAgain?.code == .notAMember)
        #expect(try await store.members(ofConversation: "team") == ["alice"])
        // Back again: from that point on.
        try await store.join(member: "dave", conversation: "team")
        #expect(try await store.unreadCount(member: "dave", conversation: "team") == 0)
        _ = try await ingest([text("m5", from: "alice", at: 50)], into: store)
        #expect(try await store.unreadCount(member: "dave", conversation: "team") == 1)
        #expect(try await store.checkConsistency().problems == [])
    }

    @Test(arguments: StoreBackend.allCases)
    func aMemberListsAndSearchesOnlyItsOwnConversations(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        try await store.join(member: "alice", conversation: "team")
        try await store.join(member: "bob", conversation: "team")
        try await store.join(member: "bob", conversation: "bob-carol")
        try await store.join(member: "carol", conversation: "bob-carol")
        _ = try await ingest(
            [
                text("t1", from: "alice", at: 10, in: "team", "lunch at noon"),
                text("p1", from: "carol", at: 20, in: "bob-carol", "lunch just us two"),
            ], into: store)
        #expect(try await store.conversations(member: "alice").map(\.id) == ["team"])
        #expect(try await store.conversations(member: "bob").map(\.id) == ["bob-carol", "team"])
        #expect(try await store.conversations(member: "bob").map(\.unreadCount) == [1, 1])
        #expect(try await store.conversations(member: "mallory").isEmpty)
        let lunch = try SearchQuery(parsing: "lunch")
        #expect(try await store.search(lunch, member: "alice", conversation: nil, limit: 10).map(\.message.id) == ["t1"])
        #expect(try await store.search(lunch, member: "bob", conversation: nil, limit: 10).map(\.message.id).sorted() == ["p1", "t1"])
        // Naming a conversation one does not belong to finds nothing.
        #expect(try await store.search(lunch, member: "alice", conversation: "bob-carol", limit: 10).isEmpty)
        #expect(try await store.search(lunch, member: nil, conversation: nil, limit: 10).count == 2)
        #expect(try await store.unreadCounts(member: "bob") == ["team": 1, "bob-carol": 1])
        #expect(try await store.totalUnreadCount(member: "bob") == 2)
    }

    @Test(arguments: StoreBackend.allCases)
    func theOneAccountAPIOfASharedStoreAsksForAMember(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        #expect(store.reader == nil && store.owner == nil)
        let error = await #expect(throws: StoreError.self) { try await store.unreadCount(conversation: "team") }
        #expect(error?.code == .memberRequired)
        let list = await #expect(throws: StoreError.self) { try await store.conversations() }
        #expect(list?.code == .memberRequired)
    }

    @Test(arguments: StoreBackend.allCases)
    func deletingAndEditingKeepEveryMembersCount(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        for member in ["alice", "bob", "carol"] { try await store.join(member: member, conversation: "team") }
        _ = try await ingest(
            [text("m1", from: "alice", at: 10), text("m2", from: "bob", at: 20), text("m3", from: "alice", at: 30)], into: store)
        try await store.markRead(member: "carol", conversation: "team", upTo: "m2")
        // Deleting a message bob has not read and carol has.
        try await store.delete(messageID: "m1")
        #expect(try await store.unreadCount(member: "bob", conversation: "team") == 1)
        #expect(try await store.unreadCount(member: "carol", conversation: "team") == 1)
        #expect(try await store.unreadCount(member: "alice", conversation: "team") == 1)
        // An edit that makes a counted message persisted only (an unknown type with the sender's flag).
        var edited = StoreTests.text("m3", "now an unknown type", in: "team", from: "alice", at: 30, objectName: "acme:note", persistence: .persisted)
        edited.content = Array(#"{"note":"now an unknown type"}"#.utf8)
        let stored = try await store.replace(IncomingMessage(registry.decode(edited)))
        #expect(stored.objectName == "acme:note" && !stored.countsAsUnread && stored.envelopeBytes == edited.encoded())
        #expect(try await store.unreadCount(member: "bob", conversation: "team") == 0)
        #expect(try await store.unreadCount(member: "carol", conversation: "team") == 0)
        #expect(try await store.unreadCount(member: "alice", conversation: "team") == 1)
        #expect(try await store.checkConsistency().problems == [])
        // An edit may not move a message to another conversation or sender.
        let moved = StoreTests.text("m3", "moved", in: "elsewhere", from: "alice", at: 30)
        let conflict = await #expect(throws: StoreError.self) { try await store.replace(IncomingMessage(registry.decode(moved))) }
        #expect(conflict?.code == .conflict)
        let missing = StoreTests.text("nope", "missing", in: "team", from: "alice", at: 30)
        let notFound = await #expect(throws: StoreError.self) { try await store.replace(IncomingMessage(registry.decode(missing))) }
        #expect(notFound?.code == .notFound)
    }

    /// A new version computed outside the store (by a plugin's action) is stored only over the copy it was computed
    /// from: once another edit came between, nothing is written and the caller is told to read again.
    @Test(arguments: StoreBackend.allCases)
    func anEditComputedFromAnOldCopyIsNotStoredOverANewerOne(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        try await store.join(member: "alice", conversation: "team")
        _ = try await ingest([text("m1", from: "alice", at: 10)], into: store)
        let read = try #require(try await store.message(id: "m1"))
        // Another writer edits it first.
        let first = try await store.replace(IncomingMessage(registry.decode(StoreTests.text("m1", "first edit", in: "team", from: "alice", at: 10))))
        let late = StoreTests.text("m1", "late edit", in: "team", from: "alice", at: 10)
        #expect(try await store.replace(IncomingMessage(registry.decode(late)), ifUnchangedSince: read) == nil)
        #expect(try await store.message(id: "m1")?.envelopeBytes == first.envelopeBytes)
        // Computed again from the copy now stored, it is written.
        let stored = try await store.replace(IncomingMessage(registry.decode(late)), ifUnchangedSince: first)
        #expect(stored?.envelopeBytes == late.encoded())
        #expect(try await store.message(id: "m1")?.envelopeBytes == late.encoded())
        // A message deleted since it was read is not found.
        try await store.delete(messageID: "m1")
        let gone = await #expect(throws: StoreError.self) { try await store.replace(IncomingMessage(registry.decode(late)), ifUnchangedSince: first) }
        #expect(gone?.code == .notFound)
    }

    @Test(arguments: StoreBackend.allCases)
    func aPersonalStoreMakesItsOwnerAMemberOfEveryConversation(backend: StoreBackend) async throws {
        let store = try await backend.newStore(owner: "alice")
        _ = try await ingest([text("m1", from: "bob", at: 10), text("x1", from: "carol", at: 20, in: "other")], into: store)
        #expect(try await store.members(ofConversation: "team") == ["alice"])
        #expect(try await store.conversations(member: "alice").map(\.id) == ["other", "team"])
        #expect(try await store.unreadCount(member: "alice", conversation: "team") == 1)
        #expect(try await store.unreadCount(conversation: "team") == 1)
    }

    @Test(arguments: StoreBackend.allCases)
    func countersStayCountersInABigConversation(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        let members = (0..<300).map { "member\($0)" }
        for member in members { try await store.join(member: member, conversation: "big") }
        var batch: [Envelope] = []
        for index in 0..<200 { batch.append(text("b\(index)", from: members[index % 7], at: Int64(index), in: "big")) }
        _ = try await ingest(batch, into: store)
        try await store.markRead(member: "member100", conversation: "big", upTo: "b99")
        // member0 sent 29 of the 200 (indexes 0, 7, ..., 196).
        #expect(try await store.unreadCount(member: "member0", conversation: "big") == 200 - 29)
        #expect(try await store.unreadCount(member: "member299", conversation: "big") == 200)
        #expect(try await store.unreadCount(member: "member100", conversation: "big") == 100)
        #expect(try await store.checkConsistency().problems == [])
    }

    /// The order of a member's hits tells nothing about conversations the member is not in: the same two messages
    /// come in the same order whether or not another conversation is full of one of their words.
    @Test(arguments: StoreBackend.allCases)
    func aMembersSearchOrderDoesNotDependOnOtherConversations(backend: StoreBackend) async throws {
        var orders: [[String]] = []
        for crowded in [false, true] {
            let store = try await backend.newSharedStore()
            try await store.join(member: "alice", conversation: "mine")
            var envelopes = [
                StoreTests.text("m1", "alpha zeta zeta zeta", in: "mine", from: "alice", at: 1),
                StoreTests.text("m2", "alpha alpha alpha zeta", in: "mine", from: "alice", at: 2),
            ]
            if crowded {
                envelopes += (0..<40).map { StoreTests.text("o\($0)", "alpha filler \($0)", in: "theirs", from: "bob", at: 10 + Int64($0)) }
            }
            _ = try await ingest(envelopes, into: store)
            orders.append(try await store.search(SearchQuery(parsing: "alpha zeta"), member: "alice", conversation: nil, limit: 10).map(\.message.id))
        }
        #expect(orders[0] == orders[1] && Set(orders[0]) == ["m1", "m2"], "\(orders)")
    }
}
