import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import Missive
import MissivePostgresStore
import MissiveStore
import MissiveWire
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The chat server members connect to: `missive serve`, as a library.
///
/// It keeps one shared store (``ServerConfiguration/storeLocation``: SQLite in its data folder by default, or a
/// PostgreSQL database) and the members' accounts, and answers an HTTP API under `/api/v1` in which every request
/// carries a member's token and sees only that member's conversations. docs/SERVER.md describes the API.
///
/// It was named `MissiveServer` before 0.8.0 was released, like its module, so that `MissiveServer.X` named the
/// type and a host could not qualify the module's other names; no release had that name, so there is no alias.
public struct ChatServer: Sendable {
    /// How the server is set up.
    public let configuration: ServerConfiguration
    /// The types the server decodes with: the built-ins and the plugins it discovered.
    public let registry: MessageRegistry
    /// The shared store.
    public let store: any MessageStore
    /// The members and their tokens.
    public let accounts: ServerAccounts
    /// The uploaded files and the conversations each was uploaded to.
    let media: MediaLibrary
    let logger: Logger
    /// Conversations are made one at a time, so that two members cannot both make the same one.
    private let creation = SerialGate()
    /// The live connections and the feed that reaches them.
    let events: EventHub
    /// Each member's allowance of requests, shared by HTTP and the event stream.
    let rateLimit: RateLimiter
    /// The failed authentications of each client address (``ServerLimits/failedAuthBurst``).
    let failedAuthLimit: RateLimiter
    /// The pushes to the gateway, when ``ServerConfiguration/pushGateway`` names one.
    let pushes: PushDispatcher?

