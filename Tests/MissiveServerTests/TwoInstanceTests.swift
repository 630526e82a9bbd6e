import Foundation
import GRDB
import Missive
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Synchronization
import Testing

/// Two `missive serve` processes on one PostgreSQL store and one data folder, as an operator runs them behind a
/// load balancer: what is sent through one reaches the members connected to the other, and the members of an
/// instance killed with SIGKILL resume on the other without losing or repeating anything.
@Suite struct TwoInstanceTests {
    @Test func membersOnEitherInstanceGetEverythingOnceAcrossAKill() async throws {
        let database = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(database) }
        let data = try Fixtures.temporaryDirectory() + "/server"
        let accounts = try ServerAccounts(path: data + "/accounts.sqlite")
        var made: [String: String] = [:]
        for name in ["a1", "a2", "b1", "b2"] { made[name] = try accounts.add(member: name) }
        let tokens = made

        let first = try await ServeProcess.start(data: data, database: database)
        defer { first.kill() }
        let second = try await ServeProcess.start(data: data, database: database)
        defer { second.kill() }
        #expect(try await first.request("POST", "/api/v1/conversations", token: tokens["a1"], body: #"{"id":"team","members":["a2","b1","b2"]}"#).status == 201)

        // a1 and a2 on the first instance, b1 and b2 on the second.
        let receivers = [
            Receiver(member: "a1", token: tokens["a1"]!, port: first.port), Receiver(member: "a2", token: tokens["a2"]!, port: first.port),
            Receiver(member: "b1", token: tokens["b1"]!, port: second.port), Receiver(member: "b2", token: tokens["b2"]!, port: second.port),
        ]
        for receiver in receivers { try await receiver.waitForHello() }

        // Each way across, before anything fails.
        #expect(try await first.send(id: "x-a1", text: "from the first", token: tokens["a1"]!) == 201)
        #expect(try await second.send(id: "x-b1", text: "from the second", token: tokens["b1"]!) == 201)
        for receiver in receivers {
            #expect(try await receiver.waitFor(["x-a1", "x-b1"], timeout: .seconds(30)), "\(receiver.member) got \(receiver.ids)")
        }

        // Senders on both instances; the first instance is killed while they send. A send the first cannot answer
        // goes again, with the same id, to the second (a 200 says the first had stored it).
        let tally = Tally()
        let count = 40
        func sendAll(_ member: String, preferring instance: ServeProcess, fallback: ServeProcess) async throws {
            for index in 0..<count {
                let id = "\(member)-\(index)"
                var status = 0
                if !(instance === first && tally.killed.load(ordering: .relaxed)) {
                    status = (try? await instance.send(id: id, text: "message \(index) from \(member)", token: tokens[member]!)) ?? 0
                }
                if status != 201 && status != 200 {
                    status = try await fallback.send(id: id, text: "message \(index) from \(member)", token: tokens[member]!)
                }
                #expect(status == 201 || status == 200, "\(id): \(status)")
                if status == 201 || status == 200 { tally.acknowledged.withLock { $0.append(id) } }
                try await Task.sleep(for: .milliseconds(60))
            }
        }
        async let fromFirst: Void = sendAll("a1", preferring: first, fallback: second)
        async let fromSecond: Void = sendAll("b1", preferring: second, fallback: second)
        // a2 reads part of the conversation through the first instance.
        #expect(try await receivers[1].waitFor(["a1-5", "b1-5"], timeout: .seconds(30)))
        let a2Mark = try #require(receivers[1].ids.last)
        #expect(try await first.request("POST", "/api/v1/conversations/team/read", token: tokens["a2"], body: #"{"upTo":"\#(a2Mark)"}"#).status == 200)
        #expect(try await receivers[0].waitFor(["a1-12"], timeout: .seconds(30)))
        first.kill()
        tally.killed.store(true, ordering: .relaxed)
        // The first instance's members come back on the second, after the last position each handled.
        for receiver in receivers.prefix(2) { receiver.failOver(to: second.port) }
        try await fromFirst
        try await fromSecond
        // b2 reads up to somewhere after the kill, through the second instance.
        #expect(try await receivers[3].waitFor(["b1-30"], timeout: .seconds(30)))
        let b2Mark = try #require(receivers[3].ids.last)
        #expect(try await second.request("POST", "/api/v1/conversations/team/read", token: tokens["b2"], body: #"{"upTo":"\#(b2Mark)"}"#).status == 200)

        let sent = Set(tally.acknowledged.withLock { $0 })
        #expect(sent.count == 2 * count)
        for receiver in receivers {
            #expect(try await receiver.waitFor(sent, timeout: .seconds(20)), "\(receiver.member) is missing \(sent.subtracting(receiver.ids).sorted())")
        }
        for receiver in receivers { await receiver.stop() }
        #expect(receivers[0].connections >= 2 && receivers[1].connections >= 2, "the first instance's members reconnected")

