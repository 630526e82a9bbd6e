import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import MissiveCore
import NIOCore

/// What a request carries through the server's routes: Hummingbird's own state, and the member its token
/// belongs to once ``Authentication`` has checked it.
struct ServerContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The authenticated member; `nil` before ``Authentication`` runs, and on routes that need none.
    var member: String?
    /// What the event stream's upgrade needs.
    let webSocket: WebSocketHandlerReference<ServerContext>
    /// The connection, for cutting off an event stream whose reader stopped reading.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        member = nil
        webSocket = .init()
        channel = source.channel
    }

    /// The authenticated member; a route behind ``Authentication`` always has one.
    func requireMember() throws -> String {
        guard let member else { throw APIError.unauthorized("this request needs a member's token") }
        return member
    }
}

/// A refusal, answered as `{"error": {"code": "...", "message": "..."}}` with its HTTP status.
struct APIError: HTTPResponseError {
    var status: HTTPResponse.Status
    /// A stable, kebab-case code a client can act on.
    var code: String
    /// The reason, in words.
    var message: String
    var headers: HTTPFields = [:]

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse.make(status: status, ErrorJSON(error: .init(code: code, message: message)))
        response.headers.append(contentsOf: headers)
        return response
    }

    static func unauthorized(_ message: String) -> APIError {
        APIError(status: .unauthorized, code: "unauthorized", message: message, headers: [.wwwAuthenticate: "Bearer realm=\"missive\""])
    }

    static func badRequest(_ code: String, _ message: String) -> APIError {
        APIError(status: .badRequest, code: code, message: message)
    }

    /// What a member gets for a conversation it is not in, the same as for one that does not exist, so that
    /// nobody learns which conversations exist.
    static func noConversation(_ id: String) -> APIError {
        APIError(status: .notFound, code: "not-found", message: "no conversation \(TextHygiene.line(id)) of yours")
    }
}

/// The JSON of an error.
struct ErrorJSON: Encodable {
    var error: Details

    struct Details: Encodable {
        var code: String
        var message: String
    }
}

/// JSON responses, written by the project's JSON writer (envelopes spliced in byte for byte).
enum JSONResponse {
    static func make(status: HTTPResponse.Status = .ok, _ value: some Encodable) -> Response {
        let bytes: [UInt8]
        do {
            bytes = try JSONWriterEncoder.encode(value)
        } catch {
            // Only a non-finite number fails to encode; no response of the server holds one.
            bytes = Array(#"{"error":{"code":"internal","message":"the response could not be written"}}"#.utf8)
            return Response(status: .internalServerError, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private static let headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
}
