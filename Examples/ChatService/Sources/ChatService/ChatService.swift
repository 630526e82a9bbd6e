import Hummingbird
import HummingbirdWebSocket
import Logging
import MissiveServer
import NIOCore

/// The app's request context, fit for Missive's routes: a WebSocket upgrade, the connection, and the member.
public struct AppContext: MissiveRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket = WebSocketHandlerReference<AppContext>()
    public let channel: any Channel
    public var missiveMember: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The app's router: its own routes, and every route of Missive's chat (the API under `/api/v1`, the event
/// stream, the web page) beside them. A request under `/api/v1` that no route takes is answered in the chat's own
/// error shape, as clients of the chat expect; the app's other paths keep Hummingbird's answers.
public func buildRouter(chat: ChatServer) -> Router<AppContext> {
    let router = Router(context: AppContext.self)
    router.add(middleware: chat.unmatchedAPIRequests(context: AppContext.self))
    router.get("health") { _, _ in "ok" }
    router.get("shop/orders/:id") { _, context in
        "order \(try context.parameters.require("id")) ships tomorrow"
    }
    router.addRoutes(chat.routes(context: AppContext.self))
    return router
}

/// The app on `port` of `host`: the router above, WebSocket upgrades for the chat's event stream with the chat's
/// own settings (frame size, pings, idle connections closed), and the chat's services (its event feed, its pushes)
/// run beside the requests.
public func buildApplication(chat: ChatServer, host: String = "127.0.0.1", port: Int = 8080, logger: Logger) -> some ApplicationProtocol {
    let router = buildRouter(chat: chat)
    return Application(
        router: router,
        server: chat.httpServer(webSocketRouter: router),
        configuration: .init(address: .hostname(host, port: port)),
        services: chat.services,
        logger: logger)
}
