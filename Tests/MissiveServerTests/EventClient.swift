import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import MissiveServerTestSupport
import NIOCore
import NIOWebSocket
import Synchronization
import MissiveTestSupport
import Testing

/// A member's connection to the event stream (`/api/v1/events`), through a real WebSocket client: the frames it
/// received, in order, and a way to send.
final class EventClient: Sendable {
    /// The frames received and not yet read by the test, and whether the connection ended.
    private final class Inbox: Sendable {
        let state = Mutex<(frames: [String], ended: Bool)>(([], false))
    }

    private let inbox = Inbox()
    private let writers: AsyncStream<WebSocketOutboundWriter>
    private let writer = Mutex<WebSocketOutboundWriter?>(nil)
    private let task: Task<Void, any Error>
    private let lastPosition = Mutex<Int64>(0)

    /// The feed position of the last event read.
    var position: Int64 { lastPosition.withLock { $0 } }

    /// Connects as the member whose token this is; `after` resumes after a feed position.
    init(port: Int, token: String?, after: Int64? = nil, query: String? = nil) {
        let (writers, writerSink) = AsyncStream.makeStream(of: WebSocketOutboundWriter.self)
        self.writers = writers
        var url = "ws://127.0.0.1:\(port)/api/v1/events"
        if let after { url += "?after=\(after)" } else if let query { url += "?" + query }
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        let inbox = inbox
        task = Task {
            defer {
                inbox.state.withLock { $0.ended = true }
                writerSink.finish()
            }
            try await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers),
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            ) { inbound, outbound, _ in
                writerSink.yield(outbound)
                for try await message in inbound.messages(maxSize: 1 << 22) {
                    if case .text(let text) = message { inbox.state.withLock { $0.frames.append(text) } }
                }
            }
        }
    }

    /// The next frame as a JSON object; `nil` when the connection ended or nothing came within `timeout`.
    ///
    /// The default is a guard against a frame that never comes, not a measure of speed: in a full run on two cores
    /// every suite starts at once, and a frame the server sends at once can take well over ten seconds to arrive.
    func next(timeout: Duration = .seconds(45)) async throws -> [String: Any]? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (text, ended) = inbox.state.withLock { state -> (String?, Bool) in
                state.frames.isEmpty ? (nil, state.ended) : (state.frames.removeFirst(), false)
            }
            if let text {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
                if let position = (object["position"] as? NSNumber)?.int64Value, object["type"] as? String != "hello" {
                    lastPosition.withLock { $0 = position }
                }
                return object
            }
            if ended || ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The next frame, which must be of `type`; frames of the types in `skipping` (by default, the members who
    /// joined or left, which a connection made right after a conversation was may or may not see) are passed over.
    @discardableResult
    func expectNext(
        _ type: String, skipping: Set<String> = ["joined", "left"], timeout: Duration = .seconds(45), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: Any] {
        var frame = try #require(try await next(timeout: timeout), "no \(type) frame came", sourceLocation: sourceLocation)
        while let kind = frame["type"] as? String, kind != type, skipping.contains(kind) {
            frame = try #require(try await next(timeout: timeout), "no \(type) frame came", sourceLocation: sourceLocation)
        }
        #expect(frame["type"] as? String == type, "\(frame)", sourceLocation: sourceLocation)
        return frame
    }

    /// The next frame that is not about members joining or leaving, if one comes within `timeout`.
    func nextOtherThanMembership(timeout: Duration) async throws -> [String: Any]? {
        while let frame = try await next(timeout: timeout) {
            if !["joined", "left"].contains(frame["type"] as? String ?? "") { return frame }
        }
        return nil
    }

    /// Whether the connection has ended.
    var hasEnded: Bool {
        inbox.state.withLock { $0.ended }
    }

    /// Waits until the connection ends, for `timeout` at most; whether it did.
    func waitForEnd(timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !hasEnded && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return hasEnded
    }

    /// Sends one text frame.
    func send(_ text: String) async throws {
        try await sendText(bytes: Array(text.utf8))
    }

    /// Sends one text frame of `bytes` as they are, UTF-8 or not.
    func sendText(bytes: [UInt8]) async throws {
        var current = writer.withLock { $0 }
        if current == nil {
            var iterator = writers.makeAsyncIterator()
            current = await iterator.next()
            writer.withLock { [current] in $0 = current }
        }
        try await #require(current).write(.custom(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: bytes))))
    }

    /// How the connection ended (or failed to open); waits for it.
    func result() async -> Result<Void, any Error> {
        await task.result
    }

    /// Closes the connection, as a client that says goodbye does.
    func close() async {
        if let current = writer.withLock({ $0 }) { try? await current.close(.normalClosure, reason: nil) }
        task.cancel()
    }
}

/// A WebSocket client that opens the event stream and then never reads: a plain socket with a small receive
/// buffer, so that what the server writes backs up into the server, as it does for a phone that went into a
/// tunnel. It tells whether the server closed the connection.
final class StalledEventClient: Sendable {
    private let descriptor: Int32

    /// Opens the stream as the member whose token this is, and reads the upgrade's answer only, on a thread of its
    /// own: the socket calls block, and a blocked thread of the concurrency pool (two here) would stall the server.
    static func open(port: Int, token: String) async throws -> StalledEventClient {
        try await Fixtures.offThePool { try StalledEventClient(port: port, token: token) }
    }

    private init(port: Int, token: String) throws {
        descriptor = try loopbackSocket(port: port, receiveBuffer: 4096)
        let request = "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n"
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == bytes.count else { throw HarnessError("send failed") }
        // The answer's head, a byte at a time, so that nothing after it is read.
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)), head.count < 4096, read(descriptor, &byte, 1) == 1 { head.append(byte) }
        guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw HarnessError("the upgrade was refused: \(String(decoding: head, as: UTF8.self))")
        }
    }

    deinit { close(descriptor) }

    /// Reads everything the server had sent, and answers whether the server has closed the connection (the end of
    /// the stream, or a reset) within `timeout`.
    func drainUntilClosed(timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else {
                try await Task.sleep(for: .milliseconds(20))
                continue
            }
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 { return true }
        }
        return false
    }
}
