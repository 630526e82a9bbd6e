// Replay harness: the JSON readers as they were before the JSON layer (verbatim copies, renamed), for
// JSONReplayTests to compare with the layer on the committed fuzz corpora and the test inputs.
// Removed once the comparison is recorded.
import Foundation
@testable import MissiveCore
#if canImport(Glibc)
import Glibc
#endif


/// A JSON syntax error at a byte offset.
struct LegacyJSONSyntaxError: Error, Sendable, CustomStringConvertible {
    /// The byte offset where the problem was found.
    var offset: Int
    /// What is wrong.
    var message: String

    var description: String { "\(message) at byte \(offset)" }
}

/// A validating JSON (RFC 8259) scanner that reports where values are instead of building them.
///
/// The envelope parser uses it to find the exact bytes of `content`, which Missive passes to decoders and
/// keeps, unchanged, in an ``UnknownMessage``.
struct LegacyJSONScanner: ~Copyable {
    /// How deeply arrays and objects may nest before the scanner gives up.
    static let maxDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// Whether strings must hold well-formed UTF-8 (see ``init(_:validatingUTF8:)``).
    private let validatesUTF8: Bool
    /// What the last string scanned held: ``StringShape``.
    private var lastShape = StringShape()

    /// What a string's contents hold, which tells whether its bytes are its value.
    struct StringShape: Sendable {
        /// Whether it holds a backslash escape.
        var escaped = false
        /// Whether it holds a byte of 0x80 or more.
        var nonASCII = false
        /// Whether the bytes between the quotes are the value, all ASCII: then comparing them with an ASCII
        /// name is comparing the value.
        var isPlainASCII: Bool { !escaped && !nonASCII }
    }

    /// Scans `bytes`, which must stay valid while the scanner is used.
    ///
    /// With `validatingUTF8`, a string holding a byte sequence that is not well-formed UTF-8 (an overlong
    /// form, a surrogate, a value above U+10FFFF, a stray or missing continuation byte) is a syntax error.
    /// Only strings can hold bytes of 0x80 or more in valid JSON, so a document that scans this way is
    /// valid UTF-8 throughout, without a separate pass.
    init(_ bytes: UnsafeBufferPointer<UInt8>, validatingUTF8: Bool = false) {
        self.bytes = bytes
        self.validatesUTF8 = validatingUTF8
    }

    /// Reads a whole document that must be one object, calling `member` with each key and the byte range
    /// of its value.
    mutating func scanObject(
        _ member: (String, Range<Int>) throws(LegacyJSONSyntaxError) -> Void
    ) throws(LegacyJSONSyntaxError) {
        try scanMembers { (key, _, value) throws(LegacyJSONSyntaxError) in try member(key, value) }
    }

    /// Reads a whole document that must be one object, calling `member` with each key, the byte range of
    /// the key as written (quotes included) and the byte range of its value.
    mutating func scanMembers(
        _ member: (String, Range<Int>, Range<Int>) throws(LegacyJSONSyntaxError) -> Void
    ) throws(LegacyJSONSyntaxError) {
        let reader = LegacyJSONValueReader(bytes)
        try scanMemberRanges { (key, _, value) throws(LegacyJSONSyntaxError) in
            try member(reader.decodeString(key), (key.lowerBound - 1)..<(key.upperBound + 1), value)
        }
    }

