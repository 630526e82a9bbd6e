import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import Missive
import MissiveCore
import MissiveStore
import MissiveWire
import NIOCore
import NIOWebSocket

/// `GET /api/v1/events` (a WebSocket): what happens in the member's conversations, live, and a way to send.
///
/// The first frame is `hello`, with the feed position the stream continues from. With `?after=POSITION` (the
/// position of the last event the client handled) every event after it follows first, then the live ones: no
/// gap, and none twice. Then come the `none` messages kept while the member was offline, then the live events.
/// The client may send frames too: `{"type": "send", "conversation": ID, "envelope": {...}, "ref": R}` and
/// `{"type": "read", "conversation": ID, "upTo": MESSAGE, "ref": R}`, and `{"type": "types", "types": [...], "ref": R}`
/// (a type report), each answered with a frame carrying its `ref` (`sent`, `marked`, `reported` or `error`).
/// docs/SERVER.md describes every frame.
extension ChatServer {
    /// The event stream's route (a WebSocket upgrade, in the host's own context).
    func eventRoutes<Context: MissiveRequestContext>(context: Context.Type) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.ws(
            "events",
            shouldUpgrade: { request, context in
                guard context.missiveMember != nil else { throw APIError.memberRequired }
                // A position that is not a number is refused, with the reason.
                if let after = try RequestInput.query(request, "after"), (Int64(after) ?? -1) < 0 {
                    throw APIError.badRequest(
                        "malformed-position",
                        "after is a feed position, a whole number from 0 (the position of the last event handled), not '\(TextHygiene.line(String(after.prefix(40))))'")
                }
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                try await stream(inbound, outbound, context)
            })
        return routes
    }

    private func stream(
        _ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, _ context: WebSocketRouterContext<some MissiveRequestContext>
    ) async throws {
        guard let member = context.requestContext.missiveMember else { throw APIError.memberRequired }
        let after = (try? RequestInput.query(context.request, "after")).flatMap { $0.flatMap { Int64($0) } }
        let channel = context.requestContext.channel
        let limits = configuration.limits
        await events.waitUntilStarted()
        let (queue, continuation) = AsyncStream.makeStream(of: OutboundEvent.self, bufferingPolicy: .bufferingOldest(events.queueLength))
        let backlog = Backlog()
        let connection = events.connect(
            member: member, queue: continuation, backlog: backlog, limit: limits.maxEventStreamsPerMember, close: { channel.close(promise: nil) })
        guard let (id, position) = connection else {
            let address = ClientAddress.of(context.request, channel: channel, trustedProxies: configuration.trustedProxies)
            SecurityLog.event(logger, "too-many-connections", ["member": member, "address": address, "limit": String(limits.maxEventStreamsPerMember)])
            let refusal = APIError(
                status: .tooManyRequests, code: "too-many-connections",
                message: "\(limits.maxEventStreamsPerMember) event streams of this member are open; close one first", retryAfter: 5)
            try? await send(EventJSON.failure(ref: nil, refusal), outbound)
            try? await outbound.close(.policyViolation, reason: "too many connections")
            return
        }
        defer { events.disconnect(id) }
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await write(queue, to: outbound, member: member, after: after, livePosition: position, backlog: backlog)
                // The queue ended before the connection: it was cut off for not reading.
                if !Task.isCancelled { channel.close(promise: nil) }
            }
            group.addTask {
                // A write that the client does not take within the limit (it stopped reading, and what waits below the
                // queue in the connection reached its bound) closes the connection.
                let stalled = max(limits.stalledWriteTimeout, .milliseconds(100))
                while !Task.isCancelled {
                    try await Task.sleep(for: min(stalled / 4, .seconds(1)))
                    if let since = backlog.writingSince, ContinuousClock.now - since > stalled {
                        SecurityLog.event(logger, "slow-reader", ["member": member, "reason": "a write waited more than \(stalled)"])
                        channel.close(promise: nil)
                        return
                    }
                }
            }
            group.addTask {
                // A member whose tokens were revoked while it was connected is disconnected.
                while !Task.isCancelled {
                    try await Task.sleep(for: tokenCheckInterval)
                    if try await !accounts.hasValidToken(member: member) {
                        context.logger.notice("events: closing \(member)'s connection: its tokens were revoked")
                        try? await outbound.close(.policyViolation, reason: "the token was revoked")
                        channel.close(promise: nil)
                        return
                    }
                }
            }
            do {
                for try await frame in inbound.messages(maxSize: configuration.limits.maxRequestBytes) {
                    let bytes: [UInt8] =
                        switch frame {
                        case .text(let text): Array(text.utf8)
                        case .binary(let buffer): Array(buffer.readableBytesView)
                        }
                    let answer = await answer(bytes, from: member)
                    if backlog.add(answer.count) > events.maxUnsentBytes {
                        SecurityLog.event(logger, "slow-reader", ["member": member, "reason": "its answers were not read (\(events.maxUnsentBytes) bytes wait)"])
                        break
                    }
                    if case .dropped = continuation.yield(OutboundEvent(position: nil, bytes: answer)) { break }
                }
            } catch {
                context.logger.debug("events: \(member)'s connection ended: \(error)")
            }
            group.cancelAll()
        }
    }

    /// Writes the hello, the changes the client missed, the `none` messages kept for the member, then each event of
    /// `queue` as it comes, each feed change once.
    private func write(
        _ queue: AsyncStream<OutboundEvent>, to outbound: WebSocketOutboundWriter, member: String, after: Int64?, livePosition: Int64, backlog: Backlog
    ) async throws {
        var resumed = false
        if let after { resumed = after <= (try await store.lastChangePosition()) }
        var last = livePosition
        try await send(backlog: backlog, EventJSON.hello(member: member, position: resumed ? after ?? livePosition : livePosition, resumed: resumed), outbound)
        if resumed, let after {
            last = max(after, livePosition)
            var cursor = after
            while cursor < livePosition {
                let changes = try await store.changes(after: cursor, limit: 500)
                guard !changes.isEmpty else { break }
                for change in changes where change.position <= livePosition {
                    if let (event, recipients) = try await events.event(for: change),
                        recipients.contains(member) || (change.kind == .left && change.memberID == member)
                    {
                        try await send(backlog: backlog, event.bytes, outbound)
                    }
                }
                cursor = changes[changes.count - 1].position
            }
        }
        for kept in try await accounts.takePending(for: member) {
            // Only for the conversations the member is still in.
            guard try await events.members(of: kept.conversation).contains(member) else { continue }
            try await send(backlog: backlog, EventJSON.transient(kept.envelope, persistence: .none, conversation: kept.conversation), outbound)
        }
        for await event in queue {
            defer { backlog.remove(event.bytes.count) }
            if let position = event.position {
                guard position > last else { continue }
                last = position
            }
            try await send(backlog: backlog, event.bytes, outbound)
        }
    }

    /// How often a connection checks that its member still has a valid token.
    private var tokenCheckInterval: Duration { configuration.limits.tokenCheckInterval }

    private func send(_ bytes: [UInt8], _ outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.text(String(decoding: bytes, as: UTF8.self)))
    }

    /// Writes one event, with the time it waits for the client in `backlog`, for the watchdog that closes a connection
    /// whose client stopped reading.
    private func send(backlog: Backlog, _ bytes: [UInt8], _ outbound: WebSocketOutboundWriter) async throws {
        backlog.startWriting()
        defer { backlog.endWriting() }
        try await send(bytes, outbound)
    }

    // MARK: Frames from the client


    /// The answer to one frame a member sent: a `send`, `read` or `types` frame (``SendFrame``, ``ReadFrame``,
    /// ``TypesFrame``), answered by a `sent`, `marked` or `reported` ``AnswerFrame``, or an ``ErrorFrame``.
    func answer(_ frame: [UInt8], from member: String) async -> [UInt8] {
        let fields: [String: [UInt8]]
        do {
            fields = try Self.members(of: frame)
        } catch {
            return refusal(of: member, APIError.badRequest("malformed-frame", "a frame is one JSON object: \(error)"))
        }
        // The ref comes back as it was sent: a string or a number; any other value is refused, with no ref.
        var ref: FrameRef?
        if let bytes = fields["ref"] {
            guard let first = bytes.first, first == UInt8(ascii: "\"") || first == UInt8(ascii: "-") || (0x30...0x39).contains(first) else {
                return refusal(of: member, APIError.badRequest("malformed-frame", "the frame's ref is not a string or a number"))
            }
            ref = FrameRef(json: bytes)
        }
        do {
            try admitFrame(of: member)
            let type = try Self.frame(FrameHeader.self, frame).type
            switch type {
            case "send":
                let send = try Self.frame(SendFrame.self, frame)
                switch try await accept(send.envelope.json, from: member, in: send.conversation) {
                case .stored(let stored, _):
                    return EventJSON.answer("sent", ref: ref, StoredAnswer(message: RemoteMessage(stored)))
                case .notStored(let id, let persistence):
                    return EventJSON.answer("sent", ref: ref, NotStoredAnswer(id: id, persistence: persistence))
                }
            case "read":
                let read = try Self.frame(ReadFrame.self, frame)
                return EventJSON.answer("marked", ref: ref, try await markRead(member: member, conversation: read.conversation, upTo: read.upTo))
            case "types":
                // The report's own checks name the entry at fault, as `PUT /api/v1/me/types` does.
                return EventJSON.answer("reported", ref: ref, try await reportTypes(frameMember: fields["types"], member: member))
            default:
                throw APIError.badRequest("unknown-frame", "no frame of type \(TextHygiene.line(type)): send, read or types")
            }
        } catch {
            return EventJSON.failure(ref: ref, APIError(answering: error, logger: logger))
        }
    }

    /// The answer to a frame refused before it was read, with no ref: the refusal, or the rate limit's when the
    /// member is over it (a refused frame counts like any other).
    private func refusal(of member: String, _ error: APIError) -> [UInt8] {
        do {
            try admitFrame(of: member)
        } catch {
            return EventJSON.failure(ref: nil, APIError(answering: error, logger: logger))
        }
        return EventJSON.failure(ref: nil, error)
    }

    /// Takes one frame from `member`'s allowance (``RateLimiter``), or logs the refusal and throws it.
    private func admitFrame(of member: String) throws(APIError) {
        do {
            try rateLimit.admit(member)
        } catch {
            SecurityLog.event(logger, "rate-limited", ["member": member, "path": "/api/v1/events"])
            throw error
        }
    }

    /// The members of a frame that is one JSON object, each value's JSON text as sent.
    private static func members(of frame: [UInt8]) throws(MissiveJSONError) -> [String: [UInt8]] {
        try frame.withUnsafeBufferPointer { buffer throws(MissiveJSONError) in
            var found: [String: [UInt8]] = [:]
            var scanner = JSONScanner(buffer, validatingUTF8: true)
            try scanner.scanObject { (key, range) throws(MissiveJSONError) in
                guard found.updateValue(Array(buffer[range]), forKey: key) == nil else {
                    throw MissiveJSONError(offset: range.lowerBound, message: "the member '\(TextHygiene.line(String(key.prefix(64))))' is given twice")
                }
            }
            return found
        }
    }

    /// A frame read as the wire type `T`; `malformed-frame`, naming the member at fault, when it is not one.
    private static func frame<T: Codable & Sendable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        do {
            return try JSONReaderDecoder.decode(type, from: bytes)
        } catch {
            throw APIError.badRequest("malformed-frame", "the frame is not a valid \(type == FrameHeader.self ? "frame" : "\(T.self)"): \(JSONReaderDecoder.describe(error))")
        }
    }
}
