import Foundation
import Missive
import MissiveServer
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// A server whose plugins run isolated (docs/PROTECTION.md, "Isolated plugins"): a member's message that crashes or
/// hangs a plugin costs that message, never the server, which runs in this test process.
struct IsolatedServerTests {
    @Test func aMessageThatCrashesOrHangsAnIsolatedPluginIsStoredAsUnknownAndTheServerGoesOn() async throws {
        var protection = PluginProtection()
        protection.isolation = PluginIsolation(
            policy: .isolated, workerCommand: [Fixtures.buildDirectory + "/" + PluginIsolation.workerExecutableName], callCPUSeconds: 0.5,
            callWallSeconds: 3)
        let discovery = MessageRegistry.discover(
            searchPath: Fixtures.searchPath(try Fixtures.stage(["BrokenMisbehavesOnMessage", "DemoMessages"])), protection: protection)
        #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
        #expect(discovery.discovery.isolatedPlugins.count == 2)
        let running = try await RunningServer.start(.sqlite, registry: discovery.registry)
        let alice = try running.member("alice")
        _ = try running.member("bob")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        for (id, word) in [("m1", "fine"), ("m2", "crash"), ("m3", "hang"), ("m4", "fine")] {
            let answer = try await running.send(#"{"id":"\#(id)","objectName":"fixture:moody","content":{"say":"\#(word)"}}"#, to: "team", token: alice)
            #expect(answer.status == 201, "\(id): \(answer.status) \(answer.text)")
        }
        for id in ["m1", "m4"] {
            #expect(try await running.server.store.message(id: id)?.isKnown == true, "\(id)")
        }
        for id in ["m2", "m3"] {
            let stored = try #require(try await running.server.store.message(id: id))
            #expect(!stored.isKnown)
            #expect(stored.reason?.hasPrefix("the plugin crashed on this message") == true, "\(id): \(stored.reason ?? "no reason")")
        }
        // The isolated sample plugin's actions run in its worker, through the server's action route.
        let poll = #"{"id":"p1","objectName":"demo:poll","content":{"question":"Lunch?","options":["Pizza","Sushi"]}}"#
        #expect(try await running.send(poll, to: "team", token: alice).status == 201)
        let voted = try await running.act("vote", on: "p1", in: "team", token: alice, arguments: #"[1, "alice"]"#)
        #expect(voted.status == 200, "\(voted.text)")
        let tally = try #require(try await running.server.store.message(id: "p1"))
        #expect(String(decoding: try tally.envelope().content, as: UTF8.self).contains("alice"), "the vote is in the stored poll")
        #expect(try await running.request("GET", "/api/v1/conversations/team/messages", token: alice).status == 200)
        await running.stop()
    }
}