    /// Reads a whole document that must be one object, calling `member` with the byte range of each key's
    /// contents (without the quotes), what the key holds, and the byte range of its value. No key becomes
    /// a `String`: callers match keys as bytes, and decode only a key that is not plain ASCII.
    mutating func scanMemberRanges(
        _ member: (_ key: Range<Int>, _ keyShape: StringShape, _ value: Range<Int>) throws(LegacyJSONSyntaxError) -> Void
    ) throws(LegacyJSONSyntaxError) {
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
    mutating func validateDocument() throws(LegacyJSONSyntaxError) {
        skipWhitespace()
        _ = try scanValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
    }

    /// Why `bytes` is not exactly one JSON value, or `nil` when it is.
    static func problem(in bytes: [UInt8]) -> LegacyJSONSyntaxError? {
        bytes.withUnsafeBufferPointer { buffer -> LegacyJSONSyntaxError? in
            var scanner = LegacyJSONScanner(buffer)
            do throws(LegacyJSONSyntaxError) {
                try scanner.validateDocument()
                return nil
            } catch {
                return error
            }
        }
    }

    // MARK: Values

    private mutating func scanValue(depth: Int) throws(LegacyJSONSyntaxError) -> Range<Int> {
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

    private mutating func scanContainer(close: UInt8, depth: Int, keyed: Bool) throws(LegacyJSONSyntaxError) {
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
    private mutating func scanString() throws(LegacyJSONSyntaxError) -> Range<Int> {
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
    private mutating func scanUTF8Sequence() throws(LegacyJSONSyntaxError) {
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

    private mutating func scanLiteral(_ literal: StaticString) throws(LegacyJSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("invalid literal") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw fail("invalid literal")
        }
        index += count
    }

    private mutating func scanNumber() throws(LegacyJSONSyntaxError) {
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

    private mutating func expect(_ byte: UInt8) throws(LegacyJSONSyntaxError) {
        guard peek() == byte else { throw fail("expected '\(Character(Unicode.Scalar(byte)))'") }
        index += 1
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func skipDigits() {
        while let byte = peek(), Self.isDigit(byte) { index += 1 }
    }

    private func fail(_ message: String) -> LegacyJSONSyntaxError {
        LegacyJSONSyntaxError(offset: index, message: message)
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

/// Reads values out of a buffer at the ranges a ``LegacyJSONScanner`` reported.
struct LegacyJSONValueReader {
    private let bytes: UnsafeBufferPointer<UInt8>

    /// Reads from `bytes`, which must stay valid while the reader is used.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }


    /// Decodes the contents of a string that ``scanString()`` validated (the range excludes the quotes).
    func decodeString(_ range: Range<Int>) -> String {
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
    func string(_ range: Range<Int>, shape: LegacyJSONScanner.StringShape, equals name: String) -> Bool {
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
    func bytes(_ range: Range<Int>, equal name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard range.count == count, let base = bytes.baseAddress else { return false }
        return memcmp(base + range.lowerBound, name.utf8Start, count) == 0
    }

    /// Decodes a value range if it holds a string (quotes included), else returns `nil`.
    func stringValue(_ range: Range<Int>) -> String? {
        guard firstByte(range) == UInt8(ascii: "\"") else { return nil }
        return decodeString((range.lowerBound + 1)..<(range.upperBound - 1))
    }

    /// Reads a JSON number that must be an integer in the range of `Int64`.
    func decodeInt64(_ range: Range<Int>) -> Int64? {
        var value: Int64 = 0
        var i = range.lowerBound
        let negative = i < range.upperBound && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < range.upperBound else { return nil }
        while i < range.upperBound {
            let byte = bytes[i]
            guard LegacyJSONScanner.isDigit(byte) else { return nil }
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
    func firstByte(_ range: Range<Int>) -> UInt8? {
        range.isEmpty ? nil : bytes[range.lowerBound]
    }

    private func hex4(at position: Int) -> UInt32 {
        var code: UInt32 = 0
        for offset in 0..<4 { code = code << 4 | UInt32(LegacyJSONScanner.hexValue(bytes[position + offset]) ?? 0) }
        return code
    }

}

/// A parsed JSON value, for documents small enough to hold whole: a plugin's view, an action's arguments.
///
/// Objects keep their members in order, repeated keys included; readers take the first.
enum LegacyViewJSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number, with its spelling as written.
    case number(Double, String)
    case string(String)
    case array([LegacyViewJSONValue])
    case object([(key: String, value: LegacyViewJSONValue)])

    static func == (lhs: LegacyViewJSONValue, rhs: LegacyViewJSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(_, let a), .number(_, let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(_, let spelling): hasher.combine(spelling)
        case .string(let value): hasher.combine(value)
        case .array(let values): hasher.combine(values)
        case .object(let members):
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }

    /// The first member named `key`, for an object.
    subscript(key: String) -> LegacyViewJSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The value in words, for error messages: `a string`, `an array`, ...
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "true or false"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value as compact JSON.
    var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(_, let spelling): out += spelling
        case .string(let value): LegacyViewJSONValue.quote(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                LegacyViewJSONValue.quote(member.key, into: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    /// Appends `text` as a JSON string literal: quotes, backslashes and control characters escaped.
    static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
                || scalar.value == 0x2028 || scalar.value == 0x2029:
                let digits = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// Why bytes are not one JSON value.
struct LegacyJSONParseError: Error, Sendable, CustomStringConvertible {
    /// The byte offset of the problem.
    let offset: Int
    /// What is wrong.
    let message: String
    /// `message at byte offset`.
    var description: String { "\(message) at byte \(offset)" }

    init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }
}

/// A strict RFC 8259 parser: exactly one value, UTF-8, no trailing bytes, nesting limited.
struct LegacyJSONValueParser {
    /// What a `\u` escape of a lone surrogate (one half of a UTF-16 pair) reads as.
    enum LoneSurrogates {
        /// U+FFFD, as missive_plugin.h allows content decoders.
        case replace
        /// An error: for values that must be valid Unicode as given, such as action arguments.
        case refuse
    }

    private let bytes: [UInt8]
    private var index = 0
    private let maxDepth: Int
    private let loneSurrogates: LoneSurrogates

    /// Parses `bytes` as one JSON value nested at most `maxDepth` deep.
    static func parse(_ bytes: [UInt8], maxDepth: Int = 64, loneSurrogates: LoneSurrogates = .replace) throws(LegacyJSONParseError) -> LegacyViewJSONValue {
        var parser = LegacyJSONValueParser(bytes: bytes, maxDepth: maxDepth, loneSurrogates: loneSurrogates)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.fail("trailing bytes after the value") }
        return value
    }

    private init(bytes: [UInt8], maxDepth: Int, loneSurrogates: LoneSurrogates) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.loneSurrogates = loneSurrogates
    }

    private func fail(_ message: String) -> LegacyJSONParseError { LegacyJSONParseError(offset: index, message: message) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func value(depth: Int) throws(LegacyJSONParseError) -> LegacyViewJSONValue {
        guard let byte = current else { throw fail("unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw fail("nested deeper than \(maxDepth)") }
            index += 1
            var members: [(key: String, value: LegacyViewJSONValue)] = []
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let key = try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
                members.append((key, try value(depth: depth + 1)))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                guard current == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
                index += 1
                return .object(members)
            }
        case UInt8(ascii: "["):
            guard depth < maxDepth else { throw fail("nested deeper than \(maxDepth)") }
            index += 1
            var values: [LegacyViewJSONValue] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") { index += 1; return .array(values) }
            while true {
                skipWhitespace()
                values.append(try value(depth: depth + 1))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                guard current == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
                index += 1
                return .array(values)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected byte 0x\(String(byte, radix: 16))")
        }
    }

    private mutating func literal(_ word: StaticString) throws(LegacyJSONParseError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end of the document") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw fail("invalid literal") }
        index += count
    }

    private mutating func number() throws(LegacyJSONParseError) -> LegacyViewJSONValue {
        let start = index
        func digits(_ parser: inout LegacyJSONValueParser) -> Int {
            let from = parser.index
            while let byte = parser.current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { parser.index += 1 }
            return parser.index - from
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw fail("invalid number")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw fail("invalid number") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw fail("invalid number") }
        }
        let spelling = String(decoding: bytes[start..<index], as: UTF8.self)
        return .number(Double(spelling) ?? .nan, spelling)
    }

    private mutating func string() throws(LegacyJSONParseError) -> String {
        index += 1  // the opening quote
        var result = ""
        var runStart = index
        // Appends the bytes since the last escape, validated as UTF-8.
        func flush(_ parser: LegacyJSONValueParser, _ end: Int) throws(LegacyJSONParseError) {
            guard runStart < end else { return }
            guard let run = parser.bytes.withUnsafeBufferPointer({ String(validating: UnsafeBufferPointer(rebasing: $0[runStart..<end]), as: UTF8.self) })
            else { throw LegacyJSONParseError(offset: runStart, message: "invalid UTF-8 in a string") }
            result += run
        }
        while true {
            guard let byte = current else { throw fail("unterminated string") }
            if byte == UInt8(ascii: "\"") {
                try flush(self, index)
                index += 1
                return result
            }
            if byte < 0x20 { throw fail("control character in a string") }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            try flush(self, index)
            index += 1
            guard let escape = current else { throw fail("unterminated string") }
            index += 1
            switch escape {
            case UInt8(ascii: "\""): result += "\""
            case UInt8(ascii: "\\"): result += "\\"
            case UInt8(ascii: "/"): result += "/"
            case UInt8(ascii: "b"): result += "\u{8}"
            case UInt8(ascii: "f"): result += "\u{C}"
            case UInt8(ascii: "n"): result += "\n"
            case UInt8(ascii: "r"): result += "\r"
            case UInt8(ascii: "t"): result += "\t"
            case UInt8(ascii: "u"):
                var value = try hex4()
                if (0xD800...0xDBFF).contains(value), current == UInt8(ascii: "\\"), index + 1 < bytes.count,
                    bytes[index + 1] == UInt8(ascii: "u")
                {
                    let save = index
                    index += 2
                    let low = try hex4()
                    if (0xDC00...0xDFFF).contains(low) {
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        index = save
                    }
                }
                // A lone surrogate reads as U+FFFD, as the header allows, unless the caller refuses it.
                guard let scalar = Unicode.Scalar(value) else {
                    if loneSurrogates == .refuse { throw LegacyJSONParseError(offset: index - 6, message: "a \\u escape of a lone surrogate, which is not valid Unicode") }
                    result.unicodeScalars.append("\u{FFFD}")
                    break
                }
                result.unicodeScalars.append(scalar)
            default: throw fail("invalid escape")
            }
            runStart = index
        }
    }

    private mutating func hex4() throws(LegacyJSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}

/// A JSON document read for comparing values exactly, as `roundtrip.examples` compares an example with its
/// first encoding.
///
/// - Numbers are decimal values, read from their spelling and never through a `Double`: `1.0`, `1`, `1e0`
///   and `10e-1` are equal, `3.14159265` and `3.14159` are not, and neither are two integers beyond 2^53
///   that a `Double` would round to one value.
/// - Strings are compared by their UTF-16 code units once escapes are resolved, so `"\u00e9"` equals `"é"`.
/// - An object's member order does not matter.
indirect enum LegacyCheckerJSONValue: Hashable {
    case null
    case bool(Bool)
    case number(Decimal)
    case string([UInt16])
    case array([LegacyCheckerJSONValue])
    /// Members by key; a key given twice keeps its values in order.
    case object([[UInt16]: [LegacyCheckerJSONValue]])

    /// A number as sign, significant digits (no leading or trailing zero) and the exponent of the last
    /// digit: 1.50 is (false, "15", -1); zero is (false, "", 0) whatever its sign or spelling.
    struct Decimal: Hashable {
        let negative: Bool
        let digits: [UInt8]
        let exponent: Int
    }

    /// Nesting deeper than this is not read: the checks compare small documents.
    static let maxDepth = 256

    /// The value of a complete JSON document, or `nil` when `bytes` is not one (or nests too deeply).
    init?(_ bytes: [UInt8]) {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        guard reader.at == bytes.count else { return nil }
        self = value
    }

    /// The name of the value's JSON kind: `null`, `boolean`, `number`, `string`, `array` or `object`.
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The first place where `other` differs from this value, in words, or `nil` when they are equal. The
    /// path starts at `path` (`content.score`, `content.options[2]`).
    func difference(from other: LegacyCheckerJSONValue, at path: String = "content", this: String = "the example", that: String = "the encoding") -> String? {
        switch (self, other) {
        case (.object(let mine), .object(let theirs)):
            for key in mine.keys.sorted(by: Self.keyOrder) {
                let name = "\(path).\(String(decoding: key, as: UTF16.self))"
                guard let values = theirs[key] else { return "\(name) is in \(this) and missing from \(that)" }
                let own = mine[key]!
                guard own.count == values.count else { return "\(name) appears \(own.count) times in \(this) and \(values.count) in \(that)" }
                for (left, right) in zip(own, values) {
                    if let difference = left.difference(from: right, at: name, this: this, that: that) { return difference }
                }
            }
            if let added = theirs.keys.sorted(by: Self.keyOrder).first(where: { mine[$0] == nil }) {
                return "\(path).\(String(decoding: added, as: UTF16.self)) is in \(that) and missing from \(this)"
            }
            return nil
        case (.array(let mine), .array(let theirs)):
            for (index, (left, right)) in zip(mine, theirs).enumerated() {
                if let difference = left.difference(from: right, at: "\(path)[\(index)]", this: this, that: that) { return difference }
            }
            return mine.count == theirs.count ? nil : "\(path) has \(mine.count) elements in \(this) and \(theirs.count) in \(that)"
        default:
            guard self != other else { return nil }
            if kind != other.kind { return "\(path) is \(kind) \(excerpt) in \(this) and \(other.kind) \(other.excerpt) in \(that)" }
            return "\(path) is \(excerpt) in \(this) and \(other.excerpt) in \(that)"
        }
    }

    /// A short spelling of a scalar value for messages.
    private var excerpt: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .number(let number): number.description
        case .string(let units):
            String(decoding: units.prefix(40), as: UTF16.self).debugDescription + (units.count > 40 ? "…" : "")
        case .array(let values): "of \(values.count) elements"
        case .object(let members): "of \(members.count) members"
        }
    }

    private static func keyOrder(_ left: [UInt16], _ right: [UInt16]) -> Bool { left.lexicographicallyPrecedes(right) }

    /// A recursive-descent reader over the bytes.
    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }

        mutating func literal(_ text: StaticString, _ value: LegacyCheckerJSONValue) -> LegacyCheckerJSONValue? {
            let count = text.utf8CodeUnitCount
            guard at + count <= bytes.count else { return nil }
            for index in 0..<count where bytes[at + index] != text.utf8Start[index] { return nil }
            at += count
            return value
        }

        mutating func value(depth: Int) -> LegacyCheckerJSONValue? {
            guard at < bytes.count, depth < LegacyCheckerJSONValue.maxDepth else { return nil }
            switch bytes[at] {
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "\""): return string().map(LegacyCheckerJSONValue.string)
            case UInt8(ascii: "["):
                at += 1
                var values: [LegacyCheckerJSONValue] = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
                    at += 1
                    return .array(values)
                }
                while true {
                    skipSpace()
                    guard let element = value(depth: depth + 1) else { return nil }
                    values.append(element)
                    skipSpace()
                    guard at < bytes.count else { return nil }
                    at += 1
                    if bytes[at - 1] == UInt8(ascii: "]") { return .array(values) }
                    guard bytes[at - 1] == UInt8(ascii: ",") else { return nil }
                }
            case UInt8(ascii: "{"):
                at += 1
                var members: [[UInt16]: [LegacyCheckerJSONValue]] = [:]
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
                    at += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\""), let key = string() else { return nil }
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
                    at += 1
                    skipSpace()
                    guard let member = value(depth: depth + 1) else { return nil }
                    members[key, default: []].append(member)
                    skipSpace()
                    guard at < bytes.count else { return nil }
                    at += 1
                    if bytes[at - 1] == UInt8(ascii: "}") { return .object(members) }
                    guard bytes[at - 1] == UInt8(ascii: ",") else { return nil }
                }
            default: return number().map(LegacyCheckerJSONValue.number)
            }
        }

        /// The string at `at` (on its opening quote), as UTF-16 code units with escapes resolved.
        mutating func string() -> [UInt16]? {
            at += 1
            var units: [UInt16] = []
            var start = at
            func flush(_ end: Int) -> Bool {
                guard start < end else { return true }
                guard let text = bytes[start..<end].withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) else { return false }
                units += text.utf16
                return true
            }
            while at < bytes.count {
                let byte = bytes[at]
                if byte == UInt8(ascii: "\"") {
                    guard flush(at) else { return nil }
                    at += 1
                    return units
                }
                if byte < 0x20 { return nil }
                guard byte == UInt8(ascii: "\\") else {
                    at += 1
                    continue
                }
                guard flush(at), at + 1 < bytes.count else { return nil }
                let escape = bytes[at + 1]
                at += 2
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): units.append(UInt16(escape))
                case UInt8(ascii: "b"): units.append(0x08)
                case UInt8(ascii: "f"): units.append(0x0C)
                case UInt8(ascii: "n"): units.append(0x0A)
                case UInt8(ascii: "r"): units.append(0x0D)
                case UInt8(ascii: "t"): units.append(0x09)
                case UInt8(ascii: "u"):
                    guard at + 4 <= bytes.count, let unit = UInt16(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16),
                          bytes[at..<at + 4].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }) else { return nil }
                    units.append(unit)
                    at += 4
                default: return nil
                }
                start = at
            }
            return nil
        }

        /// The number at `at`, in JSON's grammar, as a decimal value.
        mutating func number() -> Decimal? {
            func isDigit(_ index: Int) -> Bool { index < bytes.count && (0x30...0x39).contains(bytes[index]) }
            var negative = false
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") {
                negative = true
                at += 1
            }
            guard isDigit(at) else { return nil }
            var digits: [UInt8] = []
            var exponent = 0
            if bytes[at] == UInt8(ascii: "0") {
                at += 1
                if isDigit(at) { return nil }
            } else {
                while isDigit(at) {
                    digits.append(bytes[at])
                    at += 1
                }
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
                at += 1
                guard isDigit(at) else { return nil }
                while isDigit(at) {
                    digits.append(bytes[at])
                    exponent -= 1
                    at += 1
                }
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
                at += 1
                var negativeExponent = false
                if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") {
                    negativeExponent = bytes[at] == UInt8(ascii: "-")
                    at += 1
                }
                guard isDigit(at) else { return nil }
                // Saturated far beyond any digit count, so that absurd exponents still compare sensibly.
                var written = 0
                while isDigit(at) {
                    written = min(written * 10 + Int(bytes[at] - 0x30), 1 << 40)
                    at += 1
                }
                exponent += negativeExponent ? -written : written
            }
            // Leading zeros (of "0.05") and trailing zeros (of "1.50", "100") carry no value.
            let leading = digits.prefix { $0 == UInt8(ascii: "0") }.count
            digits.removeFirst(leading)
            while digits.last == UInt8(ascii: "0") {
                digits.removeLast()
                exponent += 1
            }
            if digits.isEmpty { return Decimal(negative: false, digits: [], exponent: 0) }
            return Decimal(negative: negative, digits: digits, exponent: exponent)
        }
    }
}

