import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import MissiveCore
import Synchronization

/// One event of the server's event stream (`GET /api/v1/events`, docs/SERVER.md), read from its frame.
public enum ServerEvent: Sendable, Hashable {
    /// The stream is open: the member, the feed position it starts after, and whether it resumed from the position
    /// the client gave (when not, the client reloads what it keeps).
    case hello(member: String, position: Int64, resumed: Bool)
    /// A message was stored.
    case stored(position: Int64, RemoteMessage)
    /// A message has a new version (an action's edit).
    case edited(position: Int64, RemoteMessage)
    /// A message was deleted.
    case deleted(position: Int64, conversation: String, id: String)
    /// The member's read mark moved (on this device or another).
    case read(position: Int64, conversation: String, upTo: String, unreadCount: Int)
    /// A member joined a conversation.
    case joined(position: Int64, conversation: String, member: String)
    /// A member left a conversation.
    case left(position: Int64, conversation: String, member: String)
    /// A message that is not kept (`none` or `status`): its envelope, byte for byte. It has no position.
    case transient(conversation: String, envelope: [UInt8])
    /// Any other frame (an answer to a frame the client sent, an error, a type this client does not know):
    /// its `type` and its bytes.
    case other(type: String, frame: [UInt8])

    /// The event's feed position, for the events of the feed.
    public var position: Int64? {
        switch self {
        case .stored(let position, _), .edited(let position, _), .deleted(let position, _, _), .read(let position, _, _, _),
            .joined(let position, _, _), .left(let position, _, _):
            position
        case .hello, .transient, .other:
            nil
        }
    }

    /// Reads one frame.
    ///
    /// - Throws: ``ServerClientError`` (`malformed-answer`) when the frame is not a JSON object with a `type`, or
    ///   an event of a known type lacks a member it needs.
    public init(frame: [UInt8]) throws(ServerClientError) {
        let type: String
        do {
            type = try JSONReaderDecoder.decode(FrameHeader.self, from: frame).type
        } catch {
            throw ServerClientError.malformedAnswer("an event is not a JSON object with a type: \(JSONReaderDecoder.describe(error))")
        }
        switch type {
        case "hello":
            let hello = try ServerClientError.reading(HelloEvent.self, frame)
            self = .hello(member: hello.member, position: hello.position, resumed: hello.resumed)
        case MessageEvent.Kind.stored.rawValue, MessageEvent.Kind.edited.rawValue:
            let event = try ServerClientError.reading(MessageEvent.self, frame)
            self = event.type == .stored ? .stored(position: event.position, event.message) : .edited(position: event.position, event.message)
        case "delete":
            let event = try ServerClientError.reading(DeleteEvent.self, frame)
            self = .deleted(position: event.position, conversation: event.conversation, id: event.id)
        case "read":
            let event = try ServerClientError.reading(ReadEvent.self, frame)
            self = .read(position: event.position, conversation: event.conversation, upTo: event.upTo, unreadCount: event.unreadCount)
        case MembershipEvent.Kind.joined.rawValue, MembershipEvent.Kind.left.rawValue:
            let event = try ServerClientError.reading(MembershipEvent.self, frame)
            self = event.type == .joined ? .joined(position: event.position, conversation: event.conversation, member: event.member)
                : .left(position: event.position, conversation: event.conversation, member: event.member)
        case "transient":
            let event = try ServerClientError.reading(TransientEvent.self, frame)
            self = .transient(conversation: event.conversation, envelope: event.envelope)
        default:
            self = .other(type: type, frame: frame)
        }
    }
}

/// What a ``ServerEventStream`` tells its handler.
public enum EventStreamUpdate: Sendable {
    /// An event, in the order the server sent them.
    case event(ServerEvent)
    /// A frame that could not be read: skipped, with the reason; the stream goes on.
    case malformed(String)
    /// The connection ended or could not be made: the reason, and when the stream tries again.
    case disconnected(reason: String, retryingIn: Duration)
}

/// A member's connection to the server's event stream that stays connected: it resumes after the position the
/// client last handled (`?after=`), and when the connection ends or cannot be made it tries again, waiting
/// longer each time (from ``initialDelay``, doubling up to ``maximumDelay``; back to the start once a
/// connection is made).
public struct ServerEventStream: Sendable {
    /// The server and the member's token.
    public let client: ServerClient
    /// The first wait before connecting again.
    public var initialDelay: Duration = .milliseconds(250)
    /// The longest wait before connecting again.
    public var maximumDelay: Duration = .seconds(5)
    /// The largest frame read.
    public var maxFrameBytes = 1 << 22

    /// A stream of the member's events on the server `client` talks to.
    public init(client: ServerClient) {
        self.client = client
    }

    /// Connects, and hands each update to `handle`, in order, one at a time, until the task is cancelled.
    ///
    /// - Parameters:
    ///   - position: asked before each connection: the position of the last event the client handled (it
    ///     connects with `?after=`), or `nil` to start now.
    ///   - handle: called with each update; the next frame is read once it returns.
    public func run(position: @escaping @Sendable () async -> Int64?, handle: @escaping @Sendable (EventStreamUpdate) async -> Void) async {
        var delay = initialDelay
        let logger = Logger(label: "missive.client.events") { _ in SwiftLogNoOpLogHandler() }
        var base = client.server.absoluteString
        if base.hasPrefix("https://") { base = "wss://" + base.dropFirst("https://".count) } else if base.hasPrefix("http://") {
            base = "ws://" + base.dropFirst("http://".count)
        }
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(client.token)"
        let maxFrame = maxFrameBytes
        while !Task.isCancelled {
            let after = await position()
            let url = base + "/api/v1/events" + (after.map { "?after=\($0)" } ?? "")
            let greeted = Greeted()
            var reason = "the server closed the connection"
            do {
                let close = try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: maxFrame, additionalHeaders: headers, autoPing: .enabled(timePeriod: .seconds(20))),
                    logger: logger
                ) { inbound, _, _ in
                    for try await message in inbound.messages(maxSize: maxFrame) {
                        guard case .text(let text) = message else { continue }
                        let update: EventStreamUpdate
                        do {
                            update = .event(try ServerEvent(frame: Array(text.utf8)))
                        } catch {
                            update = .malformed("\(error)")
                        }
                        if case .event(.hello) = update { greeted.mark() }
                        await handle(update)
                    }
                }
                if let close { reason = "the server closed the connection (\(close.closeCode)\(close.reason.map { ": \($0)" } ?? ""))" }
            } catch is CancellationError {
                return
            } catch {
                reason = "cannot reach \(client.server.absoluteString): \(error)"
            }
            if Task.isCancelled { return }
            if greeted.value { delay = initialDelay }
            await handle(.disconnected(reason: reason, retryingIn: delay))
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, maximumDelay)
        }
    }
}

/// Whether a connection got its `hello`.
private final class Greeted: Sendable {
    private let state = Mutex(false)
    func mark() { state.withLock { $0 = true } }
    var value: Bool { state.withLock { $0 } }
}

/// The client's connection to the event stream, by its name before ``ServerEventStream`` (the server has an event
/// stream of its own, the route).
@available(*, deprecated, renamed: "ServerEventStream")
public typealias EventStream = ServerEventStream
