import Foundation
import Logging
@testable import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Synchronization
import Testing

/// Limits for everyone, members or not: failed sign-ins per client address, connections per address and per
/// member, the time to send a request's head, headers that cannot be read, and the bytes that may wait for a client
/// that stopped reading. Each abuse gets its defined answer, and a member's normal request during it is answered.
@Suite struct StrangerLimitTests {
    /// The lines the server logs, for the security events.
    final class LogLines: Sendable {
        let lines = Mutex<[String]>([])

        var logger: Logger {
            Logger(label: "test") { _ in Handler(lines: self) }
        }

        func matching(_ prefix: String) -> [String] { lines.withLock { $0.filter { $0.hasPrefix(prefix) } } }

        struct Handler: LogHandler {
            let lines: LogLines
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .info
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                lines.lines.withLock { $0.append("\(event.message)") }
            }
        }
    }

    @Test func failedAuthenticationsOfOneAddressMeetALimitWithRetryAfterAndNobodyElseIsSlowed() async throws {
        let log = LogLines()
        var limits = ServerLimits()
        limits.failedAuthBurst = 10
        // Slow enough that a loaded machine's seconds between the requests refill nothing.
        limits.failedAuthPerSecond = 0.001
        let running = try await RunningServer.start(.sqlite, limits: limits, transport: .live, logger: log.logger) { configuration in
            // The test's requests all come from loopback: as a proxy there, each names its client.
            configuration.trustedProxies = ["127.0.0.1"]
        }
        let alice = try running.member("alice")
        let stranger = ["X-Forwarded-For": "198.51.100.1, 203.0.113.7"]
        for index in 0..<10 {
            let answer = try await running.request("GET", "/api/v1/me", token: "msv_guess\(index)", headers: stranger)
            #expect(answer.status == 401, "\(answer.text)")
        }
        // The eleventh is refused before its token is looked at, a valid one too, with the seconds to wait.
        for token in ["msv_guess10", alice] {
            let refused = try await running.request("GET", "/api/v1/me", token: token, headers: stranger)
            #expect(refused.status == 429 && refused.errorCode == "rate-limited", "\(refused.status) \(refused.text)")
            #expect((Int(refused.headers["retry-after"] ?? "") ?? 0) >= 1, "\(refused.headers)")
        }
        // The sign-in form of the page meets the same limit.
        let signIn = try await running.request(
            "POST", "/session", token: nil, body: #"{"token":"msv_guess11"}"#, headers: stranger)
        #expect(signIn.status == 429, "\(signIn.text)")
        // Another address, and the member at its own, are answered as usual.
        #expect(try await running.request("GET", "/api/v1/me", token: alice, headers: ["X-Forwarded-For": "192.0.2.9"]).status == 200)
        #expect(try await running.request("GET", "/api/v1/me", token: alice).status == 200)
        // Each failure and each refusal is a security event with the address and no token.
        let failures = log.matching("security: failed-auth")
        #expect(failures.count == 10 && failures.allSatisfy { $0.contains("address=203.0.113.7") && !$0.contains("msv_") }, "\(failures)")
        // The refusals that follow the limit are logged once for the address in a while, not once each.
        #expect(log.matching("security: address-limited").count == 1, "\(log.matching("security: address-limited"))")
        await running.stop()
    }

    /// Guesses made at once cannot all pass the check of the address's allowance: the checks in flight count.
    @Test func failedAuthenticationsMadeAtOnceKeepToTheAllowance() async throws {
        var limits = ServerLimits()
        limits.failedAuthBurst = 5
        limits.failedAuthPerSecond = 0.001
        let running = try await RunningServer.start(.sqlite, limits: limits)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 {
                group.addTask { try await running.request("GET", "/api/v1/me", token: "msv_guess\(index)").status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 401 }.count <= 5 && statuses.filter { $0 == 429 }.count >= 35, "\(statuses.sorted())")
        await running.stop()
    }

    @Test(.timeLimit(.minutes(2))) func aConnectionOverTheAddressCapIsAnswered503AndAHeadThatDoesNotComeIs408() async throws {
        let log = LogLines()
        var limits = ServerLimits()
        limits.maxConnectionsPerAddress = 3
        limits.requestHeadTimeout = .seconds(3)
        let running = try await RunningServer.start(.sqlite, limits: limits, transport: .live, logger: log.logger)
        let alice = try running.member("alice")
        let port = running.port
        // From another address of loopback (127.0.0.2): four slow clients, each trickling its head. The server takes
        // three of them (whichever it accepts first) and refuses the fourth.
        let sockets = try await Fixtures.offThePool {
            try (0..<4).map { _ in
                let socket = try loopbackSocket(port: port, from: "127.0.0.2")
                try? Raw.write(socket, "GET /api/v1/me HTTP/1.1\r\nHost: x\r\n")  // the refused one may be closed already
                return socket
            }
        }
        defer { sockets.forEach { close($0) } }
        // The member, at its own address, is answered as usual while they wait.
        #expect(try await running.request("GET", "/api/v1/me", token: alice).status == 200)
        // One is answered 503 at once; the slow ones 408 once their time is up, trickling or not.
        let answers = try await Fixtures.offThePool {
            sockets.map { socket in
                try? Raw.write(socket, "X")
                return (try? Raw.readAll(socket, seconds: 20)) ?? ""
            }
        }
        let refused = answers.filter { $0.hasPrefix("HTTP/1.1 503") }
        let timedOut = answers.filter { $0.hasPrefix("HTTP/1.1 408") }
        #expect(refused.count == 1 && timedOut.count == 3, "\(answers)")
        #expect(refused.allSatisfy { $0.contains(#""code":"too-many-connections""#) && $0.contains("Retry-After") }, "\(refused)")
        #expect(timedOut.allSatisfy { $0.contains(#""code":"request-timeout""#) }, "\(timedOut)")
        #expect(log.matching("security: header-timeout").count >= 3)
        // Hummingbird's own line for each connection that ended before its first head is not an error here: a stranger
        // would fill the error log with it.
        #expect(log.matching("Error handling upgrade result").isEmpty, "\(log.matching("Error"))")
        #expect(log.matching("security: too-many-connections").contains { $0.contains("address=127.0.0.2") }, "\(log.matching("security:"))")
        // Once they are gone, that address is taken again.
        let again = try await Fixtures.offThePool { () -> String in
            let socket = try loopbackSocket(port: port, from: "127.0.0.2")
            defer { close(socket) }
            try Raw.write(socket, "GET /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return try Raw.readAll(socket, seconds: 10)
        }
        #expect(again.hasPrefix("HTTP/1.1 401"), "\(again)")
        await running.stop()
    }

    @Test(.timeLimit(.minutes(2))) func aFirstRequestThatCannotBeReadIsAnsweredNotClosedInSilence() async throws {
        let running = try await RunningServer.start(.sqlite, transport: .live)
        let port = running.port
        let cases: [(request: String, status: String, code: String)] = [
            ("GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n", "431", "headers-too-large"),
            ("GARBAGE\u{01}\r\n\r\n", "400", "malformed-http"),
            ("GET /api/v1/me HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", "400", "malformed-http"),
        ]
        for (request, status, code) in cases {
            let answer = try await Fixtures.offThePool { () -> String in
                let socket = try loopbackSocket(port: port)
                defer { close(socket) }
                try Raw.write(socket, request)
                return try Raw.readAll(socket, seconds: 10)
            }
            #expect(answer.hasPrefix("HTTP/1.1 \(status)") && answer.contains(#""code":"\#(code)""#), "\(request.prefix(40)): \(answer)")
        }
        await running.stop()
    }

    @Test func aMemberHasAtMostItsEventStreamsAndAnotherIsToldWhy() async throws {
        var limits = ServerLimits()
        limits.maxEventStreamsPerMember = 2
        let team = try await EventStreamTests.Team.start(.sqlite, limits: limits)
        let first = try await team.connect(team.bob)
        let second = try await team.connect(team.bob)
        let third = EventClient(port: team.running.port, token: team.bob)
        let refusal = try await third.expectNext("error")
        #expect(OddInputTests.error(of: refusal).code == "too-many-connections", "\(refusal)")
        // Another member is not concerned, and bob's two streams still hear.
        let alice = try await team.connect(team.alice)
        try await team.send(team.alice, "after")
        for client in [first, second] {
            #expect((try await client.expectNext("message")["message"] as? [String: Any])?["id"] as? String == "after")
        }
        for client in [first, second, third, alice] { await client.close() }
        await team.running.stop()
    }

    /// A reader that stopped reading is cut off by the bytes waiting for it, long before its queue of events is full,
    /// and by a write that waits too long; the others are served.
    @Test(arguments: ["bytes", "time"])
    func aReaderThatStopsReadingIsCutOffByTheBytesOrTheTimeItHoldsUp(bound: String) async throws {
        var limits = ServerLimits()
        limits.burst = 1_000
        limits.requestsPerSecond = 1_000
        if bound == "bytes" {
            limits.maxUnsentBytes = 1 << 20
        } else {
            limits.maxUnsentBytes = 1 << 30
            limits.stalledWriteTimeout = .seconds(2)
        }
        let team = try await EventStreamTests.Team.start(.sqlite, limits: limits)
        let stuck = try await StalledEventClient.open(port: team.running.port, token: team.bob)
        let alice = try await team.connect(team.alice)
        try await Task.sleep(for: .milliseconds(200))
        // 100 KiB each: 4 MB in all, more than the sockets' buffers and the byte bound, far fewer than 1,024 events.
        let text = String(repeating: "x", count: 100 << 10)
        for index in 1...40 { try await team.send(team.alice, "big\(index)", text: text) }
        if bound == "time" { try await Task.sleep(for: .seconds(4)) }
        #expect(try await stuck.drainUntilClosed(timeout: .seconds(30)), "the stuck reader was cut off")
        var received = 0
        while received < 40, let event = try await alice.next() {
            if event["type"] as? String == "message" { received += 1 }
        }
        #expect(received == 40, "alice is served in full")
        await alice.close()
        await team.running.stop()
    }
}

/// Raw bytes on a socket, for requests no HTTP client sends.
enum Raw {
    static func write(_ socket: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw HarnessError("send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// What the server writes until it closes the connection, or `seconds` pass.
    static func readAll(_ socket: Int32, seconds: Int) throws -> String {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