extension LegacyCheckerJSONValue.Decimal: CustomStringConvertible {
    /// The value written plainly when that takes at most 24 digits (`42`, `-1.5`, `0.0025`), else in
    /// scientific notation (`15e-40`).
    var description: String {
        if digits.isEmpty { return "0" }
        let sign = negative ? "-" : ""
        let text = String(decoding: digits, as: UTF8.self)
        let point = digits.count + exponent
        if exponent >= 0 && point <= 24 { return sign + text + String(repeating: "0", count: exponent) }
        if exponent < 0 && point > 0 { return sign + String(text.prefix(point)) + "." + String(text.dropFirst(point)) }
        if exponent < 0 && point > -6 { return sign + "0." + String(repeating: "0", count: -point) + text }
        return "\(sign)\(text)e\(exponent)"
    }
}


/// Why a ``LegacyPullReader`` stopped: what was wrong and at which byte.
///
/// The generated coding never shows it to people: when the fast path refuses content, ``MissiveJSON`` decodes
/// it again with `JSONDecoder`, whose verdict and reason are the ones a host sees (see ``MissiveJSONValue``).
struct LegacyPullError: Error, Sendable, CustomStringConvertible {
    /// The byte offset in the document where the problem was found.
    var offset: Int
    /// What is wrong, in words.
    var message: String

