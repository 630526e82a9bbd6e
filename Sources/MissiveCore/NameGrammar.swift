/// The grammar of objectNames and business identifiers.
///
/// - An **objectName** has 1 to 32 characters. It starts with an ASCII letter, and the rest are ASCII
///   letters, digits, `.`, `_`, `:` or `-`. Names that start with ``reservedPrefix`` belong to Missive's
///   built-in types; no plugin may use them.
/// - A **business identifier** has 1 to 64 characters. It starts with an ASCII letter, and the rest are
///   ASCII letters, digits, `.`, `_` or `-` (no `:`). It may not start with `MS_` or `MS.`, which are
///   reserved the same way.
/// - A **container key** (the member a ``MessageContainer`` dispatches on) has 1 to 64 characters, each
///   printable ASCII other than `"` and `\`.
/// - A **message id** (an envelope's `id` and `parentID`) has 1 to 128 characters, each printable ASCII other
///   than the space: the ids of other SDKs (UUIDs, numbers, `$event:server`, `user-123-abc`) all fit.
/// - The **value** a type registers under in a container follows the business identifier grammar when the
///   key holds strings (the reserved prefixes apply only to `MS:Custom`), and is the decimal spelling of an
///   `Int64` (`0`, `42`, `-7`; no `+`, no leading zeros) when it holds integers.
public enum NameGrammar {
    /// The prefix reserved for built-in objectNames.
    public static let reservedPrefix = "MS:"

    /// The longest objectName allowed.
    public static let maxObjectNameLength = 32

    /// The longest business identifier allowed.
    public static let maxBusinessIDLength = 64

    /// Why `name` is not a valid objectName, or `nil` when it is. Does not check the reserved prefix.
    public static func objectNameProblem(_ name: String) -> String? {
        problem(name, kind: "objectName", maxLength: maxObjectNameLength, allowsColon: true)
    }

    /// Why `id` is not a valid business identifier, or `nil` when it is. Does not check reserved prefixes.
    public static func businessIDProblem(_ id: String) -> String? {
        problem(id, kind: "businessID", maxLength: maxBusinessIDLength, allowsColon: false)
    }

    /// The longest message id allowed.
    public static let maxMessageIDLength = 128

    /// Why `id` is not a valid message id, or `nil` when it is.
    public static func messageIDProblem(_ id: String) -> String? {
        let bytes = id.utf8
        if bytes.isEmpty { return "message id is empty" }
        if bytes.count > maxMessageIDLength {
            return "message id has \(bytes.count) characters; at most \(maxMessageIDLength) are allowed"
        }
        if bytes.contains(where: { $0 < 0x21 || $0 > 0x7E }) {
            return "message id '\(id)' contains a character outside printable ASCII, or a space"
        }
        return nil
    }

    /// The longest container key allowed.
    public static let maxContainerKeyLength = 64

    /// Why `key` is not a valid container key, or `nil` when it is.
    public static func containerKeyProblem(_ key: String) -> String? {
        let bytes = key.utf8
        if bytes.isEmpty { return "container key is empty" }
        if bytes.count > maxContainerKeyLength {
            return "container key '\(key)' has \(bytes.count) characters; at most \(maxContainerKeyLength) are allowed"
        }
        if bytes.contains(where: { $0 < 0x21 || $0 > 0x7E || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "container key '\(key)' contains a character outside printable ASCII, or a quote or backslash"
        }
        return nil
    }

    /// Why `value` cannot select a type in a container whose key holds values of `kind`, or `nil`.
    public static func containerValueProblem(_ value: String, kind: MessageContainer.KeyKind) -> String? {
        switch kind {
        case .string:
            return businessIDProblem(value)
        case .integer:
            guard let number = Int64(value), String(number) == value else {
                return "value '\(value)' is not the decimal spelling of a 64-bit integer, as the container's integer key needs"
            }
            return nil
        }
    }

    /// Whether `name` uses the objectName prefix reserved for built-in types.
    public static func isReservedObjectName(_ name: String) -> Bool {
        name.hasPrefix(reservedPrefix)
    }

    /// Whether `id` uses a business-identifier prefix reserved for Missive.
    public static func isReservedBusinessID(_ id: String) -> Bool {
        id.hasPrefix("MS_") || id.hasPrefix("MS.")
    }

    private static func problem(_ name: String, kind: String, maxLength: Int, allowsColon: Bool) -> String? {
        let bytes = name.utf8
        guard let first = bytes.first else { return "\(kind) is empty" }
        if bytes.count > maxLength {
            return "\(kind) '\(name.prefix(maxLength))…' has \(bytes.count) characters; at most \(maxLength) are allowed"
        }
        guard isLetter(first) else { return "\(kind) '\(name)' must start with an ASCII letter" }
        for byte in bytes.dropFirst() where !(isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || (allowsColon && byte == UInt8(ascii: ":")))
        {
            let allowed = allowsColon ? "letters, digits and ._:-" : "letters, digits and ._-"
            return "\(kind) '\(name)' contains a character outside \(allowed)"
        }
        return nil
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
