import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import Missive
import MissiveServer
import MissiveStore
import NIOCore
import Synchronization

// The two servers under load, each run in a child process of the benchmark (`missive-bench server-child` and
// `missive-bench floor-child`), so that its memory and CPU time are its own and not the clients'. Each prints
// `PORT n` and then `READY` on its standard output, and exits when its standard input ends (the benchmark closes
// it, or dies).

extension ServerLoad {
    /// `server-child DATA STORE MEMBERS TOKENS`: a MissiveServer on loopback, port chosen by the system, with its
    /// data in `DATA`, its store in `DATA` (`STORE` = `sqlite`) or at a `postgres://` URL, `MEMBERS` members
    /// (`m0`, `m1`, ...) whose tokens are written to the file `TOKENS`, one a line. The rate limit is lifted.
    /// With `MEMBERS` 0 it makes none and writes no tokens: a second instance on the first's data and store.
    public static func missiveChild(_ arguments: [String]) async throws {
        raiseFileLimit()
        exitWhenStandardInputEnds()
        let data = arguments[0], store = arguments[1], members = Int(arguments[2])!, tokensPath = arguments[3]
        var limits = ServerLimits(burst: 1_000_000_000, requestsPerSecond: 1_000_000_000)
        limits.eventQueueLength = ServerLimits().eventQueueLength
        let location: StoreLocation? = store == "sqlite" ? nil : try StoreLocation(parsing: store)
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: data, store: location, limits: limits)
        // Notices (a connection cut off for not reading, say) go to standard error, which the benchmark passes on.
        var logger = Logger(label: "missive-bench-server") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .notice
        let server = try await MissiveServer.open(configuration: configuration, registry: MessageRegistry.Builder().build(), logger: logger)
        if members > 0 {
            var tokens: [String] = []
            tokens.reserveCapacity(members)
            for index in 0..<members { tokens.append(try server.accounts.add(member: "m\(index)")) }
            try (tokens.joined(separator: "\n") + "\n").write(toFile: tokensPath, atomically: true, encoding: .utf8)
        }
        try await server.run(stopsOnSignals: true) { _, port in
            FileHandle.standardOutput.write(Data("PORT \(port)\nREADY\n".utf8))
        }
    }

    /// `floor-child`: the floor, a bare Hummingbird WebSocket fan-out. One route, `/ws?c=CONVERSATION`; each
    /// connection is put in its conversation's set, greeted with `{"type":"hello"}`, and every text frame it
    /// sends is written to every connection of its conversation (its own included). No store, no
    /// authentication, no parsing. Each connection has a queue and a writer task, as the Missive server has, so
    /// that one slow reader does not hold up the others.
    public static func floorChild(_ arguments: [String]) async throws {
        raiseFileLimit()
        exitWhenStandardInputEnds()
        let rooms = FloorRooms()
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("ws") { inbound, outbound, context in
            let conversation = context.request.uri.queryParameters.get("c") ?? ""
            let (queue, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(ServerLimits().eventQueueLength))
            let id = rooms.join(conversation, continuation)
            defer { rooms.leave(conversation, id) }
            try await outbound.write(.text(#"{"type":"hello"}"#))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in queue { try await outbound.write(.text(text)) }
                }
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message else { continue }
                    rooms.broadcast(text, to: conversation)
                }
                group.cancelAll()
            }
        }
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "missive-bench-floor", backlog: 1024),
            onServerRunning: { channel in
                FileHandle.standardOutput.write(Data("PORT \(channel.localAddress?.port ?? 0)\nREADY\n".utf8))
            },
            logger: Logger(label: "missive-bench-floor") { _ in SwiftLogNoOpLogHandler() }
        )
        try await app.runService()
    }

    /// Ends the process when its standard input ends: the benchmark holds the other end, so a child never
    /// outlives it.
    static func exitWhenStandardInputEnds() {
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(0, &byte, 1) > 0 {}
            exit(0)
        }
    }
}

/// The floor's conversations: which connections are in each.
final class FloorRooms: Sendable {
    private let state = Mutex<(next: Int, rooms: [String: [Int: AsyncStream<String>.Continuation]])>((0, [:]))

    func join(_ conversation: String, _ continuation: AsyncStream<String>.Continuation) -> Int {
        state.withLock { state in
            let id = state.next
            state.next += 1
            state.rooms[conversation, default: [:]][id] = continuation
            return id
        }
    }

    func leave(_ conversation: String, _ id: Int) {
        let continuation = state.withLock { $0.rooms[conversation]?.removeValue(forKey: id) }
        continuation?.finish()
    }

    func broadcast(_ text: String, to conversation: String) {
        let connections = state.withLock { Array(($0.rooms[conversation] ?? [:]).values) }
        for connection in connections { connection.yield(text) }
    }
}