    /// Creates an error at `offset`.
    init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// `message at byte offset`.
    var description: String { "\(message) at byte \(offset)" }
}

/// A strict, allocation-light JSON (RFC 8259) pull reader over borrowed bytes.
///
/// The code `@MissiveMessage` and `@MissiveCoding` generate reads content with it, one value at a time: objects
/// member by member with keys matched as bytes, strings (without a copy step when they hold no escapes),
/// integers of every width with range checks, `Double` and `Float`, booleans and `null`; any value can be
/// skipped. It refuses what `JSONScanner` refuses: nesting deeper than 512 levels, control characters and
/// invalid escapes in strings, lone surrogates, invalid UTF-8, malformed numbers, trailing data.
///
/// The reader borrows the bytes it was made with: use it only while they are valid, as
/// ``withReader(_:_:)`` does. It is not copyable, so that it cannot outlive that scope by accident.
struct LegacyPullReader: ~Copyable {
    /// How deeply arrays and objects may nest, as in the envelope's scanner.
    static let maxDepth = 512

    let start: UnsafePointer<UInt8>?
    let count: Int
    /// The offset of the next byte to read.
    var index = 0
    /// How many arrays and objects are open.
    var depth = 0

    /// A reader of `bytes`, which must stay valid while the reader is used.
    init(_ bytes: UnsafeRawBufferPointer) {
        start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        count = bytes.count
    }

