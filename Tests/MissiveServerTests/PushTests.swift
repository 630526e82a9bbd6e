import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import Logging
import Missive
@testable import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Synchronization
import Testing

/// Pushes to a real gateway: an HTTP server in this process that records every POST and answers as each test
/// scripts it, with a server whose retry policy waits milliseconds instead of seconds.
@Suite struct PushTests {
    /// A new message of each stored flag, and `none`, is pushed to the member with no connection, with its unread
    /// count; not to the sender, not to the member online, never for `status`, and not again for a retried send.
    @Test(arguments: StoreBackend.allCases)
    func eachNewMessageIsPushedToTheMembersOfflineOnly(backend: StoreBackend) async throws {
        let gateway = try await PushGateway.start()
        let running = try await PushServer.start(backend, gateway: gateway.url, transport: .live)
        let alice = try running.member("alice")
        _ = try running.member("bob")
        let carol = try running.member("carol")
        try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob","carol"]}"#, expecting: 201)
        let online = EventClient(port: running.port, token: carol)
        try await online.expectNext("hello")

        func send(_ id: String, _ flag: Int) async throws {
            let expected = flag == 0 || flag == 16 ? 202 : 201
            try await running.request(
                "POST", "/api/v1/conversations/team/messages", token: alice,
                body: #"{"id":"\#(id)","objectName":"x:flag","persistence":\#(flag),"content":{"n":1},"pushContent":"ping \#(id)"}"#, expecting: expected)
        }
        try await send("c1", 3)
        try await gateway.waitForRequests(1)
        try await send("p1", 1)
        try await gateway.waitForRequests(2)
        try await send("s1", 16)
        try await send("n1", 0)
        try await gateway.waitForRequests(3)
        // The retry of c1 is answered with the stored message, and pushes nothing.
        try await running.request(
            "POST", "/api/v1/conversations/team/messages", token: alice,
            body: #"{"id":"c1","objectName":"x:flag","persistence":3,"content":{"n":1},"pushContent":"ping c1"}"#, expecting: 200)
        await running.settled()

        let pushes = try gateway.bodies()
        #expect(pushes.count == 3, "\(pushes)")
        #expect(pushes.map { $0["messageID"] as? String } == ["c1", "p1", "n1"])
        for push in pushes {
            #expect(push["member"] as? String == "bob" && push["sender"] as? String == "alice" && push["conversation"] as? String == "team", "\(push)")
            #expect(push["objectName"] as? String == "x:flag" && push["text"] as? String == "ping \(push["messageID"] as? String ?? "")", "\(push)")
            #expect((push["sentAt"] as? NSNumber)?.int64Value ?? 0 > 1_600_000_000_000, "the server's time: \(push)")
        }
        // c1 is counted (bob has 1 unread), p1 is not, and n1 is not stored: still 1.
        #expect(pushes.map { ($0["unreadCount"] as? NSNumber)?.intValue } == [1, 1, 1])
        #expect(gateway.paths() == Array(repeating: "/push", count: 3))
        #expect(!FileManager.default.fileExists(atPath: running.configuration.pushDeadLettersPath))
        await online.close()
        await running.stop()
        await gateway.stop()
    }

    /// The text is the type's push text when the server has the type; else the sender's `pushContent`, else its
    /// `fallbackText`, else "New message".
    @Test(arguments: StoreBackend.allCases)
    func thePushTextComesFromTheTypeElseFromTheSender(backend: StoreBackend) async throws {
        let gateway = try await PushGateway.start()
        let running = try await PushServer.start(backend, gateway: gateway.url)
        let alice = try running.member("alice")
        _ = try running.member("bob")
        try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#, expecting: 201)
        let envelopes = [
            #"{"id":"k1","objectName":"demo:poll","content":{"question":"Lunch?","options":["Pizza","Sushi"]},"pushContent":"the sender's"}"#,
            #"{"id":"u1","objectName":"x:custom","content":{"a":1},"pushContent":"You have an order","fallbackText":"order"}"#,
            #"{"id":"u2","objectName":"x:custom","content":{"a":1},"fallbackText":"an order"}"#,
            #"{"id":"u3","objectName":"x:custom","content":{"a":1}}"#,
        ]
        for (index, envelope) in envelopes.enumerated() {
            try await running.request("POST", "/api/v1/conversations/team/messages", token: alice, body: envelope, expecting: 201)
            try await gateway.waitForRequests(index + 1)
        }
        let texts = try gateway.bodies().map { $0["text"] as? String }
        #expect(texts == ["[Poll] Lunch?", "You have an order", "an order", "New message"])
        await running.stop()
        await gateway.stop()
    }

    /// A gateway that answers `503` twice gets the same push a third time, and takes it; nothing is dead-lettered.
    /// Each try carries the credential: a bearer token, or a signature of its time and body that the gateway can
    /// check with the shared secret (and that fails for any other body, time or secret).
    @Test func eachPushCarriesTheConfiguredCredential() async throws {
        let secret = Array("a shared secret of thirty-two bytes or more".utf8)
        // The check docs/SERVER.md shows a gateway, in Python: hmac.new(b"k", b"1." + b"x", hashlib.sha256).hexdigest().
        #expect(PushCredential.signature(of: Array("x".utf8), at: "1", secret: Array("k".utf8)) == "976cb87e4f568d1c0f03f32859e90af8597cf00b978ba37c229c97d3a15b8449")
        for credential in [PushCredential.bearer("gateway-token-0123456789"), .hmacSHA256(secret: secret)] {
            let gateway = try await PushGateway.start { count in count == 1 ? .serviceUnavailable : .ok }
            let running = try await PushServer.start(.sqlite, gateway: gateway.url, credential: credential)
            try await running.sendOne()
            try await gateway.waitForRequests(2)
            await running.settled()
            for (headers, body) in zip(gateway.headers(), gateway.rawBodies()) {
                switch credential {
                case .bearer:
                    #expect(headers[.authorization] == "Bearer gateway-token-0123456789")
                case .hmacSHA256:
                    #expect(headers[.authorization] == nil)
                    let timestamp = try #require(headers[HTTPField.Name("Missive-Timestamp")!])
                    let signature = try #require(headers[HTTPField.Name("Missive-Signature")!])
                    #expect(abs((Int64(timestamp) ?? 0) - Int64(Date().timeIntervalSince1970)) < 120)
                    #expect(signature == "v1=" + PushCredential.signature(of: body, at: timestamp, secret: secret))
                    #expect(signature != "v1=" + PushCredential.signature(of: body + [0x20], at: timestamp, secret: secret))
                    #expect(signature != "v1=" + PushCredential.signature(of: body, at: String((Int64(timestamp) ?? 0) + 1), secret: secret))
                    #expect(signature != "v1=" + PushCredential.signature(of: body, at: timestamp, secret: secret.dropLast() + [UInt8(ascii: "!")]))
                }
            }
            await running.stop()
            await gateway.stop()
        }
    }

    /// A gateway's redirect is not followed (it would carry the credential elsewhere): the push is refused, and the
    /// dead-letter file says so.
    @Test func aRedirectIsNotFollowedWithTheCredential() async throws {
        let gateway = try await PushGateway.start(location: "/push") { count in count == 1 ? .temporaryRedirect : .ok }
        let running = try await PushServer.start(.sqlite, gateway: gateway.url, credential: .bearer("gateway-token-0123456789"))
        try await running.sendOne()
        let letter = try await running.waitForDeadLetters(1)[0]
        #expect(letter["lastError"] as? String == "the gateway answered 307", "\(letter)")
        #expect(gateway.rawBodies().count == 1, "the redirect's target got nothing")
        await running.stop()
        await gateway.stop()
    }

    @Test func aGatewayThatFailsTwiceGetsThePushOnTheThirdTry() async throws {
        let gateway = try await PushGateway.start { count in count <= 2 ? .serviceUnavailable : .ok }
        let running = try await PushServer.start(.sqlite, gateway: gateway.url)
        try await running.sendOne()
        try await gateway.waitForRequests(3)
        await running.settled()
        let bodies = gateway.rawBodies()
        #expect(bodies.count == 3 && Set(bodies).count == 1, "the same push, three times: \(bodies.map { String(decoding: $0, as: UTF8.self) })")
        #expect(!FileManager.default.fileExists(atPath: running.configuration.pushDeadLettersPath))
        await running.stop()
        await gateway.stop()
    }

    /// A gateway that always fails, or that is down, gets the push as many times as the policy tries; then one line
    /// goes to the dead-letter file (readable by the server's user only) with the push, the tries and the reason.
    @Test(arguments: [true, false])
    func aPushNeverTakenGoesToTheDeadLetterFileAfterTheLastTry(gatewayIsUp: Bool) async throws {
        let gateway = try await PushGateway.start { _ in .internalServerError }
        let url = gatewayIsUp ? gateway.url : URL(string: "http://127.0.0.1:\(try await PushGateway.closedPort())/push")!
        let running = try await PushServer.start(.sqlite, gateway: url, attempts: 3)
        try await running.sendOne()
        let letter = try await running.waitForDeadLetters(1)[0]
        #expect(letter["attempts"] as? Int == 3, "\(letter)")
        let reason = try #require(letter["lastError"] as? String)
        if gatewayIsUp {
            #expect(gateway.rawBodies().count == 3)
            #expect(reason == "the gateway answered 500")
        } else {
            #expect(reason.contains("cannot connect to the gateway"), "\(reason)")
        }
        let push = try #require(letter["push"] as? [String: Any])
        #expect(push["member"] as? String == "bob" && push["messageID"] as? String == "m1" && push["text"] as? String == "hello", "\(push)")
        #expect(letter["gateway"] as? String == url.absoluteString)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: running.configuration.pushDeadLettersPath)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)
        await running.stop()
        await gateway.stop()
    }

    /// A `400` is the gateway refusing the push: it is not tried again, and goes to the dead-letter file at once.
    @Test func aRefusedPushIsNotRetried() async throws {
        let gateway = try await PushGateway.start { _ in .badRequest }
        let running = try await PushServer.start(.sqlite, gateway: gateway.url)
        try await running.sendOne()
        let letter = try await running.waitForDeadLetters(1)[0]
        #expect(letter["attempts"] as? Int == 1 && letter["lastError"] as? String == "the gateway answered 400", "\(letter)")
        await running.settled()
        #expect(gateway.rawBodies().count == 1)
        await running.stop()
        await gateway.stop()
    }

    /// A `429` with `Retry-After: 1` is tried again after that second, not after the policy's few milliseconds.
    @Test func aGatewaysRetryAfterIsHonoured() async throws {
        let gateway = try await PushGateway.start(retryAfter: "1") { count in count == 1 ? .tooManyRequests : .ok }
        let running = try await PushServer.start(.sqlite, gateway: gateway.url)
        try await running.sendOne()
        try await gateway.waitForRequests(2)
        let times = gateway.times()
        #expect(times.count == 2)
        if times.count == 2 { #expect(times[1] - times[0] >= .milliseconds(950), "\(times[1] - times[0])") }
        await running.stop()
        await gateway.stop()
    }
}

// MARK: The gateway

/// An HTTP server on loopback that records every request to it and answers with the status `answer` gives for
/// the request's number (1 for the first).
final class PushGateway: Sendable {
    private struct Received {
        var path: String
        var headers: HTTPFields
        var body: [UInt8]
        var time: ContinuousClock.Instant
    }

    private let received = Mutex<[Received]>([])
    private let task = Mutex<Task<Void, any Error>?>(nil)
    private let port = Mutex(0)

    var url: URL { URL(string: "http://127.0.0.1:\(port.withLock { $0 })/push")! }

    /// Starts a gateway; stop it with ``stop()``.
    static func start(
        retryAfter: String? = nil, location: String? = nil, answer: @escaping @Sendable (_ count: Int) -> HTTPResponse.Status = { _ in .ok }
    ) async throws -> PushGateway {
        let gateway = PushGateway()
        let router = Router()
        router.post("push") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let count = gateway.received.withLock { received in
                received.append(Received(path: request.uri.path, headers: request.headers, body: Array(body.readableBytesView), time: .now))
                return received.count
            }
            var headers = HTTPFields()
            if let retryAfter { headers[.retryAfter] = retryAfter }
            if let location { headers[.location] = location }
            return Response(status: answer(count), headers: headers)
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: Logger(label: "gateway") { _ in SwiftLogNoOpLogHandler() })
        let task = Task {
            defer { continuation.finish() }
            try await application.runService(gracefulShutdownSignals: [])
        }
        gateway.task.withLock { $0 = task }
        guard let port = await ports.first(where: { _ in true }) else { throw HarnessError("the gateway did not start: \(await task.result)") }
        gateway.port.withLock { $0 = port }
        return gateway
    }

    /// A port of loopback on which nothing listens: one a gateway had, after it stopped.
    static func closedPort() async throws -> Int {
        let gateway = try await start()
        let port = gateway.port.withLock { $0 }
        await gateway.stop()
        return port
    }

    func stop() async {
        let task = task.withLock { $0 }
        task?.cancel()
        _ = try? await task?.value
    }

    /// Waits until `count` requests came (60 s at most).
    func waitForRequests(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while received.withLock({ $0.count }) < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(received.withLock { $0.count } >= count, "the gateway got \(received.withLock { $0.count }) requests, not \(count)", sourceLocation: sourceLocation)
    }

    func rawBodies() -> [[UInt8]] { received.withLock { $0.map(\.body) } }
    func paths() -> [String] { received.withLock { $0.map(\.path) } }
    func headers() -> [HTTPFields] { received.withLock { $0.map(\.headers) } }
    func times() -> [ContinuousClock.Instant] { received.withLock { $0.map(\.time) } }

    /// The bodies received, each a JSON object.
    func bodies() throws -> [[String: Any]] {
        try rawBodies().map { body in
            try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], "\(String(decoding: body, as: UTF8.self))")
        }
    }
}

