import Crypto
import Foundation

/// How a push gateway knows that a push comes from this server (``ServerConfiguration/pushCredential``).
///
/// - ``bearer(_:)``: every push carries `Authorization: Bearer TOKEN`; the gateway compares the token.
/// - ``hmacSHA256(secret:)``: every push carries `Missive-Timestamp` (the time of the try, in whole seconds since
///   1970) and `Missive-Signature: v1=HEX`, the HMAC-SHA256 under the secret of the timestamp, a `.`, and the body's
///   bytes. The gateway computes the same, compares in constant time, and refuses a timestamp more than five minutes
///   from its clock, so that a captured push cannot be replayed later; the secret itself never travels.
///
/// docs/SERVER.md, "Push", shows a gateway's check.
public enum PushCredential: Sendable, Hashable {
    /// A token the gateway expects in `Authorization: Bearer`.
    case bearer(String)
    /// A shared secret that signs each push's timestamp and body.
    case hmacSHA256(secret: [UInt8])

    /// The headers one try carries, at `time` (seconds since 1970).
    func headers(for body: [UInt8], at time: Int64) -> [(name: String, value: String)] {
        switch self {
        case .bearer(let token):
            return [("Authorization", "Bearer " + token)]
        case .hmacSHA256(let secret):
            let timestamp = String(time)
            return [("Missive-Timestamp", timestamp), ("Missive-Signature", "v1=" + Self.signature(of: body, at: timestamp, secret: secret))]
        }
    }

    /// The hexadecimal HMAC-SHA256, under `secret`, of `timestamp`, a `.` and `body`: what `Missive-Signature`
    /// carries after `v1=`.
    public static func signature(of body: [UInt8], at timestamp: String, secret: [UInt8]) -> String {
        var authenticator = HMAC<SHA256>(key: SymmetricKey(data: secret))
        authenticator.update(data: Array(timestamp.utf8) + [UInt8(ascii: ".")])
        authenticator.update(data: body)
        return authenticator.finalize().map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
    }

    /// The credential a file holds, as `missive serve --push-credential-file` reads it: one line, `bearer:TOKEN` or
    /// `hmac-sha256:SECRET` (the secret's UTF-8 bytes, at least 32). The file must be readable by its owner only.
    ///
    /// - Throws: ``PushCredentialError`` naming the file and what is wrong with it.
    public static func reading(file path: String) throws(PushCredentialError) -> PushCredential {
        var status = stat()
        guard stat(path, &status) == 0 else { throw PushCredentialError(path, "cannot be read: \(String(cString: strerror(errno)))") }
        guard status.st_mode & 0o077 == 0 else {
            throw PushCredentialError(path, "can be read by others than its owner (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 it")
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw PushCredentialError(path, "cannot be read as UTF-8 text")
        }
        let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if line.hasPrefix("bearer:") {
            let token = String(line.dropFirst("bearer:".count))
            guard token.utf8.count >= 16, token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw PushCredentialError(path, "a bearer token has at least 16 printable ASCII characters, no spaces")
            }
            return .bearer(token)
        }
        if line.hasPrefix("hmac-sha256:") {
            let secret = Array(line.dropFirst("hmac-sha256:".count).utf8)
            guard secret.count >= 32 else { throw PushCredentialError(path, "an HMAC secret has at least 32 bytes") }
            return .hmacSHA256(secret: secret)
        }
        throw PushCredentialError(path, "holds neither 'bearer:TOKEN' nor 'hmac-sha256:SECRET'")
    }
}

/// A push credential file that cannot be used, naming the file and the reason.
public struct PushCredentialError: Error, CustomStringConvertible, Sendable {
    /// The file.
    public let path: String
    /// What is wrong with it.
    public let reason: String

    init(_ path: String, _ reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}
