import Foundation

/// A JSON writer that appends to a byte array and writes what `JSONEncoder` with
/// `[.sortedKeys, .withoutEscapingSlashes]` writes for the same values: strings escaped as it escapes them
/// (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`, everything else as is),
/// integers in decimal, floating-point numbers as their shortest `description` without a trailing `.0`,
/// dictionary keys in the order of their UTF-8 bytes. Object members are written in the order the caller gives: generated
/// code gives them sorted by name.
public struct MissiveJSONWriter: Sendable {
    /// The JSON written so far.
    public var bytes: [UInt8] { storage }
    @usableFromInline var storage: [UInt8]
    /// Whether the next member or element needs a `,` before it.
    @usableFromInline var needsComma = false

    /// An empty writer with room for `capacity` storage.
    public init(capacity: Int = 128) {
        storage = []
        storage.reserveCapacity(capacity)
    }

    /// Appends `{`.
    @inlinable public mutating func beginObject() {
        storage.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Appends `}`.
    @inlinable public mutating func endObject() {
        storage.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Appends `[`.
    @inlinable public mutating func beginArray() {
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

    /// Appends a string, escaped.
    public mutating func string(_ value: String) {
        separate()
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

    /// Appends bytes that are already one JSON value.
    @inlinable public mutating func raw(_ value: some Sequence<UInt8>) {
        separate()
        storage.append(contentsOf: value)
        needsComma = true
    }
}
