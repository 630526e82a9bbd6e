import Foundation

/// Missive's one JSON writer: it appends to a byte array, and with ``Escaping-swift.enum/encoderCompatible``
/// writes what `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` writes for the same values: strings
/// escaped as it escapes them (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
/// `\u00xx`, everything else as is), integers in decimal, floating-point numbers as their shortest
/// `description` without a trailing `.0`, dictionary keys in the order of their UTF-8 bytes. Object members are
/// written in the order the caller gives: generated code gives them sorted by name.
///
/// With ``Escaping-swift.enum/displaySafe`` (the CLI's output, docs/CLI-JSON.md) it also writes every code point a
/// terminal acts on as a `\u` escape, in strings and in ``raw(_:)`` JSON alike: the same JSON value.
public struct MissiveJSONWriter: Sendable {
    /// Which code points strings are written with a `\u` escape.
    public enum Escaping: Sendable {
        /// What `JSONEncoder` escapes: `"`, `\` and the C0 controls, nothing else.
        case encoderCompatible
        /// Also DEL, the C1 controls, U+2028, U+2029 and the bidi controls (U+202A–U+202E, U+2066–U+2069),
        /// which JSON allows raw in strings but which a terminal acts on; ``raw(_:)`` JSON is escaped the same way.
        case displaySafe
    }

    /// The JSON written so far.
    public var bytes: [UInt8] { storage }
    @usableFromInline var storage: [UInt8]
    /// Whether the next member or element needs a `,` before it.
    @usableFromInline var needsComma = false
    /// Which code points strings escape.
    public let escaping: Escaping

    /// An empty writer with room for `capacity` storage, escaping strings as `escaping` says.
    public init(capacity: Int = 128, escaping: Escaping = .encoderCompatible) {
        storage = []
        storage.reserveCapacity(capacity)
        self.escaping = escaping
    }