// MARK: The server

/// A `ChatServer` with a push gateway and a retry policy of milliseconds, reached through its router, or on
/// loopback (`.live`) for a test that connects a member's event stream. Each try may take 30 s: on a loaded machine
/// the in-process gateway can take seconds to answer, and a try that timed out after the gateway had recorded it
/// would be retried and recorded twice. No test here needs a try to time out.
struct PushServer {
    let running: RunningServer

    var server: ChatServer { running.server }
    var port: Int { running.port }
    var configuration: ServerConfiguration { server.configuration }

    static func start(
        _ backend: StoreBackend, gateway: URL, credential: PushCredential? = nil, attempts: Int = 5, transport: RunningServer.Transport = .router
    ) async throws -> PushServer {
        PushServer(
            running: try await RunningServer.start(backend, transport: transport) { configuration in
                configuration.pushGateway = gateway
                configuration.pushCredential = credential
                configuration.pushPolicy = PushPolicy(attempts: attempts, initialDelay: .milliseconds(20), maximumDelay: .seconds(2), timeout: .seconds(30))
            })
    }

    func stop() async {
        await running.stop()
    }

    /// Waits until no push is queued or being sent: after it, the gateway gets nothing more from what was sent.
    func settled() async {
        await server.pushes?.settled()
    }

