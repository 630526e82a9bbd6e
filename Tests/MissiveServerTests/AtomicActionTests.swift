import Foundation
import Missive
import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Actions are atomic in the store: two server instances on one database (each with its own connections to it)
/// run actions on one message at once, and none is lost.
@Suite struct AtomicActionTests {
    @Test(arguments: StoreBackend.allCases)
    func twentyVotesThroughTwoInstancesOnOneStoreAreEachCountedOnce(backend: StoreBackend) async throws {
        let first = try await RunningServer.start(backend)
        // The second instance: the same data folder (accounts, media) and store, opened again: its own store handle.
        let second = try await RunningServer.start(
            backend, dataDirectory: first.server.configuration.dataDirectory, store: first.server.configuration.storeLocation)
        let names = (0..<20).map { "voter\($0)" }
        var tokens: [String] = []
        for name in names { tokens.append(try first.member(name)) }
        try await first.makeConversation("all", token: tokens[0], members: Array(names.dropFirst()))
        let poll = #"{"id":"p","objectName":"demo:poll","content":{"question":"When?","options":["Mon","Tue","Wed"]}}"#
        #expect(try await first.send(poll, to: "all", token: tokens[0]).status == 201)

        let answers = try await withThrowingTaskGroup(of: (Int, HTTPAnswer).self) { group in
            for (index, token) in tokens.enumerated() {
                group.addTask {
                    let instance = index.isMultiple(of: 2) ? first : second
                    return (index, try await instance.act("vote", on: "p", in: "all", token: token, arguments: #"[\#(index % 3), "\#(names[index])"]"#))
                }
            }
            return try await group.reduce(into: [Int: HTTPAnswer]()) { $0[$1.0] = $1.1 }
        }
        for (index, answer) in answers.sorted(by: { $0.key < $1.key }) {
            #expect(answer.status == 200, "vote \(index) through instance \(index % 2 + 1): \(answer.status) \(answer.text)")
        }
        // Read back through the other handle too: both see every vote once.
        for store in [first.server.store, second.server.store] {
            let tallies = try await ActionTests.tallies(store, "p")
            #expect(tallies.votes == [7, 7, 6], "\(store.location): \(tallies)")
            #expect(tallies.voters == Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0 % 3) }), "\(tallies.voters)")
        }
        let edits = try await first.server.store.changes(after: 0, limit: 1000).filter { $0.kind == .edited && $0.messageID == "p" }
        #expect(edits.count == 20)
        #expect(try await second.server.store.checkConsistency().problems == [])
        await second.stop()
        await first.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func twoInstancesMakingOneConversationIdAtOnceLetExactlyOneWin(backend: StoreBackend) async throws {
        let first = try await RunningServer.start(backend)
        let second = try await RunningServer.start(
            backend, dataDirectory: first.server.configuration.dataDirectory, store: first.server.configuration.storeLocation)
        let alice = try first.member("alice")
        let eve = try first.member("eve")
        _ = try first.member("bob")
        // Alice makes each id with bob through one instance while eve makes it alone through the other. Were the
        // check and the joins not one step across instances, both would be answered 201 and eve would sit in
        // alice's conversation with bob.
        for round in 0..<12 {
            let id = "room\(round)"
            let aliceFirst = round.isMultiple(of: 2)
            async let byAlice = (aliceFirst ? first : second).request(
                "POST", "/api/v1/conversations", token: alice, body: #"{"id":"\#(id)","members":["bob"]}"#)
            async let byEve = (aliceFirst ? second : first).request("POST", "/api/v1/conversations", token: eve, body: #"{"id":"\#(id)","members":[]}"#)
            let answers = try await [byAlice, byEve]
            #expect(answers.map(\.status).sorted() == [201, 409], "\(id): \(answers.map { "\($0.status) \($0.text)" })")
            let members = try await first.server.store.members(ofConversation: id).sorted()
            #expect(members == (answers[0].status == 201 ? ["alice", "bob"] : ["eve"]), "\(id): \(members)")
        }
        await second.stop()
        await first.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func theStoresAtomicReplaceAppliesConcurrentEditsThroughTwoHandlesEachOnce(backend: StoreBackend) async throws {
        // The store alone: two handles on one database, 40 increments of a counter in a message's content at once.
        let location = try await backend.newLocation()
        let one = try await backend.open(location, kind: .shared)
        let two = try await backend.open(location, kind: .shared)
        let registry = try Fixtures.sampleRegistry()
        let envelope = try Envelope(parsing: Array(#"{"id":"c","conversationID":"k","senderID":"alice","sentAt":1,"objectName":"x:counter","content":{"n":0}}"#.utf8))
        _ = try await one.join(member: "alice", conversation: "k")
        #expect(try await one.ingest([envelope], registry: registry).outcomes.count == 1)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    try await (index.isMultiple(of: 2) ? one : two).replace(messageID: "c") { stored in
                        var edited = try stored.envelope()
                        let object = try JSONSerialization.jsonObject(with: Data(edited.content)) as? [String: Int]
                        edited.content = Array(#"{"n":\#((object?["n"] ?? -1) + 1)}"#.utf8)
                        return IncomingMessage(registry.decode(edited))
                    }
                }
            }
            try await group.waitForAll()
        }
        let stored = try #require(try await two.message(id: "c"))
        #expect(String(decoding: try stored.envelope().content, as: UTF8.self) == #"{"n":40}"#)
        // A transform's own error comes out as it was thrown, and nothing is written.
        struct Refusal: Error {}
        await #expect(throws: Refusal.self) { try await one.replace(messageID: "c") { _ in throw Refusal() } }
        await #expect(throws: StoreError.self) { try await one.replace(messageID: "nope") { _ in throw Refusal() } }
        #expect(try await one.message(id: "c")?.envelopeBytes == stored.envelopeBytes)
        let changes = try await one.changes(after: 0, limit: 1000).filter { $0.kind == .edited }
        #expect(changes.count == 40)
    }
}
