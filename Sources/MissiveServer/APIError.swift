import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import MissiveCore
import MissiveStore
import MissiveWire
import NIOCore

/// A refusal, answered as `{"error": {"code": "...", "message": "..."}}` with its HTTP status over HTTP, and as an
/// `error` frame with the same `code` and `message` on the event stream (``APIError/init(answering:logger:)`` maps
/// any error to one, for both).
struct APIError: HTTPResponseError {
    var status: HTTPResponse.Status
    /// A stable, kebab-case code a client can act on.
    var code: String
    /// The reason, in words.
    var message: String
    var headers: HTTPFields = [:]
    /// For `rate-limited`: the whole seconds to wait before trying again (`Retry-After` over HTTP, `retryAfter` in
    /// a frame).
    var retryAfter: Int?

    init(status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:], retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.retryAfter = retryAfter
        if let retryAfter { self.headers[.retryAfter] = String(retryAfter) }
    }

    /// The refusal that answers `error`, whatever threw it: an `APIError` as it is, Hummingbird's own errors (no
    /// route: `not-found`; a body over its limit: `too-large`), and a store or accounts file that cannot answer as
    /// `503` (logged with the reason, which the client does not see). Anything else is `500 internal`, logged.
    init(answering error: any Error, logger: Logger) {
        switch error {
        case let error as APIError:
            self = error
        case let error as HTTPError:
            let code = error.status == .notFound ? "not-found" : error.status == .contentTooLarge ? "too-large" : "http-\(error.status.code)"
            self.init(status: error.status, code: code, message: error.body ?? error.status.reasonPhrase, headers: error.headers)
        case let error as StoreError:
            logger.error("store: \(error)")
            self.init(status: .serviceUnavailable, code: "store-unavailable", message: "the store cannot answer now")
        case let error as AccountError:
            logger.error("accounts: \(error)")
            self.init(status: .serviceUnavailable, code: "accounts-unavailable", message: "the accounts cannot be read now")
        default:
            logger.error("unexpected: \(error)")
            self.init(status: .internalServerError, code: "internal", message: "the server failed to answer")
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse.make(status: status, WireError(details))
        response.headers.append(contentsOf: headers)
        return response
    }

    /// The error's code, message and wait, as the body and an `error` frame carry them.
    var details: WireError.Details { WireError.Details(code: code, message: message, retryAfter: retryAfter) }

    static func unauthorized(_ message: String) -> APIError {
        APIError(status: .unauthorized, code: "unauthorized", message: message, headers: [.wwwAuthenticate: "Bearer realm=\"missive\""])
    }

    /// A route behind Missive's authentication reached without a member.
    static let memberRequired = unauthorized("this request needs a member's token")

    static func badRequest(_ code: String, _ message: String) -> APIError {
        APIError(status: .badRequest, code: code, message: message)
    }

    /// A member over its allowance of requests (``RateLimit``), over HTTP or on the event stream alike.
    static func rateLimited(wait seconds: Double) -> APIError {
        let wait = max(1, Int(seconds.rounded(.up)))
        return APIError(status: .tooManyRequests, code: "rate-limited", message: "too many requests; try again in \(wait) s", retryAfter: wait)
    }

    /// What a member gets for a conversation it is not in, the same as for one that does not exist, so that
    /// nobody learns which conversations exist.
    static func noConversation(_ id: String) -> APIError {
        APIError(status: .notFound, code: "not-found", message: "no conversation \(TextHygiene.line(id)) of yours")
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