        // Every member got every stored message once, in the order of the store's feed, with its feed position.
        let store = try await StoreBackend.postgres.open(database, kind: .shared)
        var feed: [(position: Int64, id: String)] = []
        var position: Int64 = 0
        while true {
            let changes = try await store.changes(after: position, limit: 500)
            guard let last = changes.last else { break }
            for change in changes where change.kind == .stored && change.conversationID == "team" { feed.append((change.position, change.messageID ?? "")) }
            position = last.position
        }
        #expect(feed.count == 2 * count + 2)
        for receiver in receivers {
            let received = receiver.messages
            #expect(received.map(\.id) == feed.map(\.id), "\(receiver.member) got the messages out of order or twice")
            #expect(received.map(\.position) == feed.map(\.position), "\(receiver.member)")
        }

        // The counters are right: the store's own recount, and each member's unread count against a count of the rows.
        let report = try await store.checkConsistency()
        #expect(report.isConsistent, "\(report.problems)")
        let messages = try await store.messages(inConversation: "team")
        let marks = ["a2": a2Mark, "b2": b2Mark]
        for member in ["a1", "a2", "b1", "b2"] {
            var after = messages
            if let mark = marks[member], let index = messages.firstIndex(where: { $0.id == mark }) { after = Array(messages[(index + 1)...]) }
            let expected = after.filter { $0.senderID != member && $0.persistence == Persistence.counted }.count
            let answer = try await second.request("GET", "/api/v1/conversations/team", token: tokens[member])
            #expect(try answer.json["unreadCount"] as? Int == expected, "\(member): \(answer.text)")
            #expect(try await store.unreadCount(member: member, conversation: "team") == expected, "\(member)")
        }
    }
}

extension TwoInstanceTests {
    /// A typing indicator and a `none` message sent through one instance reach a member on the other through the
    /// feed; the member, online on the other instance, gets no push and no kept `none`; once that instance is
    /// killed and its presence rows have expired, the member gets a push.
    @Test func transientMessagesAndPresenceCrossInstances() async throws {
        let database = try await Fixtures.newPostgresDatabase()
        defer { Fixtures.dropPostgresDatabase(database) }
        let gateway = try await PushGateway.start()
        defer { Task { await gateway.stop() } }
        let data = try Fixtures.temporaryDirectory() + "/server"
        let accounts = try ServerAccounts(path: data + "/accounts.sqlite")
        let alice = try accounts.add(member: "alice"), bob = try accounts.add(member: "bob")
        let first = try await ServeProcess.start(data: data, database: database)
        defer { first.kill() }
        let second = try await ServeProcess.start(data: data, database: database, arguments: ["--push-gateway", gateway.url.absoluteString])
        defer { second.kill() }
        #expect(try await second.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#).status == 201)

        // bob on the first instance; alice sends through the second.
        let client = EventClient(port: first.port, token: bob)
        try await client.expectNext("hello")
        // The first instance writes bob's row as his connection opens, to hold for the presence lifetime.
        var waiting = Configuration()
        waiting.busyMode = .timeout(5)  // as the instances open it: they write there too
        let presence = try DatabaseQueue(path: data + "/accounts.sqlite", configuration: waiting)
        func bobsRows() async throws -> [(written: Int64, expires: Int64)] {
            try await presence.read { db in
                try Row.fetchAll(db, sql: "SELECT written_at, expires_at FROM presence WHERE member = 'bob'").map { ($0[0], $0[1]) }
            }
        }
        let rowDeadline = ContinuousClock.now + .seconds(10)
        while try await bobsRows().isEmpty && ContinuousClock.now < rowDeadline { try await Task.sleep(for: .milliseconds(20)) }
        let rows = try await bobsRows()
        #expect(rows.count == 1 && rows.allSatisfy { $0.expires - $0.written == 15_000 }, "\(rows)")
        func send(_ id: String, flag: Int) async throws -> Int {
            try await second.request(
                "POST", "/api/v1/conversations/team/messages", token: alice,
                body: #"{"id":"\#(id)","objectName":"x:note","persistence":\#(flag),"content":{"text":"\#(id)"}}"#
            ).status
        }
        #expect(try await send("typing", flag: 16) == 202)
        #expect(try await send("ping", flag: 0) == 202)
        #expect(try await send("m1", flag: 3) == 201)
        for (type, id) in [("transient", "typing"), ("transient", "ping"), ("message", "m1")] {
            let event = try await client.expectNext(type)
            let envelope = type == "transient" ? event["envelope"] as? [String: Any] : event["message"] as? [String: Any]
            #expect(envelope?["id"] as? String == id, "\(event)")
        }
        // Online on the first instance: no push, and the `none` was not kept for him.
        try await Task.sleep(for: .seconds(1))
        let early = try gateway.bodies()
        #expect(early.isEmpty, "\(early)")
        await client.close()
        _ = await client.result()
        let again = EventClient(port: first.port, token: bob)
        try await again.expectNext("hello")
        #expect(try await again.nextOtherThanMembership(timeout: .milliseconds(500)) == nil, "no kept ping")

        // The first instance dies with bob connected; once its rows expire, bob is offline everywhere. The test moves
        // their time on instead of waiting the 15 s: they hold until `expires_at`, checked above to be written + 15 s.
        first.kill()
        try await presence.write { db in try db.execute(sql: "UPDATE presence SET expires_at = written_at - 1 WHERE member = 'bob'") }
        #expect(try await send("m2", flag: 3) == 201)
        try await gateway.waitForRequests(1)
        let pushes = try gateway.bodies()
        #expect(pushes.map { $0["member"] as? String } == ["bob"] && pushes.map { $0["messageID"] as? String } == ["m2"], "\(pushes)")
        await again.close()
    }
}

