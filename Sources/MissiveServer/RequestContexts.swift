import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// What a request context needs for Missive's routes to run in it: a WebSocket upgrade (the event stream), the
/// connection (to cut off an event stream whose reader stopped reading), and a place for the member that
/// Missive's authentication finds.
///
/// A host that mounts Missive's routes into its own Hummingbird application (``ChatServer/routes(context:)``)
/// makes its request context conform: it stores `source.channel` when it is made, and leaves ``missiveMember``
/// `nil`. ``MissiveServerContext`` is the context `missive serve` uses.
///
/// ```swift
/// struct AppContext: MissiveRequestContext {
///     var coreContext: CoreRequestContextStorage
///     let webSocket = WebSocketHandlerReference<AppContext>()
///     let channel: any Channel
///     var missiveMember: String?
///     init(source: ApplicationRequestContextSource) {
///         coreContext = .init(source: source)
///         channel = source.channel
///     }
/// }
/// ```
public protocol MissiveRequestContext: RequestContext, WebSocketRequestContext {
    /// The connection the request came on.
    var channel: any Channel { get }
    /// The member whose token or session cookie the request carries, once Missive's authentication has checked it;
    /// `nil` before, and on routes that need no member (the sign-in page, the page's script).
    var missiveMember: String? { get set }
}

/// The request context of `missive serve`'s router (``ChatServer/buildRouter()``).
public struct MissiveServerContext: MissiveRequestContext {
    /// Hummingbird's own state of the request.
    public var coreContext: CoreRequestContextStorage
    /// What the event stream's upgrade needs.
    public let webSocket: WebSocketHandlerReference<MissiveServerContext>
    /// The connection the request came on.
    public let channel: any Channel
    /// The authenticated member, once Missive's authentication has run.
    public var missiveMember: String?

    /// The context of a request that came on `source`'s connection.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
        missiveMember = nil
    }
}

/// The context of Missive's routes behind its authentication: the member is there, not optional.
///
/// Made from the host's context once ``MissiveRequestContext/missiveMember`` is set; a request without one never
/// reaches a route of this context (it is refused `401 unauthorized` first).
public struct MemberRequestContext<Parent: MissiveRequestContext>: ChildRequestContext {
    /// Hummingbird's own state of the request.
    public var coreContext: CoreRequestContextStorage
    /// The member the request is for.
    public let member: String

    /// The member context of `context`, which Missive's authentication has checked.
    ///
    /// - Throws: `401 unauthorized` when the request carries no member.
    public init(context: Parent) throws {
        guard let member = context.missiveMember else { throw APIError.memberRequired }
        coreContext = context.coreContext
        self.member = member
    }
}