    /// A reader of `bytes`, which must stay valid while the reader is used.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        start = bytes.baseAddress
        count = bytes.count
    }

    /// Runs `body` with a reader of `bytes`.
    static func withReader<Result>(
        _ bytes: UnsafeRawBufferPointer, _ body: (inout LegacyPullReader) throws -> Result
    ) rethrows -> Result {
        var reader = LegacyPullReader(bytes)
        return try body(&reader)
    }

    /// Decodes `bytes` as exactly one value of `type`, with nothing but whitespace around it.

    /// The offset of the next byte to read.
    var offset: Int { index }

    /// Checks that only whitespace is left.
    mutating func finish() throws(LegacyPullError) {
        skipWhitespace()
        guard index == count else { throw fail("unexpected data after the JSON value") }
    }

    // MARK: Bytes

    func byte(at position: Int) -> UInt8 { start.unsafelyUnwrapped[position] }

    func peek() -> UInt8? { index < count ? byte(at: index) : nil }

    mutating func skipWhitespace() {
        while index < count {
            let byte = byte(at: index)
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index += 1
        }
    }

    /// An error at the current offset.
    func fail(_ message: String) -> LegacyPullError {
        LegacyPullError(offset: index, message: message)
    }

    /// The next byte after whitespace, without consuming it.
    mutating func nextByte() throws(LegacyPullError) -> UInt8 {
        skipWhitespace()
        guard let byte = peek() else { throw fail("unexpected end of input") }
        return byte
    }

    // MARK: Kinds

    /// The kind of the next value, from its first byte.
    enum Kind: Sendable {
        /// `{`
        case object
        /// `[`
        case array
        /// `"`
        case string
        /// `-` or a digit
        case number
        /// `true` or `false`
        case bool
        /// `null`
        case null
    }

    /// The kind of the next value, read from its first byte without consuming it.
    mutating func peekKind() throws(LegacyPullError) -> Kind {
        switch try nextByte() {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw fail("unexpected character")
        }
    }

    // MARK: Objects and arrays

    /// Where an object or array being read is: before its first entry or after one.
    struct Cursor: Sendable {
        var isFirst = true
        init() {}
    }

    mutating func open(_ byte: UInt8, _ what: String) throws(LegacyPullError) {
        guard try nextByte() == byte else { throw fail("expected \(what)") }
        guard depth < Self.maxDepth else { throw fail("JSON nested more than \(Self.maxDepth) levels deep") }
        depth += 1
        index += 1
    }

    /// Reads `{` and returns the cursor ``nextKey(_:)`` walks the members with.
    mutating func beginObject() throws(LegacyPullError) -> Cursor {
        try open(UInt8(ascii: "{"), "an object")
        return Cursor()
    }

    /// Reads the next member's key and the `:` after it, or the object's `}` (then returns `nil`). The caller
    /// reads or skips the member's value before asking for the next key.
    mutating func nextKey(_ cursor: inout Cursor) throws(LegacyPullError) -> LegacyPullKey? {
        var byte = try nextByte()
        if cursor.isFirst {
            cursor.isFirst = false
        } else if byte == UInt8(ascii: ",") {
            index += 1
            byte = try nextByte()
            guard byte == UInt8(ascii: "\"") else { throw fail("expected a key") }
        } else if byte != UInt8(ascii: "}") {
            throw fail("expected ',' or '}'")
        }
        if byte == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return nil
        }
        guard byte == UInt8(ascii: "\"") else { throw fail("expected a key") }
        let key = try scanString()
        guard try nextByte() == UInt8(ascii: ":") else { throw fail("expected ':'") }
        index += 1
        return LegacyPullKey(raw: key.raw, isPlainASCII: key.isPlainASCII, hasEscapes: key.hasEscapes)
    }

    /// Reads `[` and returns the cursor ``nextElement(_:)`` walks the elements with.
    mutating func beginArray() throws(LegacyPullError) -> Cursor {
        try open(UInt8(ascii: "["), "an array")
        return Cursor()
    }

    /// Moves to the next element and returns `true`, or reads the array's `]` and returns `false`. The caller
    /// reads or skips each element before asking for the next.
    mutating func nextElement(_ cursor: inout Cursor) throws(LegacyPullError) -> Bool {
        let byte = try nextByte()
        if cursor.isFirst {
            cursor.isFirst = false
            if byte == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return false
            }
            return true
        }
        if byte == UInt8(ascii: ",") {
            index += 1
            return true
        }
        guard byte == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
        index += 1
        depth -= 1
        return false
    }

    // MARK: Literals

    /// Reads `true` or `false`.
    mutating func readBool() throws(LegacyPullError) -> Bool {
        switch try nextByte() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default:
            throw fail("expected true or false")
        }
    }

    /// Reads `null` and returns `true` when the next value is `null`; otherwise reads nothing and returns
    /// `false`.
    mutating func readNull() throws(LegacyPullError) -> Bool {
        guard try nextByte() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    mutating func literal(_ text: StaticString) throws(LegacyPullError) {
        let length = text.utf8CodeUnitCount
        guard count - index >= length else { throw fail("invalid literal") }
        for offset in 0..<length where byte(at: index + offset) != text.utf8Start[offset] {
            throw fail("invalid literal")
        }
        index += length
    }

    // MARK: Skipping

    /// Skips the next value, whatever it is, checking it as strictly as reading it would (except that numbers
    /// are not converted). Nested arrays and objects are walked with a loop, not recursion, so that the stack
    /// a decoder runs on does not limit how deep content may be before the reader refuses it.
    mutating func skipValue() throws(LegacyPullError) {
        // One bit per open container that this call opened: set for an object, clear for an array.
        var kinds = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var open = 0
        var cursor = Cursor()
        func setKind(_ level: Int, object: Bool, _ kinds: inout (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)) {
            withUnsafeMutableBytes(of: &kinds) { words in
                let word = words.baseAddress!.assumingMemoryBound(to: UInt64.self) + level / 64
                if object { word.pointee |= 1 << UInt64(level % 64) } else { word.pointee &= ~(1 << UInt64(level % 64)) }
            }
        }
        func isObject(_ level: Int, _ kinds: inout (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)) -> Bool {
            withUnsafeBytes(of: &kinds) { words in
                words.baseAddress!.assumingMemoryBound(to: UInt64.self)[level / 64] & (1 << UInt64(level % 64)) != 0
            }
        }
        while true {
            // A value.
            switch try peekKind() {
            case .string: _ = try scanString()
            case .number: _ = try scanNumber()
            case .bool: _ = try readBool()
            case .null: try literal("null")
            case .array, .object:
                let object = try peekKind() == .object
                cursor = object ? try beginObject() : try beginArray()
                setKind(open, object: object, &kinds)
                open += 1
                // The container's first entry, or its end.
                if object {
                    if try nextKey(&cursor) != nil { continue }
                } else if try nextElement(&cursor) {
                    continue
                }
                open -= 1
            }
            // After a value: the next entry of the innermost open container, or its end.
            while open > 0 {
                cursor.isFirst = false
                if isObject(open - 1, &kinds) {
                    if try nextKey(&cursor) != nil { break }
                } else if try nextElement(&cursor) {
                    break
                }
                open -= 1
            }
            if open == 0 { return }
        }
    }

    /// Skips the next value and returns its bytes' range, for a decoder of its own.
    mutating func skipValueRange() throws(LegacyPullError) -> Range<Int> {
        skipWhitespace()
        let from = index
        try skipValue()
        return from..<index
    }

    /// The bytes of `range`, which must lie in the document.
    func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: start.map { UnsafeRawPointer($0 + range.lowerBound) }, count: range.count)
    }
}

