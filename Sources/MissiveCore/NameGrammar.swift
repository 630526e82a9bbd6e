/// The grammar of objectNames and business identifiers.
///
/// - An **objectName** has 1 to 32 characters. It starts with an ASCII letter, and the rest are ASCII
///   letters, digits, `.`, `_`, `:` or `-`. Names that start with ``reservedPrefix`` belong to Missive's
///   built-in types; no plugin may use them.
/// - A **business identifier** has 1 to 64 characters. It starts with an ASCII letter, and the rest are
///   ASCII letters, digits, `.`, `_` or `-` (no `:`). It may not start with `MS_` or `MS.`, which are
///   reserved the same way.
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
            return "\(kind) '\(name)' has \(bytes.count) characters; at most \(maxLength) are allowed"
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
