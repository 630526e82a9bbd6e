import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The address a request comes from, for the limits per client address and the security log: the connection's
/// peer, or, when that peer is a proxy the operator trusts (``ServerConfiguration/trustedProxies``), the last address
/// its `X-Forwarded-For` names (the one that proxy saw). `unknown` when neither says.
enum ClientAddress {
    static func of(_ request: Request, channel: any Channel, trustedProxies: Set<String>) -> String {
        let peer = channel.remoteAddress?.ipAddress
        if let peer, trustedProxies.contains(peer), let forwarded = request.headers[Self.forwardedFor] {
            let last = forwarded.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if !last.isEmpty, last.utf8.count <= 64, last.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) { return key(last) }
        }
        return peer.map(key) ?? "unknown"
    }

    /// The key the limits count an address under: an IPv4 address as it is (one written as IPv4-mapped IPv6 too), an
    /// IPv6 address by its /64 network, which one subscriber usually has whole, so that rotating addresses within it
    /// gains nothing.
    static func key(_ address: String) -> String {
        if address.hasPrefix("::ffff:"), address.contains(".") { return String(address.dropFirst(7)) }
        guard address.contains(":") else { return address }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        let prefix = withUnsafeBytes(of: &bytes) { raw in
            stride(from: 0, to: 8, by: 2).map { String(UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1]), radix: 16) }
        }
        return prefix.joined(separator: ":") + "::/64"
    }

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
}

/// The security events an operator may alert on, each one line at `notice`, with the member or the client address
/// and never a token, a cookie or a message's content. Every line starts `security:` and names the event
/// (`failed-auth`, `address-limited`, `rate-limited`, `refused-name`, `not-a-member`, `cross-conversation`,
/// `too-many-connections`, `slow-reader`, `header-timeout`, `quota-exceeded`), then `key=value` fields.
///
/// The refusals that follow a limit (`address-limited`, `rate-limited`, `too-many-connections`) come as fast as a
/// client sends; each is logged once per member or address in ``quietPeriod``, and the next line after it says how
/// many were not (`suppressed=N`), so that a flood cannot fill the log.
enum SecurityLog {
    static func event(_ logger: Logger, _ name: String, _ fields: KeyValuePairs<String, String>) {
        var text = fields.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: " ")
        if throttled.contains(name) {
            guard let suppressed = admit(name + " " + (fields.first?.value ?? ""), at: .now) else { return }
            if suppressed > 0 { text += " suppressed=\(suppressed)" }
        }
        logger.notice("security: \(name) \(text)")
    }

    /// How long a throttled event is logged once for one member or address.
    static let quietPeriod: Duration = .seconds(10)

    private static let throttled: Set<String> = ["address-limited", "rate-limited", "too-many-connections"]
    private static let recent = Mutex<[String: (at: ContinuousClock.Instant, suppressed: Int)]>([:])

    /// The count of lines not logged for `key` since its last one, when a line may be logged now; `nil` when not.
    private static func admit(_ key: String, at now: ContinuousClock.Instant) -> Int? {
        recent.withLock { recent in
            if let last = recent[key], now - last.at < quietPeriod {
                recent[key]?.suppressed += 1
                return nil
            }
            if recent.count >= 10_000 { recent = recent.filter { now - $0.value.at < quietPeriod } }
            let suppressed = recent[key]?.suppressed ?? 0
            recent[key] = (now, 0)
            return suppressed
        }
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
