import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Lets a request through only with a valid token (`Authorization: Bearer msv_...`) or, from a browser, a valid
/// session cookie (see ``SessionCookie``), and records whose it is. A cookie-authenticated request that changes
/// something must come from the server's own origin.
struct Authentication: RouterMiddleware {
    typealias Context = ServerContext
    let accounts: ServerAccounts

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            guard let session = SessionCookie.id(in: request) else {
                throw APIError.unauthorized("no token: send it as 'Authorization: Bearer TOKEN'")
            }
            guard let member = try await accounts.member(forSession: session) else {
                throw APIError.unauthorized("the session is not valid (unknown, expired, ended, or its token revoked): sign in again")
            }
            guard SessionCookie.isAllowed(request) else { throw SessionCookie.crossOrigin }
            var context = context
            context.member = member
            return try await next(request, context)
        }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw APIError.unauthorized("the Authorization header is not 'Bearer TOKEN'")
        }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        // An accounts file that cannot be read is answered 503 `accounts-unavailable`, and logged, by SecurityHeaders.
        guard let member = try await accounts.member(forToken: token) else { throw APIError.unauthorized("the token is not valid (unknown, or revoked)") }
        var context = context
        context.member = member
        return try await next(request, context)
    }
}

/// Each member's requests, limited by a token bucket: a burst, refilled at a steady rate. A member over its
/// limit is answered `429 Too Many Requests` with the seconds to wait; other members are not slowed.
struct RateLimit: RouterMiddleware {
    typealias Context = ServerContext
    let buckets: Buckets

    init(buckets: Buckets) {
        self.buckets = buckets
    }

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        let wait = buckets.take(for: try context.requireMember(), at: ContinuousClock.now)
        if wait > 0 {
            throw APIError(
                status: .tooManyRequests, code: "rate-limited", message: "too many requests; try again in \(Int(wait.rounded(.up))) s",
                headers: [.retryAfter: String(Int(wait.rounded(.up)))])
        }
        return try await next(request, context)
    }

    /// The buckets, one per member.
    final class Buckets: Sendable {
        private let state = Mutex<[String: (tokens: Double, at: ContinuousClock.Instant)]>([:])
        private let burst: Double
        private let perSecond: Double

        init(burst: Int, perSecond: Double) {
            self.burst = Double(max(burst, 1))
            self.perSecond = max(perSecond, 0.001)
        }

        /// Takes one request from `member`'s bucket: 0 when there was one, else the seconds until there is.
        func take(for member: String, at now: ContinuousClock.Instant) -> Double {
            state.withLock { buckets in
                var bucket = buckets[member] ?? (burst, now)
                let elapsed = now - bucket.at
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                bucket.tokens = min(burst, bucket.tokens + seconds * perSecond)
                bucket.at = now
                defer { buckets[member] = bucket }
                guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / perSecond }
                bucket.tokens -= 1
                return 0
            }
        }
    }
}
