#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The range front end of the JSON layer: it validates a document with ``MissiveJSONReader`` and reports where
/// values are instead of building them.
///
/// The envelope parser uses it to find the exact bytes of `content`, which Missive passes to decoders and
/// keeps, unchanged, in an `UnknownMessage`. Without `validatingUTF8` it checks strings for syntax only; in
/// both modes it accepts a `\u` escape of a lone surrogate (``JSONLoneSurrogates``).
package struct JSONScanner: ~Copyable {
    /// How deeply arrays and objects may nest before the scanner gives up: the reader's one limit.
    package static var maxDepth: Int { MissiveJSONReader.maxDepth }

    @usableFromInline var reader: MissiveJSONReader
    @usableFromInline let base: UnsafePointer<UInt8>?

    /// What a string's contents hold, which tells whether its bytes are its value.
    package struct StringShape: Sendable {
        /// Whether the bytes between the quotes are the value, all ASCII: then comparing them with an ASCII
        /// name is comparing the value.
        package var isPlainASCII: Bool
        /// Whether the contents hold an escape; when not, their bytes are the value's UTF-8.
        package var hasEscapes: Bool

        @inlinable package init(isPlainASCII: Bool, hasEscapes: Bool) {
            self.isPlainASCII = isPlainASCII
            self.hasEscapes = hasEscapes
        }

        /// What is known of a value that is not a string: nothing.
        @usableFromInline static let unknown = StringShape(isPlainASCII: false, hasEscapes: true)
    }

    /// Scans `bytes`, which must stay valid while the scanner is used.
    ///
    /// With `validatingUTF8`, a string holding a byte sequence that is not well-formed UTF-8 (an overlong
    /// form, a surrogate, a value above U+10FFFF, a stray or missing continuation byte) is a syntax error.
    /// Only strings can hold bytes of 0x80 or more in valid JSON, so a document that scans this way is
    /// valid UTF-8 throughout, without a separate pass.
    package init(_ bytes: UnsafeBufferPointer<UInt8>, validatingUTF8: Bool = false) {
        reader = MissiveJSONReader(bytes, checkingUTF8: validatingUTF8, refusingLoneSurrogates: false)
        base = bytes.baseAddress
    }

    /// Reads a whole document that must be one object, calling `member` with each key and the byte range
    /// of its value.
    package mutating func scanObject(
        _ member: (String, Range<Int>) throws(MissiveJSONError) -> Void
    ) throws(MissiveJSONError) {
        try scanMembers { (key, _, value) throws(MissiveJSONError) in try member(key, value) }
    }

    /// Reads a whole document that must be one object, calling `member` with each key, the byte range of
    /// the key as written (quotes included) and the byte range of its value.
    package mutating func scanMembers(
        _ member: (String, Range<Int>, Range<Int>) throws(MissiveJSONError) -> Void
    ) throws(MissiveJSONError) {
        let strings = JSONValueReader(UnsafeBufferPointer(start: base, count: reader.count))
        try scanMemberRanges { (key, _, value, _) throws(MissiveJSONError) in
            try member(strings.decodeString(key), (key.lowerBound - 1)..<(key.upperBound + 1), value)
        }
    }

    /// Reads a whole document that must be one object, calling `member` with the byte range of each key's
    /// contents (without the quotes), what the key holds, the byte range of its value, and what the value
    /// holds when it is a string (``StringShape/unknown`` for any other value). No key becomes a `String`:
    /// callers match keys as bytes, and decode only a key that is not plain ASCII; a string value without
    /// escapes is its bytes, with no second look for a backslash.
    package mutating func scanMemberRanges(
        _ member: (_ key: Range<Int>, _ keyShape: StringShape, _ value: Range<Int>, _ valueShape: StringShape) throws(MissiveJSONError) -> Void
    ) throws(MissiveJSONError) {
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "{") else { throw reader.fail("expected a JSON object") }
        // The members are walked here rather than with `nextKey(_:)`: the same grammar and messages, written
        // out once for the envelope, which runs this loop for every member of every message.
        var cursor = try reader.beginObject()
        while true {
            var byte = try reader.nextByte()
            if cursor.isFirst {
                cursor.isFirst = false
            } else if byte == UInt8(ascii: ",") {
                reader.index += 1
                byte = try reader.nextByte()
                guard byte == UInt8(ascii: "\"") else { throw reader.fail("expected a key") }
            } else if byte != UInt8(ascii: "}") {
                throw reader.fail("expected ',' or '}'")
            }
            if byte == UInt8(ascii: "}") {
                reader.index += 1
                reader.depth -= 1
                break
            }
            guard byte == UInt8(ascii: "\"") else { throw reader.fail("expected a key") }
            let key = try reader.scanString()
            guard try reader.nextByte() == UInt8(ascii: ":") else { throw reader.fail("expected ':'") }
            reader.index += 1
            let from = key.raw.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) - base.unsafelyUnwrapped } ?? 0
            // The value: a string or a number, as most members hold, without the container state of
            // `skipValue()`.
            reader.skipWhitespace()
            let start = reader.index
            var valueShape = StringShape.unknown
            switch reader.peek() ?? 0 {
            case UInt8(ascii: "\""):
                let string = try reader.scanString()
                valueShape = StringShape(isPlainASCII: string.isPlainASCII, hasEscapes: string.hasEscapes)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try reader.skipNumber()
            default: try reader.skipValue()
            }
            let keyShape = StringShape(isPlainASCII: key.isPlainASCII, hasEscapes: key.hasEscapes)
            try member(from..<(from + key.raw.count), keyShape, start..<reader.index, valueShape)
        }
        reader.skipWhitespace()
        guard reader.index == reader.count else { throw reader.fail("unexpected data after the JSON object") }
    }

    /// Validates that the whole buffer is exactly one JSON value.
    package mutating func validateDocument() throws(MissiveJSONError) {
        try reader.skipValue()
        try reader.finish()
    }

    /// Why `bytes` is not exactly one JSON value, or `nil` when it is.
    package static func problem(in bytes: [UInt8]) -> MissiveJSONError? {
        bytes.withUnsafeBufferPointer { buffer -> MissiveJSONError? in
            var scanner = JSONScanner(buffer)
            do throws(MissiveJSONError) {
                try scanner.validateDocument()
                return nil
            } catch {
                return error
            }
        }
    }
}

