/// A parsed JSON value, for documents small enough to hold whole: a plugin's view, an action's arguments.
///
/// Objects keep their members in order, repeated keys included; readers take the first.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number, with its spelling as written.
    case number(Double, String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
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

    package func hash(into hasher: inout Hasher) {
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
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The value in words, for error messages: `a string`, `an array`, ...
    package var kindDescription: String {
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
    package var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(_, let spelling): out += spelling
        case .string(let value): JSONValue.quote(value, into: &out)
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
                JSONValue.quote(member.key, into: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    /// Appends `text` as a JSON string literal: quotes, backslashes and control characters escaped.
    package static func quote(_ text: String, into out: inout String) {
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
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    /// The byte offset of the problem.
    public let offset: Int
    /// What is wrong.
    public let message: String
    /// `message at byte offset`.
    public var description: String { "\(message) at byte \(offset)" }

    package init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }
}

/// A strict RFC 8259 parser: exactly one value, UTF-8, no trailing bytes, nesting limited.
package struct JSONValueParser {
    /// What a `\u` escape of a lone surrogate (one half of a UTF-16 pair) reads as.
    package enum LoneSurrogates {
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
    package static func parse(_ bytes: [UInt8], maxDepth: Int = 64, loneSurrogates: LoneSurrogates = .replace) throws(JSONParseError) -> JSONValue {
        var parser = JSONValueParser(bytes: bytes, maxDepth: maxDepth, loneSurrogates: loneSurrogates)
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

    private func fail(_ message: String) -> JSONParseError { JSONParseError(offset: index, message: message) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw fail("unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw fail("nested deeper than \(maxDepth)") }
            index += 1
            var members: [(key: String, value: JSONValue)] = []
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
            var values: [JSONValue] = []
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

    private mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end of the document") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw fail("invalid literal") }
        index += count
    }

    private mutating func number() throws(JSONParseError) -> JSONValue {
        let start = index
        func digits(_ parser: inout JSONValueParser) -> Int {
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

    private mutating func string() throws(JSONParseError) -> String {
        index += 1  // the opening quote
        var result = ""
        var runStart = index
        // Appends the bytes since the last escape, validated as UTF-8.
        func flush(_ parser: JSONValueParser, _ end: Int) throws(JSONParseError) {
            guard runStart < end else { return }
            guard let run = parser.bytes.withUnsafeBufferPointer({ String(validating: UnsafeBufferPointer(rebasing: $0[runStart..<end]), as: UTF8.self) })
            else { throw JSONParseError(offset: runStart, message: "invalid UTF-8 in a string") }
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
                    if loneSurrogates == .refuse { throw JSONParseError(offset: index - 6, message: "a \\u escape of a lone surrogate, which is not valid Unicode") }
                    result.unicodeScalars.append("\u{FFFD}")
                    break
                }
                result.unicodeScalars.append(scalar)
            default: throw fail("invalid escape")
            }
            runStart = index
        }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
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
