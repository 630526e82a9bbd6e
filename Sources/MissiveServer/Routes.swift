import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import MissiveStore
import MissiveWire

// The server's routes, one collection per area, and how they are put together: for `missive serve`
// (`buildRouter()`), or for a host that mounts them into its own Hummingbird application (`routes(context:)`).

extension ChatServer {
    /// `missive serve`'s router: Missive's routes (``routes(context:)``) and nothing else, in
    /// ``MissiveServerContext``. A path no route takes, or a method its path does not have, is answered with
    /// `not-found` in Missive's error shape, with its security headers.
    public func buildRouter() -> Router<MissiveServerContext> {
        let router = Router(context: MissiveServerContext.self)
        // On the router too, so that a path no route takes is answered with the same error shape and headers.
        router.add(middleware: ErrorsAndHeaders<MissiveServerContext>())
        router.addRoutes(routes(context: MissiveServerContext.self))
        return router
    }

    /// Every route of the server, for a host to mount into its own Hummingbird router beside its own routes:
    /// `router.addRoutes(server.routes(context: AppContext.self))`.
    ///
    /// The collection holds the API under `/api/v1` (behind a member's token or session cookie, and the rate limit)
    /// and the web page at `/`, `/login`, `/session`, `/c` and `/static`, so it is mounted at the root of the host's
    /// paths. Every answer of these routes carries Missive's security headers, and every refusal has Missive's one
    /// error shape (`{"error": {"code", "message"}}`). The host must also:
    /// - run ``services`` in its application (the event feed, pushes, the plugin-failure writer);
    /// - serve with ``httpServer(webSocketRouter:)``, for the event stream at `/api/v1/events` and the guards on
    ///   each connection;
    /// - add ``unmatchedAPIRequests(context:)`` to its router, so that a request under `/api/v1` that no route
    ///   takes gets Missive's error shape.
    ///
    /// The areas are collections of their own: conversations and the member (`me`, type reports), messages (sending,
    /// history, read marks, search), actions, media, the event stream, and the web page.
    public func routes<Context: MissiveRequestContext>(context: Context.Type = Context.self) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.add(middleware: ErrorsAndHeaders<Context>())
        routes.addRoutes(pageRoutes(context: Context.self))
        let api = routes.group("api/v1")
            .add(middleware: Authentication<Context>(accounts: accounts, addresses: failedAuthLimit, trustedProxies: configuration.trustedProxies))
            .add(middleware: RateLimit<Context>(limiter: rateLimit))
        // The event stream upgrades in the host's own context; the other routes run in one that has the member.
        api.addRoutes(eventRoutes(context: Context.self))
        let members = api.group(context: MemberRequestContext<Context>.self)
        members.addRoutes(conversationRoutes(context: Context.self))
        members.addRoutes(messageRoutes(context: Context.self))
        members.addRoutes(actionRoutes(context: Context.self))
        members.addRoutes(mediaRoutes(context: Context.self))
        return routes
    }

    /// Middleware for a host's router that mounts ``routes(context:)``: a request under `/api/v1` that no route
    /// takes (a path that is no endpoint, or a method its path does not have) is answered as `missive serve`
    /// answers it, `404` with the `not-found` code in Missive's error shape and its security headers, so that a
    /// client of the API meets one contract whoever serves it. It changes nothing else: what any route answers or
    /// throws, the host's or Missive's, passes through as it came, and a request outside `/api/v1` that no route
    /// takes keeps the router's own answer.
    ///
    /// `router.add(middleware: chat.unmatchedAPIRequests(context: AppContext.self))`. Hummingbird gives a router's
    /// not-found answer every middleware of the router, wherever it was added, so the line may come before or after
    /// the routes.
    public func unmatchedAPIRequests<Context: RequestContext>(context: Context.Type = Context.self) -> some RouterMiddleware<Context> {
        UnmatchedAPIRequests<Context>()
    }

    /// `GET /api/v1/me`, the member's conversations (`GET`/`POST /api/v1/conversations`, `GET …/{id}`), and its type
    /// reports (`/api/v1/me/types`, `…/{id}/types/{objectName}`).
    func conversationRoutes<Context: MissiveRequestContext>(context: Context.Type) -> RouteCollection<MemberRequestContext<Context>> {
        let routes = RouteCollection(context: MemberRequestContext<Context>.self)
        routes.get("me") { _, context in
            JSONResponse.make(MemberAnswer(member: context.member))
        }
        routes.get("conversations") { _, context in
            JSONResponse.make(ConversationList(conversations: try await conversationList(member: context.member)))
        }
        routes.post("conversations") { request, context in
            try await createConversation(request, member: context.member)
        }
        routes.get("conversations/:conversation") { _, context in
            let id = try Self.pathParameter(context, "conversation")
            let members = try await requireMembership(context.member, id)
            let state = try await store.readState(member: context.member, conversation: id)
            return JSONResponse.make(RemoteConversationDetail(id: id, members: members, readUpTo: state.readUpTo, unreadCount: state.unreadCount))
        }
        addTypeReports(to: routes)
        return routes
    }

    /// A path parameter, its percent escapes decoded (`a%3Ab` is `a:b`); refused when it is empty or not a value
    /// ``RequestInput`` takes (percent-encoded UTF-8 without control characters, at most 1 KiB).
    static func pathParameter(_ context: some RequestContext, _ name: String) throws -> String {
        try RequestInput.pathSegment(try context.parameters.require(name)[...], name)
    }
}

/// Missive's answers, whatever its routes throw: one error shape (``APIError``) for every refusal, and headers every
/// response carries: nothing is sniffed into another type, framed by another site, or cached.
struct ErrorsAndHeaders<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError where !(error is APIError) && !(error is HTTPError) {
            // Hummingbird's and its libraries' own answers (a range a file cannot serve...), as they are.
            response = try error.response(from: request, context: context)
        } catch {
            response = try APIError(answering: error, logger: context.logger).response(from: request, context: context)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.init("X-Frame-Options")!] = "DENY"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

/// A host router's answer, in Missive's shape, to a request under `/api/v1` that no route takes
/// (``ChatServer/unmatchedAPIRequests(context:)``). It changes only the router's own not-found answer (Hummingbird's
/// not-found responder, which marks the request's endpoint `NotFound`): what a route answers or throws, the host's
/// or Missive's, passes through as it came.
struct UnmatchedAPIRequests<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && context.endpointPath == "NotFound" && Self.isAPI(request.uri.path) {
            return try await ErrorsAndHeaders<Context>().handle(request, context: context) { _, _ in throw error }
        }
    }

    static func isAPI(_ path: String) -> Bool { path == "/api/v1" || path.hasPrefix("/api/v1/") }
}