    /// Appends `{` (after a `,` when it is not the first element of its array).
    @inlinable public mutating func beginObject() {
        separate()
        storage.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Appends `}`.
    @inlinable public mutating func endObject() {
        storage.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Appends `[` (after a `,` when it is not the first element of its array).
    @inlinable public mutating func beginArray() {
        separate()
        storage.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Appends `]`.
    @inlinable public mutating func endArray() {
        storage.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Appends the `,` an element needs before it, unless it is the first of its array.
    @inlinable public mutating func separate() {
        if needsComma { storage.append(UInt8(ascii: ",")) }
        needsComma = false
    }

    /// Appends a member's key and its `:`. `name` must need no escaping (generated code passes property
    /// names); use ``key(_:)-(String)`` for any other.
    @inlinable public mutating func key(_ name: StaticString) {
        separate()
        storage.append(UInt8(ascii: "\""))
        storage.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        storage.append(UInt8(ascii: "\""))
        storage.append(UInt8(ascii: ":"))
    }

    /// Appends a member's key, escaped, and its `:`.
    @inlinable public mutating func key(_ name: String) {
        separate()
        string(name)
        storage.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Appends a string, escaped as ``escaping`` says.
    public mutating func string(_ value: String) {
        separate()
        if escaping == .displaySafe {
            Self.appendDisplaySafe(value, to: &storage)
            needsComma = true
            return
        }
        var value = value
        value.withUTF8 { utf8 in
            storage.append(UInt8(ascii: "\""))
            var runStart = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                storage.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                storage.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): storage.append(byte)
                case 0x08: storage.append(UInt8(ascii: "b"))
                case 0x0C: storage.append(UInt8(ascii: "f"))
                case 0x0A: storage.append(UInt8(ascii: "n"))
                case 0x0D: storage.append(UInt8(ascii: "r"))
                case 0x09: storage.append(UInt8(ascii: "t"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    storage.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            storage.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
            storage.append(UInt8(ascii: "\""))
        }
        needsComma = true
    }

    /// Appends an integer in decimal.
    @inlinable public mutating func integer<T: FixedWidthInteger>(_ value: T) {
        separate()
        if value == 0 {
            storage.append(UInt8(ascii: "0"))
        } else {
            var magnitude = value.magnitude
            var digits: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)  // 40 bytes, enough for 39 digits
            let written = withUnsafeMutableBytes(of: &digits) { buffer -> Int in
                var position = buffer.count
                while magnitude != 0 {
                    let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 10)
                    position -= 1
                    buffer[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: remainder)
                    magnitude = quotient
                }
                if value < 0 {
                    position -= 1
                    buffer[position] = UInt8(ascii: "-")
                }
                storage.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[position...]))
                return buffer.count - position
            }
            _ = written
        }
        needsComma = true
    }

    /// Appends a finite `Double` as `JSONEncoder` does: its `description`, without a trailing `.0`.
    public mutating func double(_ value: Double) throws(MissiveJSONError) {
        guard value.isFinite else { throw MissiveJSONError(offset: storage.count, message: "\(value) cannot be written in JSON") }
        if value == value.rounded(), abs(value) < 1e15 {
            if value == 0 {
                separate()
                storage.append(contentsOf: value.sign == .minus ? [UInt8(ascii: "-"), UInt8(ascii: "0")] : [UInt8(ascii: "0")])
                needsComma = true
            } else {
                integer(Int64(value))
            }
            return
        }
        number(value.description)
    }

    /// Appends a finite `Float` as `JSONEncoder` does: its `description`, without a trailing `.0`.
    public mutating func float(_ value: Float) throws(MissiveJSONError) {
        guard value.isFinite else { throw MissiveJSONError(offset: storage.count, message: "\(value) cannot be written in JSON") }
        number(value.description)
    }

    private mutating func number(_ description: String) {
        separate()
        var text = description
        if text.hasSuffix(".0") { text.removeLast(2) }
        storage.append(contentsOf: text.utf8)
        needsComma = true
    }

    /// Appends `true` or `false`.
    @inlinable public mutating func bool(_ value: Bool) {
        separate()
        if value {
            storage.append(contentsOf: [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")])
        } else {
            storage.append(contentsOf: [UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "e")])
        }
        needsComma = true
    }

    /// Appends `null`.
    @inlinable public mutating func null() {
        separate()
        storage.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
        needsComma = true
    }

    /// Appends bytes that are already one JSON value, unchanged; with ``Escaping-swift.enum/displaySafe``, code
    /// points a terminal acts on are written as `\u` escapes (`displaySafe(json:)`).
    @inlinable public mutating func raw(_ value: some Sequence<UInt8>) {
        separate()
        if escaping == .displaySafe {
            storage.append(contentsOf: Self.displaySafe(json: Array(value)))
        } else {
            storage.append(contentsOf: value)
        }
        needsComma = true
    }

    // MARK: Display-safe escaping

    /// Whether ``Escaping-swift.enum/displaySafe`` writes `scalar` as a `\u` escape: C0 and C1 controls, DEL,
    /// U+2028, U+2029 and the bidi controls (TextHygiene's unsafe code points).
    package static func isDisplayUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
            || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
    }

    /// Appends `text` as a JSON string literal with every display-unsafe code point escaped.
    static func appendDisplaySafe(_ text: String, to storage: inout [UInt8]) {
        storage.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case "\\": storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case "\u{8}": storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case "\u{C}": storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case "\n": storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case "\r": storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case "\t": storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case _ where isDisplayUnsafe(scalar): appendUnicodeEscape(scalar, to: &storage)
            default: storage.append(contentsOf: UTF8.encode(scalar)!)
            }
        }
        storage.append(UInt8(ascii: "\""))
    }

    private static func appendUnicodeEscape(_ scalar: Unicode.Scalar, to storage: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) { storage.append(hex[Int(scalar.value >> UInt32(shift)) & 0xF]) }
    }

    /// JSON text with every display-unsafe code point other than JSON's whitespace (tab, LF and CR, which
    /// valid JSON holds raw only between tokens) written as a `\u` escape: the same JSON value, safe to print.
    /// Valid JSON holds the others only inside strings. Bytes that are not valid UTF-8 are left as they are.
    @usableFromInline package static func displaySafe(json bytes: [UInt8]) -> [UInt8] {
        func mustEscape(_ scalar: Unicode.Scalar) -> Bool { isDisplayUnsafe(scalar) && scalar != "\t" && scalar != "\n" && scalar != "\r" }
        // Every such code point is a byte below 0x20, DEL, or starts with 0xC2 (C1) or 0xE2 (U+2028 and on).
        guard bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }),
            let text = bytes.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }),
            text.unicodeScalars.contains(where: mustEscape)
        else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        for scalar in text.unicodeScalars {
            if mustEscape(scalar) {
                appendUnicodeEscape(scalar, to: &out)
            } else {
                out.append(contentsOf: UTF8.encode(scalar)!)
            }
        }
        return out
    }
}