/// A member's key as ``LegacyPullReader/nextKey(_:)`` found it: its bytes in the document, not a `String`.
///
/// Valid only while the reader's bytes are.
struct LegacyPullKey {
    /// The key's bytes as written, without the quotes.
    let raw: UnsafeRawBufferPointer
    /// Whether the bytes hold no escape and no byte above 0x7F, so that they are the key's characters.
    let isPlainASCII: Bool
    /// Whether the bytes hold an escape.
    let hasEscapes: Bool

    init(raw: UnsafeRawBufferPointer, isPlainASCII: Bool, hasEscapes: Bool) {
        (self.raw, self.isPlainASCII, self.hasEscapes) = (raw, isPlainASCII, hasEscapes)
    }

    /// Whether the key is `name`, compared as `String`s are (as `JSONDecoder` compares keys): byte by byte
    /// for a plain ASCII key, by canonical equivalence otherwise.
    func matches(_ name: StaticString) -> Bool {
        if isPlainASCII {
            let length = name.utf8CodeUnitCount
            guard raw.count == length else { return false }
            return length == 0 || memcmp(raw.baseAddress!, name.utf8Start, length) == 0
        }
        return string == name.description
    }

    /// The key, unescaped.
    var string: String {
        if isPlainASCII { return String(decoding: raw, as: UTF8.self) }
        // The scanner validated the key, so decoding cannot fail.
        return (try? LegacyPullStrings.decode(raw, hasEscapes: hasEscapes)) ?? ""
    }
}

