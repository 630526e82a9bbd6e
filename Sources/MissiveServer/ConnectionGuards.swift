import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

// The limits that hold below the routes, on each connection of `missive serve` (and of a host that serves with
// `ChatServer.httpServer(webSocketRouter:)`): a cap on the connections of one client address, a deadline for a
// connection's first request head, and a defined answer (`431`, `400`, `408`) instead of a silent close when the
// first request cannot be read. Later requests on a kept-alive connection are Hummingbird's: a malformed one gets
// `400`, and one whose head does not come within the idle timeout closes the connection.

/// The open connections of each client address, under a cap.
final class ConnectionCounts: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Counts one more connection of `address`; `false` (and nothing counted) when it has `limit` already.
    func acquire(_ address: String) -> Bool {
        counts.withLock { counts in
            let open = counts[address, default: 0]
            guard open < limit else { return false }
            counts[address] = open + 1
            return true
        }
    }

    /// Counts one connection of `address` fewer.
    func release(_ address: String) {
        counts.withLock { counts in
            let open = counts[address, default: 0] - 1
            counts[address] = open > 0 ? open : nil
        }
    }
}

/// The connections a guard answered and closed, until Hummingbird is done with them.
final class RefusedConnections: Sendable {
    private let channels = Mutex<Set<ObjectIdentifier>>([])

    func insert(_ channel: any Channel) { _ = channels.withLock { $0.insert(ObjectIdentifier(channel)) } }
    func remove(_ channel: any Channel) { _ = channels.withLock { $0.remove(ObjectIdentifier(channel)) } }
    func contains(_ channel: any Channel) -> Bool { channels.withLock { $0.contains(ObjectIdentifier(channel)) } }
}

/// `base` (Hummingbird's HTTP/1 channel with the WebSocket upgrade) with Missive's guards in each connection's pipeline.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let counts: ConnectionCounts
    let refused = RefusedConnections()
    let headTimeout: TimeAmount
    let logger: Logger

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(AddressCap(counts: counts, refused: refused, logger: self.logger), position: .first)
        } catch {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
        let headTimeout = self.headTimeout
        let guardLogger = self.logger
        let refused = self.refused
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(FirstRequestGuard(timeout: headTimeout, refused: refused, logger: guardLogger), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        // A connection the guards answered and closed before its first request head ends Hummingbird's wait for the
        // upgrade with an error it logs at `error`; the guards logged it already, as a security event.
        let channel = value.channel
        let refused = self.refused
        var quieter = logger
        quieter.handler = RefusedConnectionLogHandler(base: logger.handler) { refused.contains(channel) }
        await base.handle(value: value, logger: quieter)
        refused.remove(channel)
    }
}

/// Hummingbird's log for one connection, with its line about a connection that ended before its first request head
/// ("Error handling upgrade result") at `debug` when a guard closed it on purpose (`isRefused`): a stranger could
/// otherwise fill the error log with them. The same line for any other connection stays an error.
struct RefusedConnectionLogHandler: LogHandler {
    var base: any LogHandler
    let isRefused: @Sendable () -> Bool

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if event.level == .error, event.message.description == "Error handling upgrade result", isRefused() {
            guard base.logLevel <= .debug else { return }
            event.level = .debug
        }
        base.log(event: event)
    }
}

