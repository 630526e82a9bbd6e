import Crypto
import Foundation
import GRDB
import Hummingbird

// Browser sessions: a browser cannot send `Authorization` on a WebSocket or an `<img>`, so a member signs in once
// with a token and the browser keeps a session id in the `missive_session` cookie. The accounts file keeps only
// the id's SHA-256, tied to the token's, so revoking a member's tokens ends its sessions.

extension ServerAccounts {
    /// How long a session lasts after sign-in: 30 days.
    static let sessionLifetime: Int64 = 30 * 24 * 3600 * 1000

    /// Starts a session for the member `token` belongs to: the new session id (32 random bytes, base64url) and
    /// the member; `nil` for a token that is unknown or revoked.
    func startSession(token: String) async throws(AccountError) -> (id: String, member: String)? {
        let tokenHash = Self.sessionHash(token)
        let id = Self.newSessionID()
        let now = Self.sessionNow()
        do {
            return try await database.write { db -> (id: String, member: String)? in
                guard let member = try String.fetchOne(db, sql: "SELECT member FROM token WHERE hash = ? AND revoked_at IS NULL", arguments: [tokenHash]) else {
                    return nil
                }
                // Expired sessions are dropped as new ones begin, so that the table does not grow without end.
                try db.execute(sql: "DELETE FROM session WHERE expires_at <= ?", arguments: [now])
                try db.execute(
                    sql: "INSERT INTO session(hash, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)",
                    arguments: [Self.sessionHash(id), tokenHash, now, now + Self.sessionLifetime])
                return (id, member)
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// The member a session belongs to; `nil` for a session that is unknown, expired or ended, or whose token
    /// was revoked.
    func member(forSession id: String) async throws(AccountError) -> String? {
        let hash = Self.sessionHash(id)
        let now = Self.sessionNow()
        do {
            return try await database.read { db in
                try String.fetchOne(
                    db,
                    sql: """
                        SELECT t.member FROM session s JOIN token t ON t.hash = s.token_hash
                        WHERE s.hash = ? AND s.expires_at > ? AND t.revoked_at IS NULL
                        """,
                    arguments: [hash, now])
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// Ends a session (signing out); nothing happens for one that does not exist.
    func endSession(_ id: String) async throws(AccountError) {
        let hash = Self.sessionHash(id)
        do {
            try await database.write { db in try db.execute(sql: "DELETE FROM session WHERE hash = ?", arguments: [hash]) }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// Moves a session's expiry (for tests of expiry): `at` in milliseconds since 1970.
    func setSessionExpiry(_ id: String, at: Int64) throws(AccountError) {
        do {
            try database.write { db in
                try db.execute(sql: "UPDATE session SET expires_at = ? WHERE hash = ?", arguments: [at, Self.sessionHash(id)])
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    private static func sessionHash(_ text: String) -> Data {
        Data(SHA256.hash(data: Data(text.utf8)))
    }

    private static func sessionNow() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }

    private static func newSessionID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// The session cookie and the same-origin rule of requests it authenticates.
enum SessionCookie {
    /// The cookie's name.
    static let name = "missive_session"

    /// The session id the request's `Cookie` header carries, if any.
    static func id(in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                if !value.isEmpty { return value }
            }
        }
        return nil
    }

    /// The `Set-Cookie` value that gives the browser session `id`. `Secure` is added when the request came over
    /// https as a proxy in front reports it (`X-Forwarded-Proto: https`).
    static func setting(_ id: String, for request: Request) -> String {
        "\(name)=\(id); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(ServerAccounts.sessionLifetime / 1000)" + (isHTTPS(request) ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that makes the browser forget the session.
    static func clearing(for request: Request) -> String {
        "\(name)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0" + (isHTTPS(request) ? "; Secure" : "")
    }

    private static func isHTTPS(_ request: Request) -> Bool {
        request.headers[.init("X-Forwarded-Proto")!]?.lowercased() == "https"
    }

    /// Whether a cookie-authenticated request may change something: a GET or HEAD that is not a WebSocket upgrade
    /// may; anything else must carry an `Origin` that is the server's own (`http://` or `https://` and the `Host`
    /// the request was sent to). This is the guard against cross-site request forgery and cross-site WebSocket
    /// hijacking.
    static func isAllowed(_ request: Request) -> Bool {
        // A WebSocket handshake is a GET; its key marks it even where the upgrade headers were consumed.
        let upgrade = request.headers[.upgrade]?.lowercased() == "websocket" || request.headers[.secWebSocketKey] != nil
        if (request.method == .get || request.method == .head) && !upgrade { return true }
        return isSameOrigin(request)
    }

    /// Whether the request's `Origin` is the server's own.
    static func isSameOrigin(_ request: Request) -> Bool {
        // Every Origin given must be the server's own (a request with two is judged by both).
        let origins = request.headers[values: .origin].map { $0.lowercased() }
        guard !origins.isEmpty, let host = request.head.authority?.lowercased(), !host.isEmpty else { return false }
        return origins.allSatisfy { $0 == "http://" + host || $0 == "https://" + host }
    }

    /// The answer to a cookie-authenticated request from another origin.
    static let crossOrigin = APIError(
        status: .forbidden, code: "cross-origin",
        message: "a request signed in by the session cookie that changes something must come from this server's own pages (its Origin header)")
}