/// Reads values out of a buffer at the ranges a ``JSONScanner`` reported, with the JSON layer's one string
/// decoder: the envelope's fields repair a lone surrogate to U+FFFD (``JSONLoneSurrogates``).
///
/// Its small readers are inlinable: the envelope calls them for every member of every message.
package struct JSONValueReader {
    @usableFromInline let bytes: UnsafeBufferPointer<UInt8>

    /// Reads from `bytes`, which must stay valid while the reader is used.
    @inlinable package init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Decodes the contents of a string that a ``JSONScanner`` validated (the range excludes the quotes).
    @inlinable package func decodeString(_ range: Range<Int>) -> String {
        decodeString(range, hasEscapes: UnsafeBufferPointer(rebasing: bytes[range]).contains(UInt8(ascii: "\\")))
    }

    /// Decodes the contents of a string that a ``JSONScanner`` validated, whose escapes it reported.
    @inlinable package func decodeString(_ range: Range<Int>, hasEscapes: Bool) -> String {
        let raw = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[range]))
        guard hasEscapes else { return String(decoding: raw, as: UTF8.self) }
        return (try? MissiveJSONStrings.decode(raw, hasEscapes: true, loneSurrogates: .replace)) ?? ""
    }

    /// Whether the contents of a scanned string (the range excludes the quotes), whose shape the scanner
    /// reported, equal `name` as Swift compares strings. Plain ASCII contents are compared as bytes; only
    /// contents with escapes or other bytes, and a name that is not ASCII, are decoded to compare.
    package func string(_ range: Range<Int>, shape: JSONScanner.StringShape, equals name: String) -> Bool {
        if shape.isPlainASCII {
            let utf8 = name.utf8
            if utf8.count == range.count && utf8.elementsEqual(UnsafeBufferPointer(rebasing: bytes[range])) { return true }
            // Different ASCII can still be equal strings when the name is not ASCII (canonical equivalence:
            // U+212A KELVIN SIGN is K), so only an ASCII name settles it here.
            if utf8.allSatisfy({ $0 < 0x80 }) { return false }
        }
        return decodeString(range) == name
    }

    /// Decodes a value range if it holds a string (quotes included), else returns `nil`.
    @inlinable @inline(__always) package func stringValue(_ range: Range<Int>) -> String? {
        guard firstByte(range) == UInt8(ascii: "\"") else { return nil }
        return decodeString((range.lowerBound + 1)..<(range.upperBound - 1))
    }

    /// Decodes a value range if it holds a string (quotes included), else returns `nil`; `shape` is what the
    /// scanner reported of it.
    @inlinable @inline(__always) package func stringValue(_ range: Range<Int>, shape: JSONScanner.StringShape) -> String? {
        guard firstByte(range) == UInt8(ascii: "\"") else { return nil }
        return decodeString((range.lowerBound + 1)..<(range.upperBound - 1), hasEscapes: shape.hasEscapes)
    }

    /// Reads a JSON number that must be an integer in the range of `Int64`.
    ///
    /// The range must be one the scanner validated as a number, so only the integer's form is checked here:
    /// digits after an optional `-`, no fraction, no exponent, no overflow.
    @inlinable package func decodeInt64(_ range: Range<Int>) -> Int64? {
        var index = range.lowerBound
        let negative = index < range.upperBound && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < range.upperBound else { return nil }
        if range.upperBound - index <= 18 {
            // Eighteen digits cannot overflow, so they need no checks (a timestamp in milliseconds has 13).
            var magnitude: Int64 = 0
            while index < range.upperBound {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                magnitude = magnitude &* 10 &+ Int64(digit)
                index += 1
            }
            return negative ? 0 &- magnitude : magnitude
        }
        var value: Int64 = 0
        while index < range.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative
                ? shifted.subtractingReportingOverflow(Int64(digit)) : shifted.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = next
            index += 1
        }
        return value
    }

    /// The first byte of a value range, which tells its JSON kind.
    @inlinable @inline(__always) package func firstByte(_ range: Range<Int>) -> UInt8? {
        range.isEmpty ? nil : bytes[range.lowerBound]
    }
}
