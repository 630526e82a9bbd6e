import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Lets a request through only with a valid token (`Authorization: Bearer msv_...`) or, from a browser, a valid
/// session cookie (see ``SessionCookie``), and records whose it is. A cookie-authenticated request that changes
/// something must come from the server's own origin.
///
/// A request whose credential fails (none, malformed, unknown, revoked, expired) counts against its client address
/// (``ServerLimits/failedAuthBurst``); once an address is over that allowance, its requests are refused `429` with a
/// `Retry-After` before any credential is looked at, a valid one included, until the allowance refills. Each failure
/// and each such refusal is a security event in the log.
struct Authentication<Context: MissiveRequestContext>: RouterMiddleware {
    let accounts: ServerAccounts
    let addresses: RateLimiter
    let trustedProxies: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let address = ClientAddress.of(request, channel: context.channel, trustedProxies: trustedProxies)
        // A credential is checked only while the address has an allowance left for it, counting the checks in
        // flight: concurrent guesses cannot pass the check together.
        let wait = addresses.reserve(for: address, at: .now)
        if wait > 0 {
            SecurityLog.event(context.logger, "address-limited", ["address": address, "path": request.uri.path])
            throw APIError.rateLimited(wait: wait)
        }
        var failed = false
        defer { addresses.release(for: address, taking: failed, at: .now) }
        let member: String?
        do {
            member = try await authenticatedMember(request)
        } catch let error as APIError where error.status == .unauthorized {
            failed = true
            SecurityLog.event(context.logger, "failed-auth", ["address": address, "path": request.uri.path, "reason": error.message])
            throw error
        }
        var context = context
        context.missiveMember = member
        return try await next(request, context)
    }

    /// The member whose token or session cookie `request` carries; `401` when it carries none that is valid.
    private func authenticatedMember(_ request: Request) async throws -> String {
        guard let header = request.headers[.authorization] else {
            guard let session = SessionCookie.id(in: request) else {
                throw APIError.unauthorized("no token: send it as 'Authorization: Bearer TOKEN'")
            }
            guard let member = try await accounts.member(forSession: session) else {
                throw APIError.unauthorized("the session is not valid (unknown, expired, ended, or its token revoked): sign in again")
            }
            guard SessionCookie.isAllowed(request) else { throw SessionCookie.crossOrigin }
            return member
        }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw APIError.unauthorized("the Authorization header is not 'Bearer TOKEN'")
        }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        // An accounts file that cannot be read is answered 503 `accounts-unavailable`, and logged, by SecurityHeaders.
        guard let member = try await accounts.member(forToken: token) else { throw APIError.unauthorized("the token is not valid (unknown, or revoked)") }
        return member
    }
}

/// Each member's requests, limited by a token bucket: a burst, refilled at a steady rate. A member over its
/// limit is answered `429 Too Many Requests` with the seconds to wait (`Retry-After`); other members are not
/// slowed. The event stream's frames draw on the same bucket (``RateLimiter/admit(_:)``) and are refused the same way.
struct RateLimit<Context: MissiveRequestContext>: RouterMiddleware {
    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let member = context.missiveMember else { throw APIError.memberRequired }
        do {
            try limiter.admit(member)
        } catch {
            SecurityLog.event(context.logger, "rate-limited", ["member": member, "path": request.uri.path])
            throw error
        }
        return try await next(request, context)
    }
}

/// A rate limiter: a token bucket per key. The server has one per member, shared by HTTP requests and event-stream
/// frames, and one per client address for requests whose credential fails. Buckets that have refilled are forgotten
/// when there are many, so that keys that come once (random addresses) do not grow it without bound.
final class RateLimiter: Sendable {
    private typealias Bucket = (tokens: Double, at: ContinuousClock.Instant, pending: Int)
    private let state = Mutex<(buckets: [String: Bucket], prunedAt: ContinuousClock.Instant?)>(([:], nil))
    private let burst: Double
    private let perSecond: Double

    init(burst: Int, perSecond: Double) {
        self.burst = Double(max(burst, 1))
        self.perSecond = max(perSecond, 0.001)
    }

    /// Takes one request from `member`'s bucket, or throws `429 rate-limited` with the seconds to wait.
    func admit(_ member: String) throws(APIError) {
        let wait = take(for: member, at: .now)
        if wait > 0 { throw APIError.rateLimited(wait: wait) }
    }

    /// Takes one request from `member`'s bucket: 0 when there was one, else the seconds until there is.
    func take(for member: String, at now: ContinuousClock.Instant) -> Double {
        update(member, at: now) { bucket in
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / perSecond }
            bucket.tokens -= 1
            return 0
        }
    }

    /// Reserves one request of `key`'s bucket for a check in flight, without taking it yet: 0 when the bucket has
    /// one beyond those already reserved, else the seconds until it has (nothing reserved). Each reservation is
    /// ended by ``release(for:taking:at:)``.
    func reserve(for key: String, at now: ContinuousClock.Instant) -> Double {
        update(key, at: now) { bucket in
            let free = bucket.tokens - Double(bucket.pending)
            guard free >= 1 else { return (1 - free) / perSecond }
            bucket.pending += 1
            return 0
        }
    }

    /// Ends a reservation of `key`'s bucket, and takes the request when `taking` (the check failed).
    func release(for key: String, taking: Bool, at now: ContinuousClock.Instant) {
        _ = update(key, at: now) { bucket in
            bucket.pending = max(0, bucket.pending - 1)
            if taking { bucket.tokens = max(0, bucket.tokens - 1) }
            return 0
        }
    }

    /// How many buckets are kept before those that have refilled are forgotten (at most once a second).
    static let prunedAbove = 10_000

    private func update(_ key: String, at now: ContinuousClock.Instant, _ change: (inout Bucket) -> Double) -> Double {
        state.withLock { state in
            var bucket = state.buckets[key] ?? (burst, now, 0)
            bucket.tokens = refilled(bucket, at: now)
            bucket.at = now
            if state.buckets[key] == nil, state.buckets.count >= Self.prunedAbove, state.prunedAt.map({ now - $0 > .seconds(1) }) ?? true {
                state.buckets = state.buckets.filter { refilled($0.value, at: now) < burst || $0.value.pending > 0 }
                state.prunedAt = now
            }
            let result = change(&bucket)
            state.buckets[key] = bucket
            return result
        }
    }

    private func refilled(_ bucket: Bucket, at now: ContinuousClock.Instant) -> Double {
        let elapsed = now - bucket.at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return min(burst, bucket.tokens + seconds * perSecond)
    }
}
