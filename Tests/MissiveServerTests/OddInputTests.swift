import Foundation
import Missive
@testable import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Odd input between hosts: envelopes the server refuses, positions outside the feed, two connections of one
/// member acting at once, and actions on a type the server has no plugin for. Each gets a clear answer, and
/// nobody else notices.
@Suite struct OddInputTests {
    /// alice and bob in "team", each with a token; `limits` for the server.
    static func team(_ backend: StoreBackend, limits: ServerLimits = ServerLimits()) async throws -> (RunningServer, alice: String, bob: String) {
        let running = try await RunningServer.start(backend, limits: limits, transport: .live)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        return (running, alice, bob)
    }

    /// The `error` of an error frame: its code and message.
    static func error(of frame: [String: Any]) -> (code: String?, message: String) {
        let details = frame["error"] as? [String: Any]
        return (details?["code"] as? String, details?["message"] as? String ?? "")
    }

    @Test(arguments: StoreBackend.allCases)
    func envelopesTheServerRefusesGetAnErrorAndTheConnectionAndTheOthersGoOn(backend: StoreBackend) async throws {
        let (running, alice, bob) = try await Self.team(backend, limits: ServerLimits(maxContentBytes: 1_024))
        let sender = EventClient(port: running.port, token: alice)
        try await sender.expectNext("hello")
        let reader = EventClient(port: running.port, token: bob)
        try await reader.expectNext("hello")
        let big = String(repeating: "x", count: 2_000)
        let refused: [(envelope: String, code: String, says: String)] = [
            // Content the server's plugin rejects.
            (#"{"id":"r1","objectName":"demo:poll","content":{"question":5}}"#, "refused-content", "demo:poll refused the content"),
            // Content over the server's limit.
            (#"{"id":"r3","objectName":"MS:Text","content":{"content":"\#(big)"}}"#, "content-too-large", "the server takes 1024 at most"),
            // Not an envelope at all.
            (#"[1, 2]"#, "malformed-envelope", "not a JSON object"),
        ]
        for (index, (envelope, code, says)) in refused.enumerated() {
            try await sender.send(#"{"type":"send","conversation":"team","ref":\#(index),"envelope":\#(envelope)}"#)
            let frame = try await sender.expectNext("error")
            #expect(frame["ref"] as? Int == index)
            let error = Self.error(of: frame)
            #expect(error.code == code && error.message.contains(says), "\(envelope.prefix(60)): \(error)")
            // The same over HTTP, with a status.
            let answer = try await running.send(envelope, to: "team", token: alice)
            #expect(answer.errorCode == code && answer.status >= 400 && answer.status < 500, "\(envelope.prefix(60)): \(answer.status) \(answer.text)")
        }
        #expect(try await running.server.store.messages(inConversation: "team").isEmpty)
        // The sender's connection is still open, and the next message reaches bob, who heard of none before it.
        try await sender.send(#"{"type":"send","conversation":"team","ref":"ok","envelope":{"id":"fine","objectName":"MS:Text","content":{"content":"hi"}}}"#)
        // The sender's own copy of the message may come before the answer: the feed and the answer race.
        #expect(try await sender.expectNext("sent", skipping: ["joined", "left", "message"])["ref"] as? String == "ok")
        let heard = try await reader.expectNext("message")
        #expect((heard["message"] as? [String: Any])?["id"] as? String == "fine", "\(heard)")
        #expect(!sender.hasEnded && !reader.hasEnded)
        await sender.close()
        await reader.close()
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aPositionFromTheFutureStartsNowAndOneFromBeforeTheFirstMessageReplaysEverythingOnce(backend: StoreBackend) async throws {
        let (running, alice, bob) = try await Self.team(backend)
        // A connection that has heard the five messages: the server has handed out everything up to the last.
        let watcher = EventClient(port: running.port, token: bob)
        try await watcher.expectNext("hello")
        for index in 1...5 {
            #expect(try await running.send(#"{"id":"m\#(index)","objectName":"MS:Text","content":{"content":"\#(index)"}}"#, to: "team", token: alice).status == 201)
        }
        for index in 1...5 { #expect((try await watcher.expectNext("message")["message"] as? [String: Any])?["id"] as? String == "m\(index)") }
        await watcher.close()
        let last = try await running.server.store.lastChangePosition()

        // From the future: not resumed, the stream starts at the feed's end, and what comes next arrives.
        let future = EventClient(port: running.port, token: bob, after: last + 1_000)
        let hello = try await future.expectNext("hello")
        #expect(hello["resumed"] as? Bool == false && (hello["position"] as? NSNumber)?.int64Value == last, "\(hello)")
        #expect(try await future.nextOtherThanMembership(timeout: .milliseconds(300)) == nil, "nothing old is replayed")

        // From 0, before the first change: everything bob may see, from the start, once.
        let start = EventClient(port: running.port, token: bob, after: 0)
        let replayed = try await start.expectNext("hello")
        #expect(replayed["resumed"] as? Bool == true && (replayed["position"] as? NSNumber)?.int64Value == 0, "\(replayed)")
        var ids: [String] = []
        while ids.count < 5, let frame = try await start.nextOtherThanMembership(timeout: .seconds(10)) {
            #expect(frame["type"] as? String == "message", "\(frame)")
            ids.append((frame["message"] as? [String: Any])?["id"] as? String ?? "?")
        }
        #expect(ids == ["m1", "m2", "m3", "m4", "m5"])
        #expect(try await start.nextOtherThanMembership(timeout: .milliseconds(500)) == nil, "nothing is replayed twice")

        // A new message reaches both once.
        #expect(try await running.send(#"{"id":"m6","objectName":"MS:Text","content":{"content":"6"}}"#, to: "team", token: alice).status == 201)
        for client in [future, start] {
            let frame = try #require(try await client.nextOtherThanMembership(timeout: .seconds(10)))
            #expect((frame["message"] as? [String: Any])?["id"] as? String == "m6", "\(frame)")
            #expect(try await client.nextOtherThanMembership(timeout: .milliseconds(300)) == nil, "nothing twice")
        }

        // A negative position or text is refused: the handshake with 400 (Hummingbird answers a refused upgrade with
        // an empty 400), the same request without the upgrade with the reason.
        for after in ["-1", "-9223372036854775808", "x", "1.5", "", "99999999999999999999"] {
            let upgrade = try await Self.rawGet(port: running.port, path: "/api/v1/events?after=\(after)", token: bob, upgrade: true)
            #expect(upgrade.hasPrefix("HTTP/1.1 400"), "after=\(after), upgrade: \(upgrade)")
            let plain = try await Self.rawGet(port: running.port, path: "/api/v1/events?after=\(after)", token: bob, upgrade: false)
            #expect(plain.hasPrefix("HTTP/1.1 400"), "after=\(after): \(plain)")
            #expect(plain.contains(#""code":"malformed-position""#) && plain.contains("a whole number from 0"), "after=\(after): \(plain)")
        }
        #expect(try await running.request("GET", "/api/v1/me", token: bob).status == 200)
        await future.close()
        await start.close()
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func twoDevicesOfOneMemberActingAtOnceBothApplyAndTheReadMarkNeverMovesBack(backend: StoreBackend) async throws {
        let (running, alice, phone) = try await Self.team(backend)
        let laptop = try running.server.accounts.issueToken(member: "bob")
        #expect(try await running.send(#"{"id":"p","objectName":"demo:poll","content":{"question":"Lunch?","options":["Pizza","Sushi"]}}"#, to: "team", token: alice).status == 201)
        for index in 1...12 {
            #expect(try await running.send(#"{"id":"t\#(String(format: "%02d", index))","objectName":"MS:Text","content":{"content":"\#(index)"}}"#, to: "team", token: alice).status == 201)
        }
        let onPhone = EventClient(port: running.port, token: phone)
        try await onPhone.expectNext("hello")
        let onLaptop = EventClient(port: running.port, token: laptop)
        try await onLaptop.expectNext("hello")

        // Two votes at once, one from each device: both are performed (two edits), and the poll counts bob once.
        let votes = try await withThrowingTaskGroup(of: Int.self) { group in
            for (option, token) in [phone, laptop].enumerated() {
                group.addTask { try await running.act("vote", on: "p", in: "team", token: token, arguments: #"[\#(option), "bob"]"#).status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(votes == [200, 200])
        let tallies = try await ActionTests.tallies(running.server.store, "p")
        #expect(tallies.votes.reduce(0, +) == 1 && tallies.voters.count == 1 && tallies.voters["bob"] != nil, "\(tallies)")
        #expect(try await running.server.store.changes(after: 0, limit: 1000).filter { $0.kind == .edited }.count == 2)

        // Reads from both devices at once, each going back and forth: the mark only moves forward.
        let phoneMarks = [3, 9, 1, 12, 5, 7]
        let laptopMarks = [8, 2, 11, 4, 10, 6]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (client, marks) in [(onPhone, phoneMarks), (onLaptop, laptopMarks)] {
                group.addTask {
                    for (index, mark) in marks.enumerated() {
                        try await client.send(#"{"type":"read","conversation":"team","upTo":"t\#(String(format: "%02d", mark))","ref":\#(index)}"#)
                    }
                }
            }
            try await group.waitForAll()
        }
        // Each device hears its answers, and every read event of bob (from its own frames and the other's) in an
        // order in which the mark never falls back.
        for (client, count) in [(onPhone, phoneMarks.count), (onLaptop, laptopMarks.count)] {
            var answers = 0
            var upTos: [String] = []
            func take(_ frame: [String: Any]) throws {
                switch frame["type"] as? String {
                case "marked":
                    answers += 1
                    let unread = try #require((frame["result"] as? [String: Any])?["unreadCount"] as? Int)
                    let upTo = try #require((frame["result"] as? [String: Any])?["readUpTo"] as? String)
                    #expect(unread == 12 - Int(upTo.dropFirst())!, "\(frame)")
                case "read": upTos.append(frame["upTo"] as? String ?? "?")
                // The last messages may still be on their way to the connections made right after them.
                case "edit", "joined", "message": break
                default: Issue.record("unexpected \(frame)")
                }
            }
            // Every answer and the last mark, however long a loaded machine takes; then whatever else is on its way.
            while answers < count || upTos.last != "t12", let frame = try await client.next(timeout: .seconds(10)) { try take(frame) }
            while let frame = try await client.next(timeout: .milliseconds(700)) { try take(frame) }
            #expect(answers == count)
            #expect(upTos == upTos.sorted(), "the mark moved back: \(upTos)")
            #expect(upTos.last == "t12", "\(upTos)")
        }
        let state = try await running.server.store.readState(member: "bob", conversation: "team")
        #expect(state.readUpTo == "t12" && state.unreadCount == 0, "\(state)")
        #expect(try await running.server.store.checkConsistency().problems == [])
        await onPhone.close()
        await onLaptop.close()
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func anActionOnATypeTheServerHasNoPluginForIsRefusedSayingSo(backend: StoreBackend) async throws {
        let (running, alice, bob) = try await Self.team(backend)
        // A type the server has no plugin for is kept as it came, and listed with no actions.
        #expect(try await running.send(#"{"id":"q","objectName":"acme:quiz","content":{"question":"2+2?","options":["3","4"]}}"#, to: "team", token: alice).status == 201)
        let listed = try await running.request("GET", "/api/v1/conversations/team/messages/q/actions", token: bob)
        #expect(try listed.json["known"] as? Bool == false && (listed.json["actions"] as? [Any])?.isEmpty == true, "\(listed.text)")
        let before = try #require(try await running.server.store.message(id: "q"))

        let answer = try await running.act("vote", on: "q", in: "team", token: bob, arguments: #"[1, "bob"]"#)
        #expect(answer.status == 422 && answer.errorCode == "unknown-type", "\(answer.status) \(answer.text)")
        let message = try #require((try answer.json["error"] as? [String: Any])?["message"] as? String)
        #expect(message.hasPrefix("the server has no plugin for acme:quiz, so it cannot run this message's actions"), "\(message)")
        #expect(message.contains("the server's operator must install a plugin for acme:quiz"), "\(message)")
        // Nothing changed; the conversation goes on.
        #expect(try await running.server.store.message(id: "q")?.envelopeBytes == before.envelopeBytes)
        #expect(try await running.send(#"{"id":"after","objectName":"MS:Text","content":{"content":"ok"}}"#, to: "team", token: bob).status == 201)
        await running.stop()
    }

    /// A `GET` written on a socket of its own, with a bearer token, asking for a WebSocket upgrade or not; the
    /// answer's head and body as text.
    static func rawGet(port: Int, path: String, token: String, upgrade: Bool) async throws -> String {
        try await Fixtures.offThePool {
            let descriptor = try loopbackSocket(port: port)
            defer { close(descriptor) }
            var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\n"
            if upgrade {
                request += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            } else {
                request += "Connection: close\r\n"
            }
            let bytes = Array((request + "\r\n").utf8)
            guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == bytes.count else { throw HarnessError("send failed") }
            // Until the server closes, or the body its Content-Length announces is in, or 5 s pass.
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { break }
                received += buffer[..<count]
                let text = String(decoding: received, as: UTF8.self)
                if let end = text.range(of: "\r\n\r\n"),
                    let length = text[..<end.lowerBound].split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") })
                        .flatMap({ Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }),
                    text.utf8.count - text[..<end.upperBound].utf8.count >= length
                {
                    break
                }
            }
            return String(decoding: received, as: UTF8.self)
        }
    }
}