/// What the senders of a test share: the ids the servers acknowledged, and whether the first instance is gone.
final class Tally: Sendable {
    let acknowledged = Mutex<[String]>([])
    let killed = Atomic<Bool>(false)
}

/// A `missive serve` child process, on a port the system chose.
final class ServeProcess: Sendable {
    let port: Int
    private let process: Process

    private init(port: Int, process: Process) {
        self.port = port
        self.process = process
    }

    /// Starts `missive serve` on `database`, with `data` as its data folder, and waits until it listens.
    static func start(data: String, database: String, arguments extra: [String] = []) async throws -> ServeProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
        process.arguments = ["serve", "--port", "0", "--data", data, "--db", database] + extra
        process.environment = Fixtures.missiveEnvironment(journal: Fixtures.scratchPath("crashes"))
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = Mutex<String>("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { lines.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        }
        let prefix = "listening on http://127.0.0.1:"
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let text = lines.withLock { $0 }
            if let range = text.range(of: prefix), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                return ServeProcess(port: port, process: process)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        throw HarnessError("missive serve did not start: \(lines.withLock { $0 })")
    }

    /// Ends the process at once (SIGKILL), as a crash or an out-of-memory kill does, and waits for it.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// One request to this instance.
    func request(_ method: String, _ path: String, token: String?, body: String? = nil) async throws -> HTTPAnswer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 10
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Fixtures.load(request)
        let http = try #require(response as? HTTPURLResponse)
        return HTTPAnswer(status: http.statusCode, body: Array(data), headers: [:])
    }

    /// Sends an `MS:Text` with the id `id` to `team`; the answer's status.
    func send(id: String, text: String, token: String) async throws -> Int {
        try await request("POST", "/api/v1/conversations/team/messages", token: token, body: #"{"id":"\#(id)","objectName":"MS:Text","content":{"content":"\#(text)"}}"#).status
    }
}

/// A member's event stream that follows its member across instances: when its connection ends, it connects to
/// the instance it is told to fail over to, after the position of the last event it handled.
final class Receiver: Sendable {
    let member: String
    private let token: String
    private struct State {
        var client: EventClient
        var messages: [(position: Int64, id: String)] = []
        var hello = false
        var failOver: Int?
        var connections = 1
    }
    private let state: Mutex<State>
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(member: String, token: String, port: Int) {
        self.member = member
        self.token = token
        state = Mutex(State(client: EventClient(port: port, token: token)))
        let task = Task { [self] in await self.read() }
        self.task.withLock { $0 = task }
    }

    /// The messages received, in order, with their positions.
    var messages: [(position: Int64, id: String)] { state.withLock { $0.messages } }
    /// The ids received, in order.
    var ids: [String] { messages.map(\.id) }
    /// How many connections it made.
    var connections: Int { state.withLock { $0.connections } }

    /// Reads frames until stopped; reconnects after `?after=` when the connection ends and a fail-over is set.
    private func read() async {
        while !Task.isCancelled {
            let client = state.withLock { $0.client }
            let frame = try? await client.next(timeout: .milliseconds(100))
            if let frame {
                state.withLock { state in
                    switch frame["type"] as? String {
                    case "hello": state.hello = true
                    case "message":
                        let id = (frame["message"] as? [String: Any])?["id"] as? String ?? "?"
                        state.messages.append(((frame["position"] as? NSNumber)?.int64Value ?? -1, id))
                    default: break
                    }
                }
                continue
            }
            if client.hasEnded, let port = state.withLock({ $0.failOver }) {
                let next = EventClient(port: port, token: token, after: client.position)
                state.withLock { state in
                    state.client = next
                    state.connections += 1
                }
            }
        }
    }

    /// After this, a connection that ends is made again to `port`.
    func failOver(to port: Int) {
        state.withLock { $0.failOver = port }
    }

    /// Waits for the first `hello`.
    func waitForHello() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !state.withLock({ $0.hello }) {
            guard ContinuousClock.now < deadline else { throw HarnessError("\(member): no hello") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until every id of `ids` has come; whether they did within `timeout`.
    func waitFor(_ expected: some Collection<String>, timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if Set(ids).isSuperset(of: expected) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return Set(ids).isSuperset(of: expected)
    }

    /// Stops reading and closes the connection.
    func stop() async {
        task.withLock { $0 }?.cancel()
        await task.withLock { $0 }?.value
        await state.withLock { $0.client }.close()
    }
}
