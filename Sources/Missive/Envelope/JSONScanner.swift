#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON syntax error at a byte offset.
package struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    /// The byte offset where the problem was found.
    package var offset: Int
    /// What is wrong.
    package var message: String

    package var description: String { "\(message) at byte \(offset)" }
}

/// A validating JSON (RFC 8259) scanner that reports where values are instead of building them.
///
/// The envelope parser uses it to find the exact bytes of `content`, which Missive passes to decoders and
/// keeps, unchanged, in an ``UnknownMessage``.
package struct JSONScanner: ~Copyable {
    /// How deeply arrays and objects may nest before the scanner gives up.
    package static let maxDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// Whether strings must hold well-formed UTF-8 (see ``init(_:validatingUTF8:)``).
    private let validatesUTF8: Bool
    /// What the last string scanned held: ``StringShape``.
    private var lastShape = StringShape()

    /// What a string's contents hold, which tells whether its bytes are its value.
    package struct StringShape: Sendable {
        /// Whether it holds a backslash escape.
        package var escaped = false
        /// Whether it holds a byte of 0x80 or more.
        package var nonASCII = false
        /// Whether the bytes between the quotes are the value, all ASCII: then comparing them with an ASCII
        /// name is comparing the value.
        package var isPlainASCII: Bool { !escaped && !nonASCII }
    }

    /// Scans `bytes`, which must stay valid while the scanner is used.
    ///
    /// With `validatingUTF8`, a string holding a byte sequence that is not well-formed UTF-8 (an overlong
    /// form, a surrogate, a value above U+10FFFF, a stray or missing continuation byte) is a syntax error.
    /// Only strings can hold bytes of 0x80 or more in valid JSON, so a document that scans this way is
    /// valid UTF-8 throughout, without a separate pass.
    package init(_ bytes: UnsafeBufferPointer<UInt8>, validatingUTF8: Bool = false) {
        self.bytes = bytes
        self.validatesUTF8 = validatingUTF8
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
        let reader = JSONValueReader(bytes)
        try scanMemberRanges { (key, _, value) throws(JSONSyntaxError) in
            try member(reader.decodeString(key), (key.lowerBound - 1)..<(key.upperBound + 1), value)
        }
    }

    /// Reads a whole document that must be one object, calling `member` with the byte range of each key's
    /// contents (without the quotes), what the key holds, and the byte range of its value. No key becomes
    /// a `String`: callers match keys as bytes, and decode only a key that is not plain ASCII.
    package mutating func scanMemberRanges(
        _ member: (_ key: Range<Int>, _ keyShape: StringShape, _ value: Range<Int>) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else { throw fail("expected a JSON object") }
        index += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                let keyRange = try scanString()
                let keyShape = lastShape
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                let value = try scanValue(depth: 1)
                try member(keyRange, keyShape, value)
                skipWhitespace()
                guard peek() != nil else { throw fail("unexpected end of input") }
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                break
            }
        }
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON object") }
    }

    /// Validates that the whole buffer is exactly one JSON value.
    package mutating func validateDocument() throws(JSONSyntaxError) {
        skipWhitespace()
        _ = try scanValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
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

    // MARK: Values

    private mutating func scanValue(depth: Int) throws(JSONSyntaxError) -> Range<Int> {
        let start = index
        guard let byte = peek() else { throw fail("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "{"):
            try scanContainer(close: UInt8(ascii: "}"), depth: depth, keyed: true)
        case UInt8(ascii: "["):
            try scanContainer(close: UInt8(ascii: "]"), depth: depth, keyed: false)
        case UInt8(ascii: "t"):
            try scanLiteral("true")
        case UInt8(ascii: "f"):
            try scanLiteral("false")
        case UInt8(ascii: "n"):
            try scanLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try scanNumber()
        default:
            throw fail("unexpected character")
        }
        return start..<index
    }

    private mutating func scanContainer(close: UInt8, depth: Int, keyed: Bool) throws(JSONSyntaxError) {
        guard depth < Self.maxDepth else { throw fail("JSON nested more than \(Self.maxDepth) levels deep") }
        index += 1
        skipWhitespace()
        if peek() == close {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            if keyed {
                _ = try scanString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
            }
            _ = try scanValue(depth: depth + 1)
            skipWhitespace()
            guard let next = peek() else { throw fail("unexpected end of input") }
            index += 1
            if next == UInt8(ascii: ",") { continue }
            if next == close { return }
            index -= 1
            throw fail("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    /// Scans a string and returns the range of its contents, without the quotes.
    private mutating func scanString() throws(JSONSyntaxError) -> Range<Int> {
        guard peek() == UInt8(ascii: "\"") else { throw fail("expected a string") }
        index += 1
        let start = index
        var shape = StringShape()
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                lastShape = shape
                return start..<(index - 1)
            case UInt8(ascii: "\\"):
                shape.escaped = true
                index += 1
                guard let escaped = peek() else { throw fail("unterminated string") }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                    UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    index += 1
                    for _ in 0..<4 {
                        guard let hex = peek(), Self.hexValue(hex) != nil else { throw fail("invalid \\u escape") }
                        index += 1
                    }
                default:
                    throw fail("invalid escape")
                }
            case 0..<0x20:
                throw fail("control character in string")
            case 0x80...:
                shape.nonASCII = true
                if validatesUTF8 {
                    try scanUTF8Sequence()
                } else {
                    index += 1
                }
            default:
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    /// Steps over one well-formed UTF-8 sequence of two to four bytes starting at `index`: no overlong
    /// forms, surrogates or values above U+10FFFF (the table of Unicode 15, section 3.9, D92).
    private mutating func scanUTF8Sequence() throws(JSONSyntaxError) {
        let lead = bytes[index]
        // The valid range of the second byte depends on the lead; the others are always 0x80...0xBF.
        let length: Int, low: UInt8, high: UInt8
        switch lead {
        case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
        case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, low, high) = (3, 0x80, 0xBF)
        case 0xED: (length, low, high) = (3, 0x80, 0x9F)
        case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
        case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
        case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
        default: throw fail("invalid UTF-8 in string")
        }
        guard index + length <= bytes.count else { throw fail("invalid UTF-8 in string") }
        let second = bytes[index + 1]
        guard second >= low, second <= high else { throw fail("invalid UTF-8 in string") }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 {
            throw fail("invalid UTF-8 in string")
        }
        index += length
    }

    private mutating func scanLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("invalid literal") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw fail("invalid literal")
        }
        index += count
    }

    private mutating func scanNumber() throws(JSONSyntaxError) {
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), Self.isDigit(first) else { throw fail("invalid number") }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let digit = peek(), Self.isDigit(digit) else { throw fail("invalid number") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), Self.isDigit(digit) else { throw fail("invalid number") }
            skipDigits()
        }
    }

    // MARK: Helpers

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func expect(_ byte: UInt8) throws(JSONSyntaxError) {
        guard peek() == byte else { throw fail("expected '\(Character(Unicode.Scalar(byte)))'") }
        index += 1
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func skipDigits() {
        while let byte = peek(), Self.isDigit(byte) { index += 1 }
    }

    private func fail(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: index, message: message)
    }

    fileprivate static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    fileprivate static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Reads values out of a buffer at the ranges a ``JSONScanner`` reported.
package struct JSONValueReader {
    private let bytes: UnsafeBufferPointer<UInt8>

    /// Reads from `bytes`, which must stay valid while the reader is used.
    package init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }


    /// Decodes the contents of a string that ``scanString()`` validated (the range excludes the quotes).
    package func decodeString(_ range: Range<Int>) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        guard slice.contains(UInt8(ascii: "\\")) else { return String(decoding: slice, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        var i = range.lowerBound
        func flush() {
            scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        while i < range.upperBound {
            let byte = bytes[i]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                i += 1
                continue
            }
            let escaped = bytes[i + 1]
            i += 2
            switch escaped {
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var code = hex4(at: i)
                i += 4
                if (0xD800..<0xDC00).contains(code), i + 6 <= range.upperBound, bytes[i] == UInt8(ascii: "\\"),
                    bytes[i + 1] == UInt8(ascii: "u")
                {
                    let low = hex4(at: i + 2)
                    if (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                flush()
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default: utf8.append(escaped)
            }
        }
        flush()
        return String(scalars)
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
        var value: Int64 = 0
        var i = range.lowerBound
        let negative = i < range.upperBound && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < range.upperBound else { return nil }
        while i < range.upperBound {
            let byte = bytes[i]
            guard JSONScanner.isDigit(byte) else { return nil }
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = next
            i += 1
        }
        return value
    }

    /// The first byte of a value range, which tells its JSON kind.
    package func firstByte(_ range: Range<Int>) -> UInt8? {
        range.isEmpty ? nil : bytes[range.lowerBound]
    }

    private func hex4(at position: Int) -> UInt32 {
        var code: UInt32 = 0
        for offset in 0..<4 { code = code << 4 | UInt32(JSONScanner.hexValue(bytes[position + offset]) ?? 0) }
        return code
    }

}