    /// Opens the store (a shared one; a personal store is refused) and the accounts that `configuration` names, and
    /// fills the memories of the registry's isolated plugins with the messages they failed on that the store keeps
    /// (`MessageRegistry.pluginFailureMemories`); while the server runs, it writes there those they fail on.
    ///
    /// - Throws: `StoreError`, or ``AccountError`` (for the accounts file or the media index), each naming the file
    ///   or database and the reason.
    public static func open(configuration: ServerConfiguration, registry: MessageRegistry, logger: Logger) async throws -> ChatServer {
        // The folder holds every member's messages: only its owner may enter it, whatever mode SQLite gives the files.
        let folder = configuration.dataDirectory
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw AccountError(.cannotOpen, "\(folder): cannot make the server's data folder: \((error as NSError).localizedDescription)")
        }
        guard chmod(folder, 0o700) == 0 else {
            throw AccountError(.cannotOpen, "\(folder): cannot make the server's data folder private: \(String(cString: strerror(errno)))")
        }
        let store = try await configuration.storeLocation.open(kind: .shared)
        // The messages isolated plugins failed on, here or on another server of the store: not tried again.
        try await store.loadPluginFailures(into: registry)
        let accounts = try ServerAccounts(path: configuration.accountsPath)
        let media = try MediaLibrary(directory: configuration.mediaDirectory, indexPath: configuration.mediaIndexPath)
        return ChatServer(configuration: configuration, registry: registry, store: store, accounts: accounts, media: media, logger: logger)
    }

    private init(
        configuration: ServerConfiguration, registry: MessageRegistry, store: any MessageStore, accounts: ServerAccounts, media: MediaLibrary, logger: Logger
    ) {
        self.configuration = configuration
        self.registry = registry
        self.store = store
        self.accounts = accounts
        self.media = media
        self.logger = logger
        events = EventHub(
            store: store, queueLength: configuration.limits.eventQueueLength, maxUnsentBytes: configuration.limits.maxUnsentBytes, logger: logger,
            accounts: accounts)
        rateLimit = RateLimiter(burst: configuration.limits.burst, perSecond: configuration.limits.requestsPerSecond)
        failedAuthLimit = RateLimiter(burst: configuration.limits.failedAuthBurst, perSecond: configuration.limits.failedAuthPerSecond)
        pushes = configuration.pushGateway.map { [store] gateway in
            PushDispatcher(
                gateway: gateway, credential: configuration.pushCredential, policy: configuration.pushPolicy, deadLetterPath: configuration.pushDeadLettersPath, logger: logger,
                unreadCount: { member, conversation in
                    do {
                        return try await store.readState(member: member, conversation: conversation).unreadCount
                    } catch {
                        logger.warning("push: cannot read the unread count of \(member) in \(conversation): \(error)")
                        return nil
                    }
                })
        }
        if configuration.pushGateway != nil && configuration.pushCredential == nil {
            logger.warning("push: the gateway is called without a credential; anyone who reaches it can push as this server (missive serve --push-credential-file, or ServerConfiguration.pushCredential)")
        }
        let failures: [any Service] =
            registry.pluginFailureMemories.isEmpty ? [] : [PluginFailureService(registry: registry, store: store, logger: logger)]
        let collection = MediaCollectionService(media: media, grace: configuration.limits.unreferencedMediaGrace, logger: logger)
        services = failures + (pushes.map { [$0] } ?? []) + [EventFeedService(hub: events), collection]
    }

    /// Serves until the process receives SIGTERM or SIGINT (then the requests in flight finish, for 30 s at most,
    /// and the call returns) or the calling task is cancelled. A connection idle for a minute is closed. When the
    /// call returns, the store's connections are closed.
    ///
    /// - Parameters:
    ///   - stopsOnSignals: whether SIGTERM and SIGINT stop the server; `false` for a server inside a larger
    ///     program that handles them itself and cancels the task.
    ///   - onListening: called once the server listens, with its address and port (the one the system chose, for
    ///     port 0).
    public func run(
        stopsOnSignals: Bool = true, onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
    ) async throws {
        let host = configuration.host
        let port = configuration.port
        let router = buildRouter()
        let application = Application(
            router: router,
            server: httpServer(webSocketRouter: router),
            configuration: .init(address: .hostname(host, port: port), serverName: "missive"),
            onServerRunning: { channel in await onListening(host, channel.localAddress?.port ?? port) },
            logger: logger)
        // The group stops its services last to first: the application (the requests in flight) before the server's own.
        let services: [any Service] = self.services + [application]
        var group = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: stopsOnSignals ? [.sigterm, .sigint] : [], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(30)
        defer { Task { [store] in await store.close() } }
        try await ServiceGroup(configuration: group).run()
    }

    /// How the HTTP server under the routes is set up, for ``httpServer(webSocketRouter:)`` (which `missive serve`
    /// runs, and a host that mounts the routes serves with). A host that builds its own server may pass it to
    /// `.http1WebSocketUpgrade(webSocketRouter:configuration:)`, and goes without the connection guards.
    ///
    /// - A connection idle for a minute is closed.
    /// - An event-stream frame may be as large as a request body (``ServerLimits/maxRequestBytes``); a larger one
    ///   closes the connection with 1009.
    /// - A text frame that is not UTF-8 closes the connection with 1007, as RFC 6455 asks, rather than reaching the
    ///   server with its bad bytes replaced.
    /// - The server pings each event stream every 30 s, and gives a closing client 5 s to answer the close.
    public var httpServerConfiguration: HTTP1WebSocketUpgradeChannel.Configuration {
        .init(
            http1: .init(idleTimeout: .seconds(60)),
            ws: .init(
                maxFrameSize: configuration.limits.maxRequestBytes, autoPing: .enabled(timePeriod: .seconds(30)), closeTimeout: .seconds(5),
                validateUTF8: true))
    }

    /// The services the server's routes need running beside them: the feed that reaches the event streams, the
    /// pushes to the gateway, and the writing down of the messages isolated plugins failed on. A host that mounts
    /// the routes (``routes(context:)``) runs these in its application (`Application(router:services:)`), and
    /// lists them before anything its routes' requests need to finish: a service group stops its services last
    /// to first, so these stop after the requests in flight, which may queue pushes or meet failures.
    /// Run them once: a second copy of the event feed does nothing but log a warning.
    public let services: [any Service]

    /// The member's conversations: those with messages, newest activity first, then those without, by id.
    func conversationList(member: String) async throws -> [RemoteConversation] {
        let summaries = try await store.conversations(member: member)
        let listed = Set(summaries.map(\.id))
        let empty = try await store.conversationIDs(member: member).filter { !listed.contains($0) }
        return summaries.map(RemoteConversation.init) + empty.map { RemoteConversation(id: $0, unreadCount: 0, messageCount: 0, lastMessage: nil) }
    }

    /// Logs, as a security event, a member who named (as `what`: a message, a cursor) a message `found` in another
    /// conversation than `conversation`. The member's answer is that of a message never stored.
    func noteElsewhere(_ found: StoredMessage?, named what: String, by member: String, in conversation: String) {
        guard let found, found.conversationID != conversation else { return }
        SecurityLog.event(logger, "cross-conversation", ["member": member, "conversation": conversation, what: found.id])
    }

    /// The members of `conversation`, when `member` is one of them; otherwise the conversation is not found.
    func requireMembership(_ member: String, _ conversation: String) async throws -> [String] {
        let members = try await store.members(ofConversation: conversation)
        guard members.contains(member) else {
            SecurityLog.event(logger, "not-a-member", ["member": member, "conversation": conversation])
            throw APIError.noConversation(conversation)
        }
        return members
    }

    /// `POST /api/v1/conversations` `{"id": "team", "members": ["bob"]}`: a new conversation of the member who
    /// asks and the members named, each of whom must have an account.
    func createConversation(_ request: Request, member: String) async throws -> Response {
        let body = try await Self.wireBody(NewConversation.self, request, limit: configuration.limits.maxRequestBytes, timeout: configuration.limits.requestBodyTimeout)
        let members = try await makeConversation(body.id, by: member, with: body.members)
        return JSONResponse.make(status: .created, RemoteConversationDetail(id: body.id, members: members, readUpTo: nil, unreadCount: 0))
    }

    /// Makes the conversation `id` of `member` and the members named, each of whom must have an account; returns
    /// its members, sorted. Used by the API and by the web page's form.
    func makeConversation(_ id: String, by member: String, with names: [String]) async throws -> [String] {
        guard Self.isValidConversationID(id) else {
            throw APIError.badRequest(
                "invalid-conversation", "a conversation id has 1 to 128 letters, digits, '.', '_', '-', ':' or '@', beginning with a letter or a digit")
        }
        guard names.count <= 100 else { throw APIError.badRequest("malformed-request", "at most 100 members at once") }
        var members = [member]
        for name in names {
            guard try accounts.exists(member: name) else { throw APIError.badRequest("unknown-member", "no member named \(TextHygiene.line(name))") }
            if !members.contains(name) { members.append(name) }
        }
        let taken = APIError(status: .conflict, code: "conflict", message: "the conversation id \(id) is taken")
        await creation.enter()
        do {
            // The claim makes the check and the joins one step across the instances that share the accounts file;
            // the store is checked too, for ids made before claims were kept or by other tools.
            guard try await accounts.claimConversation(id, by: member) else { throw taken }
            do {
                let existing = try await store.members(ofConversation: id)
                let stored = try await store.messages(inConversation: id, limit: 1)
                guard existing.isEmpty && stored.isEmpty else { throw taken }
            } catch {
                try? await accounts.releaseConversationClaim(id, by: member)
                throw error
            }
            for name in members { _ = try await store.join(member: name, conversation: id) }
        } catch {
            await creation.leave()
            throw error
        }
        await creation.leave()
        return members.sorted()
    }

    /// `?limit=N` (1 to 500; 50 by default).
    static func limit(_ request: Request) throws -> Int {
        guard let text = try RequestInput.query(request, "limit") else { return 50 }
        guard let limit = Int(text), (1...500).contains(limit) else { throw APIError.badRequest("malformed-request", "limit is a number from 1 to 500") }
        return limit
    }

    /// The request's body read as the wire type `T`, at most `limit` bytes: `malformed-json` when it is not JSON,
    /// `malformed-request` (naming the member at fault) when it is not a `T`.
    static func wireBody<T: WireType>(_ type: T.Type, _ request: Request, limit: Int, timeout: Duration) async throws -> T {
        let bytes = try await bodyBytes(request, limit: limit, timeout: timeout)
        if let problem = JSONScanner.problem(in: bytes) { throw APIError.badRequest("malformed-json", "the body is not JSON: \(problem)") }
        do throws(WireDecodingError) {
            return try T.decoded(from: bytes)
        } catch {
            throw APIError.badRequest("malformed-request", "the body is not a \(T.wireName) object: \(error.reason)")
        }
    }

    /// The request's body as one JSON value, at most `limit` bytes.
    static func jsonBody(_ request: Request, limit: Int, timeout: Duration) async throws -> JSONValue {
        let bytes = try await bodyBytes(request, limit: limit, timeout: timeout)
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw APIError.badRequest("malformed-json", "the body is not JSON: \(error)")
        }
    }

    /// Whether `id` can name a conversation made on the server.
    static func isValidConversationID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return ServerAccounts.isName(bytes, length: 1...128, punctuation: ".-_:@")
    }
}

/// One holder at a time, in the order they came: an async lock for work that awaits while it holds it.
actor SerialGate {
    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Waits until the gate is free, then holds it.
    func enter() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the gate to the next waiter, or frees it.
    func leave() {
        if waiting.isEmpty { held = false } else { waiting.removeFirst().resume() }
    }
}
