import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The address a request comes from, for the limits per client address and the security log: the connection's
/// peer, or, when that peer is a proxy the operator trusts (``ServerConfiguration/trustedProxies``), the last address
/// its `X-Forwarded-For` names (the one that proxy saw). `unknown` when neither says.
enum ClientAddress {
    static func of(_ request: Request, channel: any Channel, trustedProxies: Set<String>) -> String {
        let peer = channel.remoteAddress?.ipAddress
        if let peer, trustedProxies.contains(peer), let forwarded = request.headers[Self.forwardedFor] {
            let last = forwarded.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if !last.isEmpty, last.utf8.count <= 64, last.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) { return last }
        }
        return peer ?? "unknown"
    }

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
}

/// The security events an operator may alert on, each one line at `notice`, with the member or the client address
/// and never a token, a cookie or a message's content. Every line starts `security:` and names the event
/// (`failed-auth`, `address-limited`, `rate-limited`, `refused-name`, `not-a-member`, `cross-conversation`,
/// `too-many-connections`, `slow-reader`, `header-timeout`, `quota-exceeded`), then `key=value` fields.
enum SecurityLog {
    static func event(_ logger: Logger, _ name: String, _ fields: KeyValuePairs<String, String>) {
        let text = fields.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: " ")
        logger.notice("security: \(name) \(text)")
    }

    /// A value as one token of the line: kept when it is plain, else quoted with its controls escaped, at most 200
    /// characters.
    private static func quoted(_ value: String) -> String {
        let short = value.count > 200 ? String(value.prefix(200)) + "…" : value
        if !short.isEmpty, short.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" }) { return short }
        var escaped = "\""
        for scalar in short.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            default:
                if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                    escaped += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped + "\""
    }
}
