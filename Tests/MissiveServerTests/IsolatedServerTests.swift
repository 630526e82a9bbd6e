import Foundation
import Missive
import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// A server whose plugins run isolated (docs/PROTECTION.md, "Isolated plugins"): a member's message that crashes or
/// hangs a plugin costs that message, never the server, which runs in this test process.
struct IsolatedServerTests {
    /// The plugins of `products`, every one isolated, with a call's clock limit of `wallSeconds`.
    static func isolated(_ products: [String], wallSeconds: Double) async throws -> DiscoveryResult {
        var protection = PluginProtection()
        protection.isolation = PluginIsolation(
            policy: .isolated, workerCommand: [Fixtures.buildDirectory + "/" + PluginIsolation.workerExecutableName], callCPUSeconds: 0.5,
            callWallSeconds: wallSeconds)
        // Starting the workers blocks: on a thread of its own, not one the other tests share.
        let folder = try Fixtures.stage(products)
        let discovery = try await Fixtures.blocking { MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), protection: protection) }
        #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
        return discovery
    }

    @Test func aMessageThatCrashesOrHangsAnIsolatedPluginIsStoredAsUnknownAndTheServerGoesOn() async throws {
        let discovery = try await Self.isolated(["BrokenMisbehavesOnMessage", "DemoMessages"], wallSeconds: 3)
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

extension IsolatedServerTests {
    /// Messages that hang their isolated plugin wait for their worker on threads of their own: while they would hold
    /// every thread of the concurrency pool, another member's request is answered at once.
    @Test func requestsThatTouchNoPluginAreAnsweredWhileMessagesWaitForTheirWorker() async throws {
        let discovery = try await Self.isolated(["BrokenMisbehavesOnMessage"], wallSeconds: 1)
        let running = try await RunningServer.start(.sqlite, registry: discovery.registry)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        // One more message than the concurrency pool has threads: each waits 1 s, then 1 s again on a new worker, and
        // the plugin takes one call at a time, so the first answers after 2 s and the last 2 s per message later.
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        let clock = ContinuousClock()
        let sends = Task {
            try await withThrowingTaskGroup(of: (status: Int, at: ContinuousClock.Instant).self) { group in
                for index in 0..<count {
                    group.addTask {
                        let body = #"{"id":"s\#(index)","objectName":"fixture:moody","content":{"say":"sleep"}}"#
                        return (try await running.send(body, to: "team", token: alice).status, clock.now)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let asked = clock.now
        let me = try await running.request("GET", "/api/v1/me", token: bob)
        let answered = clock.now
        let sent = try await sends.value
        #expect(me.status == 200)
        #expect(sent.allSatisfy { $0.status == 201 }, "\(sent.map(\.status))")
        let firstSend = try #require(sent.map(\.at).min())
        #expect(answered < firstSend, "GET /me took \(answered - asked), the first hanging message answered \(firstSend - asked) after it was asked")
        for index in 0..<count {
            let stored = try #require(try await running.server.store.message(id: "s\(index)"))
            #expect(stored.reason?.hasPrefix("the plugin crashed on this message") == true, "s\(index): \(stored.reason ?? "no reason")")
        }
        await running.stop()
    }
}

extension IsolatedServerTests {
    /// A message that hung its isolated plugin costs the plugin's deadline once: the pages that draw it later, its
    /// actions, and a server started again on the same store answer from the failure the store keeps, as fast as the
    /// same page without the message (on a quiet machine, in milliseconds). The bound is half the deadline: without
    /// the memory a view would wait the whole deadline, twice (a new worker tries again), while a busy machine, which
    /// slows both pages, can add a second or so to the one drawn second.
    @Test func aMessageThatHungItsPluginCostsItsDeadlineOnceOnEveryPageAndAfterARestart() async throws {
        let deadline = 4.0
        let bound = Duration.seconds(deadline / 2)
        let discovery = try await Self.isolated(["BrokenMisbehavesOnMessage"], wallSeconds: deadline)
        let running = try await RunningServer.start(.sqlite, registry: discovery.registry)
        let alice = try running.member("alice")
        try await running.makeConversation("team", token: alice)
        for (id, word) in [("m1", "fine"), ("m2", "sleep")] {
            let answer = try await running.send(#"{"id":"\#(id)","objectName":"fixture:moody","content":{"say":"\#(word)"}}"#, to: "team", token: alice)
            #expect(answer.status == 201, "\(id): \(answer.status) \(answer.text)")
        }
        let stored = try #require(try await running.server.store.message(id: "m2"))
        #expect(stored.reason?.hasPrefix("the plugin crashed on this message: its worker") == true, "\(stored.reason ?? "no reason")")
        let clock = ContinuousClock()
        /// A page, or any request, and how long it took.
        func timed(_ request: () async throws -> HTTPAnswer) async throws -> (HTTPAnswer, Duration) {
            let start = clock.now
            let answer = try await request()
            return (answer, clock.now - start)
        }
        // The same page without the message, as the measure of what a page costs on this machine now: without the
        // memory, each view of the page with it would wait the deadline for the message's worker, then again on a new one.
        try await running.makeConversation("calm", token: alice)
        let calm = try await running.send(#"{"id":"c1","objectName":"fixture:moody","content":{"say":"fine"}}"#, to: "calm", token: alice)
        #expect(calm.status == 201, "\(calm.text)")
        let cookie = try await running.signIn(alice)
        _ = try await running.browserRequest("GET", "/c/calm", cookie: cookie)
        for view in 1...2 {
            let (control, usual) = try await timed { try await running.browserRequest("GET", "/c/calm", cookie: cookie) }
            let (page, took) = try await timed { try await running.browserRequest("GET", "/c/team", cookie: cookie) }
            #expect(control.status == 200 && page.status == 200, "\(page.text)")
            #expect(
                took < usual + bound,
                "page view \(view) took \(took), the page without the message \(usual); remembered: \(discovery.registry.pluginFailureMemories.map(\.failures))")
        }
        let (_, usualActions) = try await timed { try await running.request("GET", "/api/v1/conversations/calm/messages/c1/actions", token: alice) }
        let (actions, took) = try await timed { try await running.request("GET", "/api/v1/conversations/team/messages/m2/actions", token: alice) }
        #expect(actions.status == 200 && took < usualActions + bound, "\(actions.status) in \(took), another message's in \(usualActions)")
        // Started again on the same store with a new registry (its plugin staged anew: another path, the same build).
        let data = running.server.configuration.dataDirectory
        let store = running.server.configuration.storeLocation
        await running.stop()
        let again = try await Self.isolated(["BrokenMisbehavesOnMessage"], wallSeconds: deadline)
        let restarted = try await RunningServer.start(.sqlite, dataDirectory: data, store: store, registry: again.registry)
        let newCookie = try await restarted.signIn(alice)
        let (_, usualAfter) = try await timed { try await restarted.browserRequest("GET", "/c/calm", cookie: newCookie) }
        let (page, tookAfter) = try await timed { try await restarted.browserRequest("GET", "/c/team", cookie: newCookie) }
        #expect(page.status == 200 && tookAfter < usualAfter + bound, "\(page.status) in \(tookAfter) after the restart, the page without it \(usualAfter)")
        #expect(again.registry.pluginFailureMemories.first?.failures.map(\.key.operation) == [.decode])
        await restarted.stop()
    }
}

extension IsolatedServerTests {
    /// An isolated plugin whose worker cannot start (here no worker executable; in production, say, a kernel that refuses
    /// the namespaces) leaves its types' messages waiting for it: a member's send is stored as unknown with that reason,
    /// not refused as if the plugin had refused the content (`422`).
    @Test func aMessageForAPluginWhoseWorkerCannotStartIsStoredToWaitForIt() async throws {
        let folder = try Fixtures.stage(["DemoMessages"])
        var protection = PluginProtection()
        protection.isolation = PluginIsolation(policy: .isolated, workerCommand: [folder + "/no-such-worker"], callCPUSeconds: 0.5, callWallSeconds: 2)
        let discovery = try await Fixtures.blocking { MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), protection: protection) }
        #expect(discovery.registry.type(objectName: "demo:poll") != nil, "the plugin's types are registered from its metadata")
        let running = try await RunningServer.start(.sqlite, registry: discovery.registry)
        let alice = try running.member("alice")
        try await running.makeConversation("team", token: alice)
        let poll = #"{"id":"p1","objectName":"demo:poll","content":{"question":"Lunch?","options":["Pizza","Sushi"]}}"#
        let answer = try await running.send(poll, to: "team", token: alice)
        #expect(answer.status == 201, "\(answer.status) \(answer.text)")
        let stored = try #require(try await running.server.store.message(id: "p1"))
        #expect(!stored.isKnown)
        #expect(stored.reason?.hasPrefix("the type's plugin is not loaded") == true, "\(stored.reason ?? "no reason")")
        #expect(stored.reason?.contains("no-such-worker") == true, "the reason names what failed: \(stored.reason ?? "no reason")")
        await running.stop()
    }
}
