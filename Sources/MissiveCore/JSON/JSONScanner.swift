#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The JSON layer's error, under the name the envelope and the metadata reader use.
package typealias JSONSyntaxError = MissiveJSONError

/// The range front end of the JSON layer: it validates a document with ``MissiveJSONReader`` and reports where
/// values are instead of building them.
///
/// The envelope parser uses it to find the exact bytes of `content`, which Missive passes to decoders and
/// keeps, unchanged, in an `UnknownMessage`. Without `validatingUTF8` it checks strings for syntax only; in
/// both modes it accepts a `\u` escape of a lone surrogate (``JSONLoneSurrogates``).
package struct JSONScanner: ~Copyable {
    /// How deeply arrays and objects may nest before the scanner gives up: the reader's one limit.
    package static var maxDepth: Int { MissiveJSONReader.maxDepth }

    private var reader: MissiveJSONReader
    private let base: UnsafePointer<UInt8>?

    /// What a string's contents hold, which tells whether its bytes are its value.
    package struct StringShape: Sendable {
        /// Whether the bytes between the quotes are the value, all ASCII: then comparing them with an ASCII
        /// name is comparing the value.
        package var isPlainASCII: Bool
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
        _ member: (String, Range<Int>) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) {
        try scanMembers { (key, _, value) throws(JSONSyntaxError) in try member(key, value) }
    }

    /// Reads a whole document that must be one object, calling `member` with each key, the byte range of
    /// the key as written (quotes included) and the byte range of its value.
    package mutating func scanMembers(
        _ member: (String, Range<Int>, Range<Int>) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) {
        let strings = JSONValueReader(UnsafeBufferPointer(start: base, count: reader.count))
        try scanMemberRanges { (key, _, value) throws(JSONSyntaxError) in
            try member(strings.decodeString(key), (key.lowerBound - 1)..<(key.upperBound + 1), value)
        }
    }

    /// Reads a whole document that must be one object, calling `member` with the byte range of each key's
    /// contents (without the quotes), what the key holds, and the byte range of its value. No key becomes
    /// a `String`: callers match keys as bytes, and decode only a key that is not plain ASCII.
    package mutating func scanMemberRanges(
        _ member: (_ key: Range<Int>, _ keyShape: StringShape, _ value: Range<Int>) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) {
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "{") else { throw reader.fail("expected a JSON object") }
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor) {
            let from = key.raw.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) - base.unsafelyUnwrapped } ?? 0
            let value = try reader.skipValueRange()
            try member(from..<(from + key.raw.count), StringShape(isPlainASCII: key.isPlainASCII), value)
        }
        reader.skipWhitespace()
        guard reader.index == reader.count else { throw reader.fail("unexpected data after the JSON object") }
    }

    /// Validates that the whole buffer is exactly one JSON value.
    package mutating func validateDocument() throws(JSONSyntaxError) {
        try reader.skipValue()
        try reader.finish()
    }

    /// Why `bytes` is not exactly one JSON value, or `nil` when it is.
    package static func problem(in bytes: [UInt8]) -> JSONSyntaxError? {
        bytes.withUnsafeBufferPointer { buffer -> JSONSyntaxError? in
            var scanner = JSONScanner(buffer)
            do throws(JSONSyntaxError) {
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
package struct JSONValueReader {
    private let bytes: UnsafeBufferPointer<UInt8>

    /// Reads from `bytes`, which must stay valid while the reader is used.
    package init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Decodes the contents of a string that a ``JSONScanner`` validated (the range excludes the quotes).
    package func decodeString(_ range: Range<Int>) -> String {
        let raw = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[range]))
        let hasEscapes = raw.contains(UInt8(ascii: "\\"))
        return (try? MissiveJSONStrings.decode(raw, hasEscapes: hasEscapes, loneSurrogates: .replace)) ?? ""
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

    /// Whether the bytes at `range` are exactly the ASCII text `name`.
    package func bytes(_ range: Range<Int>, equal name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard range.count == count, let base = bytes.baseAddress else { return false }
        return memcmp(base + range.lowerBound, name.utf8Start, count) == 0
    }

    /// Decodes a value range if it holds a string (quotes included), else returns `nil`.
    package func stringValue(_ range: Range<Int>) -> String? {
        guard firstByte(range) == UInt8(ascii: "\"") else { return nil }
        return decodeString((range.lowerBound + 1)..<(range.upperBound - 1))
    }

    /// Reads a JSON number that must be an integer in the range of `Int64`.
    package func decodeInt64(_ range: Range<Int>) -> Int64? {
        guard !range.isEmpty else { return nil }
        var reader = MissiveJSONReader(UnsafeBufferPointer(rebasing: bytes[range]))
        guard let value = try? reader.readInteger(Int64.self), reader.index == range.count else { return nil }
        return value
    }

    /// The first byte of a value range, which tells its JSON kind.
    package func firstByte(_ range: Range<Int>) -> UInt8? {
        range.isEmpty ? nil : bytes[range.lowerBound]
    }
}