    func member(_ name: String) throws -> String {
        try running.member(name)
    }

    /// One request, whose answer must have the status `expecting`.
    func request(
        _ method: String, _ path: String, token: String, body: String, expecting status: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let answer = try await running.request(method, path, token: token, body: body)
        #expect(answer.status == status, "\(method) \(path): \(answer.status) \(answer.text)", sourceLocation: sourceLocation)
    }

    /// Alice sends "hello" (`m1`, `MS:Text`) to bob, who is not connected.
    func sendOne() async throws {
        let alice = try member("alice")
        _ = try member("bob")
        try await request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#, expecting: 201)
        try await request(
            "POST", "/api/v1/conversations/team/messages", token: alice, body: #"{"id":"m1","objectName":"MS:Text","content":{"content":"hello"}}"#,
            expecting: 201)
    }

    /// Waits until the dead-letter file has `count` lines (60 s at most: the tries before a dead letter each may
    /// take up to the policy's timeout on a loaded machine), and returns them.
    func waitForDeadLetters(_ count: Int) async throws -> [[String: Any]] {
        let path = configuration.pushDeadLettersPath
        let deadline = ContinuousClock.now + .seconds(60)
        func lines() -> [String] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        while lines().count < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let found = lines()
        try #require(found.count == count, "\(found)")
        return try found.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)") }
    }
}