extension LegacyPullReader {
    /// Reads a string.
    mutating func readString() throws(LegacyPullError) -> String {
        guard try nextByte() == UInt8(ascii: "\"") else { throw fail("expected a string") }
        let scanned = try scanString()
        if scanned.isPlainASCII { return String(decoding: scanned.raw, as: UTF8.self) }
        return try LegacyPullStrings.decode(scanned.raw, hasEscapes: scanned.hasEscapes)
    }

    /// Scans the string at the reader's offset (which holds its `"`), checking escapes, surrogates, control
    /// characters and UTF-8, and returns its raw contents.
    mutating func scanString() throws(LegacyPullError) -> LegacyScannedString {
        index += 1
        let from = index
        var plain = true
        var escapes = false
        while index < count {
            let byte = byte(at: index)
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(start: start.unsafelyUnwrapped + from, count: index - from)
                index += 1
                return LegacyScannedString(raw: raw, isPlainASCII: plain, hasEscapes: escapes)
            }
            if byte == UInt8(ascii: "\\") {
                plain = false
                escapes = true
                try scanEscape()
            } else if byte < 0x20 {
                throw fail("control character in string")
            } else if byte < 0x80 {
                index += 1
            } else {
                plain = false
                try scanUTF8Sequence(byte)
            }
        }
        throw fail("unterminated string")
    }

    /// Checks one escape (the reader is at its backslash), a `\u` surrogate pair as one.
    mutating func scanEscape() throws(LegacyPullError) {
        index += 1
        guard let escaped = peek() else { throw fail("unterminated string") }
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
            UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 1
        case UInt8(ascii: "u"):
            index += 1
            let code = try hex4()
            if (0xDC00..<0xE000).contains(code) { throw fail("lone low surrogate") }
            if (0xD800..<0xDC00).contains(code) {
                guard count - index >= 6, byte(at: index) == UInt8(ascii: "\\"), byte(at: index + 1) == UInt8(ascii: "u") else {
                    throw fail("lone high surrogate")
                }
                index += 2
                guard (0xDC00..<0xE000).contains(try hex4()) else { throw fail("lone high surrogate") }
            }
        default:
            throw fail("invalid escape")
        }
    }

    mutating func hex4() throws(LegacyPullError) -> UInt32 {
        guard count - index >= 4 else { throw fail("invalid \\u escape") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let value = LegacyPullStrings.hexValue(byte(at: index)) else { throw fail("invalid \\u escape") }
            code = code << 4 | UInt32(value)
            index += 1
        }
        return code
    }

    /// Checks one multi-byte UTF-8 sequence starting with `lead`: no overlong forms, no surrogates, nothing
    /// above U+10FFFF.
    mutating func scanUTF8Sequence(_ lead: UInt8) throws(LegacyPullError) {
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, low) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, high) = (3, 0x9F)
        case 0xF0: (length, low) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, high) = (4, 0x8F)
        default: throw fail("invalid UTF-8")
        }
        guard count - index >= length else { throw fail("invalid UTF-8") }
        let second = byte(at: index + 1)
        guard second >= low, second <= high else { throw fail("invalid UTF-8") }
        for offset in 2..<length where byte(at: index + offset) & 0xC0 != 0x80 {
            throw fail("invalid UTF-8")
        }
        index += length
    }
}

/// A string's raw contents, as the scanner checked them.
struct LegacyScannedString {
    let raw: UnsafeRawBufferPointer
    let isPlainASCII: Bool
    let hasEscapes: Bool

    init(raw: UnsafeRawBufferPointer, isPlainASCII: Bool, hasEscapes: Bool) {
        (self.raw, self.isPlainASCII, self.hasEscapes) = (raw, isPlainASCII, hasEscapes)
    }
}

/// Unescaping and escaping of JSON strings.
enum LegacyPullStrings {
    /// Decodes a string's raw contents, which the reader checked: valid UTF-8 and valid escapes.
    static func decode(_ raw: UnsafeRawBufferPointer, hasEscapes: Bool) throws(LegacyPullError) -> String {
        guard hasEscapes else { return String(decoding: raw, as: UTF8.self) }
        var utf8: [UInt8] = []
        utf8.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let byte = raw[i]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                i += 1
                continue
            }
            let escaped = raw[i + 1]
            i += 2
            switch escaped {
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var code = hex4(raw, i)
                i += 4
                if (0xD800..<0xDC00).contains(code) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (hex4(raw, i + 2) - 0xDC00)
                    i += 6
                }
                guard let scalar = Unicode.Scalar(code) else { throw LegacyPullError(offset: i, message: "invalid \\u escape") }
                utf8.append(contentsOf: UTF8.encode(scalar)!)
            default: utf8.append(escaped)
            }
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    private static func hex4(_ raw: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        var code: UInt32 = 0
        for offset in 0..<4 { code = code << 4 | UInt32(hexValue(raw[at + offset]) ?? 0) }
        return code
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}


