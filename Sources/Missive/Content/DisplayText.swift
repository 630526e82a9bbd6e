import CMissivePlugin

/// The rules for text shown to people, the digest and the push content, as missive_plugin.h states them:
/// one line of valid UTF-8, not empty, at most 256 code points, without C0 or C1 controls, DEL, U+2028 or
/// U+2029.
package enum DisplayText {
    /// The most code points a digest or push text may have.
    package static let maxCodePoints = Int(MISSIVE_TEXT_MAX_CODE_POINTS)

    /// Whether a code point may not appear in one-line text.
    package static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
    }

    /// Why `bytes` break the rules, in words that start with `what` (`digest`, `push content`), or `nil`.
    package static func problem(_ bytes: [UInt8], what: String) -> String? {
        guard let text = bytes.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) else {
            return "\(what) is not valid UTF-8"
        }
        if text.isEmpty { return "\(what) is empty" }
        if let scalar = text.unicodeScalars.first(where: isForbidden) {
            return "\(what) \(text.debugDescription) is not one line: it has U+\(hex(scalar.value)), a line break or control character"
        }
        let count = text.unicodeScalars.count
        if count > maxCodePoints { return "\(what) has \(count) code points; at most \(maxCodePoints) are allowed" }
        return nil
    }

    /// The text on one line, for reasons and messages: invalid UTF-8 becomes U+FFFD, and the text is
    /// cleaned by ``TextHygiene/line(_:)``; nothing is cut.
    package static func oneLine(_ bytes: some Collection<UInt8>) -> String {
        TextHygiene.line(String(decoding: bytes, as: UTF8.self))
    }

    /// The text repaired to follow the rules, except that it may be empty: invalid UTF-8 becomes U+FFFD, the
    /// text is cleaned onto one line and cut to the limit on a character boundary
    /// (``TextHygiene/digest(_:)``).
    package static func repair(_ bytes: some Collection<UInt8>) -> String {
        TextHygiene.digest(String(decoding: bytes, as: UTF8.self))
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