/// First in a connection's pipeline, on bytes: a connection of an address that has its cap of open connections
/// is answered `503 too-many-connections` with a `Retry-After`, and closed.
final class AddressCap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let counts: ConnectionCounts
    private let refused: RefusedConnections
    private let logger: Logger
    private var counted: String?
    private var isChecked = false

    init(counts: ConnectionCounts, refused: RefusedConnections, logger: Logger) {
        self.counts = counts
        self.refused = refused
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { check(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        check(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A refused connection's bytes go nowhere: it is closing.
        guard counted != nil else { return }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let counted { counts.release(counted) }
        counted = nil
        context.fireChannelInactive()
    }

    private func check(_ context: ChannelHandlerContext) {
        guard !isChecked else { return }
        isChecked = true
        let address = context.channel.remoteAddress?.ipAddress.map(ClientAddress.key) ?? "unknown"
        if counts.acquire(address) {
            counted = address
            return
        }
        SecurityLog.event(logger, "too-many-connections", ["address": address, "limit": String(counts.limit)])
        refused.insert(context.channel)
        let answer = RawAnswer.bytes(
            status: "503 Service Unavailable", code: "too-many-connections",
            message: "\(counts.limit) connections from this address are open; close one first", extraHeaders: "Retry-After: 5\r\n")
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: answer))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// Right after the request decoder, until the connection's first request head: the head must come within the
/// deadline (else `408 request-timeout`), and a head that cannot be read is answered (`431` for headers over the
/// limit, `400` for anything else malformed) before the connection closes. Once the head came, it steps aside:
/// later requests, and a WebSocket after its upgrade, never pass through it.
final class FirstRequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    private let refused: RefusedConnections
    private let logger: Logger
    private var timer: Scheduled<Void>?
    private var isDone = false

    init(timeout: TimeAmount, refused: RefusedConnections, logger: Logger) {
        self.timeout = timeout
        self.refused = refused
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
            SecurityLog.event(logger, "header-timeout", ["address": address])
            refuse(context, .requestTimeout, code: "request-timeout", message: "the request's head did not come within the time allowed")
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isDone else { return }
        let isHead: Bool
        if case .head = unwrapInboundIn(data) { isHead = true } else { isHead = false }
        context.fireChannelRead(data)
        if isHead {
            timer?.cancel()
            timer = nil
            isDone = true
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, !isDone else {
            context.fireErrorCaught(error)
            return
        }
        if parserError == .headerOverflow {
            refuse(context, .requestHeaderFieldsTooLarge, code: "headers-too-large", message: "the request's headers are over the server's limit")
        } else {
            refuse(context, .badRequest, code: "malformed-http", message: "the request is not HTTP/1.1 the server can read (\(parserError))")
        }
    }

    private func refuse(_ context: ChannelHandlerContext, _ status: HTTPResponseStatus, code: String, message: String) {
        guard !isDone else { return }
        isDone = true
        timer?.cancel()
        timer = nil
        refused.insert(context.channel)
        let body = RawAnswer.body(code: code, message: message)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "X-Frame-Options", value: "DENY")
        headers.add(name: "Cache-Control", value: "no-store")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// Answers written below the router, in Missive's error shape.
enum RawAnswer {
    /// `{"error": {"code", "message"}}`.
    static func body(code: String, message: String) -> [UInt8] {
        Array(#"{"error":{"code":"#.utf8) + Array(ChatServer.quoted(code).utf8) + Array(#","message":"#.utf8) + Array(ChatServer.quoted(message).utf8)
            + Array("}}".utf8)
    }

    /// A whole HTTP/1.1 response that closes the connection.
    static func bytes(status: String, code: String, message: String, extraHeaders: String = "") -> [UInt8] {
        let body = body(code: code, message: message)
        let head =
            "HTTP/1.1 \(status)\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            + "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nCache-Control: no-store\r\n\(extraHeaders)\r\n"
        return Array(head.utf8) + body
    }
}

extension ChatServer {
    /// The HTTP server of `missive serve`, for a host that mounts the routes (``routes(context:)``) to serve with
    /// too: `Application(router: router, server: chat.httpServer(webSocketRouter: router), ...)`. It is Hummingbird's
    /// HTTP/1.1 server with the WebSocket upgrade, set up as ``httpServerConfiguration`` says, with Missive's
    /// guards on each connection:
    /// - at most ``ServerLimits/maxConnectionsPerAddress`` connections open from one client address (the peer: a
    ///   proxy in front counts as one address, so raise the limit behind one); another is answered `503
    ///   too-many-connections` with a `Retry-After` and closed;
    /// - a connection's first request head must come within ``ServerLimits/requestHeadTimeout``, else `408
    ///   request-timeout` (later ones: the idle timeout);
    /// - a first request whose head cannot be read is answered, `431 headers-too-large` for headers over 80 KiB,
    ///   `400 malformed-http` for anything else, never closed in silence.
    public func httpServer<Router: HTTPResponderBuilder>(webSocketRouter: Router) -> HTTPServerBuilder
    where Router.Responder.Context: WebSocketRequestContext {
        let configuration = httpServerConfiguration
        let limits = self.configuration.limits
        let counts = ConnectionCounts(limit: limits.maxConnectionsPerAddress)
        let headTimeout = TimeAmount.nanoseconds(
            max(1_000_000, limits.requestHeadTimeout.components.seconds * 1_000_000_000 + limits.requestHeadTimeout.components.attoseconds / 1_000_000_000))
        let logger = self.logger
        let webSocketResponder = webSocketRouter.buildResponder()
        return HTTPServerBuilder { responder in
            GuardedChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                counts: counts, headTimeout: headTimeout, logger: logger)
        }
    }
}