extension LegacyPullReader {
    /// A number as the scanner found it: its bytes, and its digits as an integer when they fit.
    struct ScannedNumber {
        var range: Range<Int>
        var negative = false
        /// Whether the number has a fraction or an exponent.
        var isInteger = true
        /// The integer part's value, when it fits in 64 bits.
        var magnitude: UInt64 = 0
        var overflow = false
        init(range: Range<Int>) { self.range = range }
    }

    /// Scans a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func scanNumber() throws(LegacyPullError) -> ScannedNumber {
        skipWhitespace()
        var number = ScannedNumber(range: index..<index)
        if peek() == UInt8(ascii: "-") {
            number.negative = true
            index += 1
        }
        guard let first = peek(), isDigit(first) else { throw fail("invalid number") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), isDigit(next) { throw fail("invalid number") }
        } else {
            while let byte = peek(), isDigit(byte) {
                let (times10, overflow1) = number.magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                if overflow1 || overflow2 { number.overflow = true }
                number.magnitude = sum
                index += 1
            }
        }
        if peek() == UInt8(ascii: ".") {
            number.isInteger = false
            index += 1
            guard let digit = peek(), isDigit(digit) else { throw fail("invalid number") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            number.isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw fail("invalid number") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        number.range = number.range.lowerBound..<index
        return number
    }

    func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// Reads an integer that fits in `T`. A number written with a fraction or an exponent is refused,
    /// even when its value is whole.
    mutating func readInteger<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(LegacyPullError) -> T {
        guard T.bitWidth <= 64 else { throw fail("integers wider than 64 bits are not read") }
        let kind = try peekKind()
        guard kind == .number else { throw fail("expected an integer") }
        let number = try scanNumber()
        guard number.isInteger, !number.overflow else { throw fail("number does not fit in \(T.self)") }
        if number.negative {
            guard T.isSigned, number.magnitude <= UInt64(T.max) + 1 else { throw fail("number does not fit in \(T.self)") }
            return T(truncatingIfNeeded: 0 &- number.magnitude)
        }
        guard number.magnitude <= UInt64(T.max) else { throw fail("number does not fit in \(T.self)") }
        return T(truncatingIfNeeded: number.magnitude)
    }

    /// Reads a finite number as a `Double`, correctly rounded. A number too large for a `Double`, or not zero
    /// but so small that it rounds to zero, is refused, as `JSONDecoder` refuses them.
    mutating func readDouble() throws(LegacyPullError) -> Double {
        guard try peekKind() == .number else { throw fail("expected a number") }
        let number = try scanNumber()
        if number.isInteger, !number.overflow, number.magnitude <= 1 << 53 {
            let value = Double(number.magnitude)
            return number.negative ? -value : value
        }
        if let value = Self.simpleDecimal(bytes(number.range)) { return value }
        let text = String(decoding: bytes(number.range), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw LegacyPullError(offset: number.range.lowerBound, message: "number does not fit in Double")
        }
        if value == 0, bytes(number.range).contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) {
            // Anything but zero that rounds to zero: too small for a Double.
            let mantissa = text.prefix { $0 != "e" && $0 != "E" }
            if mantissa.contains(where: { $0 >= "1" && $0 <= "9" }) {
                throw LegacyPullError(offset: number.range.lowerBound, message: "number does not fit in Double")
            }
        }
        return value
    }

    /// Reads a finite number as a `Float`: the `Double` it reads as, when that `Float` holds it exactly or it is
    /// not near a halfway point between two `Float`s; otherwise the number is refused rather than risk rounding
    /// twice.
    mutating func readFloat() throws(LegacyPullError) -> Float {
        let from = index
        let double = try readDouble()
        let float = Float(double)
        guard float.isNormal || (float == 0 && double == 0) else { throw LegacyPullError(offset: from, message: "number does not fit in Float") }
        if Double(float) != double {
            let text = String(decoding: bytes(from..<index), as: UTF8.self).trimmingCharacters(in: .whitespaces)
            guard Float(text) == float else { throw LegacyPullError(offset: from, message: "number does not round to one Float") }
        }
        return float
    }

    /// The value of a number with at most 15 significant digits and a small decimal exponent, which one
    /// exact multiplication or division by a power of ten gives correctly rounded; `nil` for any other.
    static func simpleDecimal(_ text: UnsafeRawBufferPointer) -> Double? {
        var digits: UInt64 = 0
        var significant = 0
        var scale = 0
        var exponent = 0
        var negative = false
        var i = 0
        if text.first == UInt8(ascii: "-") {
            negative = true
            i = 1
        }
        var inFraction = false
        while i < text.count {
            let byte = text[i]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                var sign = 1
                i += 1
                if text[i] == UInt8(ascii: "-") { sign = -1; i += 1 } else if text[i] == UInt8(ascii: "+") { i += 1 }
                var value = 0
                while i < text.count {
                    value = value * 10 + Int(text[i] - UInt8(ascii: "0"))
                    if value > 400 { return nil }
                    i += 1
                }
                exponent = sign * value
                break
            } else {
                if digits != 0 || byte != UInt8(ascii: "0") { significant += 1 }
                if significant > 15 { return nil }
                digits = digits * 10 + UInt64(byte - UInt8(ascii: "0"))
                if inFraction { scale += 1 }
            }
            i += 1
        }
        let power = exponent - scale
        guard (-22...22).contains(power) else { return nil }
        if digits == 0 { return negative ? -0.0 : 0 }
        var value = Double(digits)
        value = power >= 0 ? value * powersOfTen[power] : value / powersOfTen[-power]
        return negative ? -value : value
    }

    static let powersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { value, _ in value * 10 } }
}
