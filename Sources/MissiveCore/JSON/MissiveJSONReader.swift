import Foundation

/// Why JSON was refused: what was wrong and at which byte. Missive's one JSON error type, thrown by every
/// front end of the JSON layer (the pull reader, the range scanner, the value tree, the writer).
///
/// The generated coding never shows it to people: when the fast path refuses content, ``MissiveJSON`` decodes
/// it again with `JSONDecoder`, whose verdict and reason are the ones a host sees (see ``MissiveJSONValue``).
/// The envelope and the action checks show its ``description``.
public struct MissiveJSONError: Error, Sendable, CustomStringConvertible {
    /// The byte offset in the document where the problem was found.
    public var offset: Int
    /// What is wrong, in words.
    public var message: String

    /// Creates an error at `offset`.
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// `message at byte offset`.
    public var description: String { "\(message) at byte \(offset)" }
}

/// Missive's one low-level JSON (RFC 8259) reader: a strict, allocation-light pull reader over borrowed bytes.
///
/// Whitespace, strings and their escapes, UTF-8, numbers, literals and the depth limit (``maxDepth``) are read
/// here and nowhere else. The other front ends are built on it: the range scanner the envelope uses to keep
/// content bytes untouched (`JSONScanner`), and the value tree (`JSONValue`) of views, actions and the checker.
///
/// The code `@MissiveMessage` and `@MissiveCoding` generate reads content with it, one value at a time: objects
/// member by member with keys matched as bytes, strings (without a copy step when they hold no escapes),
/// integers of every width with range checks, `Double` and `Float`, booleans and `null`; any value can be
/// skipped. It refuses nesting deeper than 512 levels, control characters and invalid escapes in strings,
/// lone surrogates, invalid UTF-8, malformed numbers and trailing data. (The range scanner may leave the last
/// two string checks to the content's decoder; see `JSONLoneSurrogates`.)
///
/// The reader borrows the bytes it was made with: use it only while they are valid, as
/// ``withReader(_:_:)`` does. It is not copyable, so that it cannot outlive that scope by accident.
public struct MissiveJSONReader: ~Copyable {
    /// How deeply arrays and objects may nest: the one depth limit of every JSON reader in Missive. A front
    /// end may ask for less (an action's arguments nest at most 16 deep), never for more.
    public static let maxDepth = 512

    @usableFromInline let start: UnsafePointer<UInt8>?
    @usableFromInline let count: Int
    /// The offset of the next byte to read.
    @usableFromInline var index = 0
    /// How many arrays and objects are open.
    @usableFromInline var depth = 0
    /// Whether strings must be well-formed UTF-8; only the range scanner turns it off.
    @usableFromInline var checksUTF8 = true
    /// Whether a `\u` escape of a lone surrogate is refused while scanning; only the range scanner turns it off.
    @usableFromInline var refusesLoneSurrogates = true

    /// A reader of `bytes`, which must stay valid while the reader is used.
    @inlinable public init(_ bytes: UnsafeRawBufferPointer) {
        start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        count = bytes.count
    }

    /// A reader of `bytes`, which must stay valid while the reader is used.
    @inlinable public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        start = bytes.baseAddress
        count = bytes.count
    }

    /// A reader of `bytes` that checks strings for syntax only, as the range scanner may: without
    /// `checkingUTF8`, bytes of 0x80 or more in a string are not checked; without `refusingLoneSurrogates`, a
    /// `\u` escape of half a surrogate pair is accepted (see `JSONLoneSurrogates`).
    package init(_ bytes: UnsafeBufferPointer<UInt8>, checkingUTF8: Bool, refusingLoneSurrogates: Bool) {
        self.init(bytes)
        checksUTF8 = checkingUTF8
        self.refusesLoneSurrogates = refusingLoneSurrogates
    }

    /// Runs `body` with a reader of `bytes`.
    @inlinable public static func withReader<Result>(
        _ bytes: UnsafeRawBufferPointer, _ body: (inout MissiveJSONReader) throws -> Result
    ) rethrows -> Result {
        var reader = MissiveJSONReader(bytes)
        return try body(&reader)
    }

    /// Decodes `bytes` as exactly one value of `type`, with nothing but whitespace around it.
    @inlinable public static func decode<T: MissiveJSONValue>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        var reader = MissiveJSONReader(bytes)
        let value = try T(missiveJSON: &reader)
        try reader.finish()
        return value
    }

    /// The offset of the next byte to read.
    @inlinable public var offset: Int { index }

    /// Checks that only whitespace is left.
    @inlinable public mutating func finish() throws(MissiveJSONError) {
        skipWhitespace()
        guard index == count else { throw fail("unexpected data after the JSON value") }
    }

    // MARK: Bytes

    @inlinable @inline(__always) func byte(at position: Int) -> UInt8 { start.unsafelyUnwrapped[position] }

    @inlinable @inline(__always) func peek() -> UInt8? { index < count ? byte(at: index) : nil }

    @inlinable @inline(__always) mutating func skipWhitespace() {
        while index < count {
            let byte = byte(at: index)
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index += 1
        }
    }

    /// An error at the current offset.
    @inlinable public func fail(_ message: String) -> MissiveJSONError {
        MissiveJSONError(offset: index, message: message)
    }

    /// The next byte after whitespace, without consuming it.
    @inlinable @inline(__always) mutating func nextByte() throws(MissiveJSONError) -> UInt8 {
        skipWhitespace()
        guard let byte = peek() else { throw fail("unexpected end of input") }
        return byte
    }

    // MARK: Kinds

    /// The kind of the next value, from its first byte.
    public enum Kind: Sendable {
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
    @inlinable public mutating func peekKind() throws(MissiveJSONError) -> Kind {
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
    public struct Cursor: Sendable {
        @usableFromInline var isFirst = true
        @usableFromInline init() {}
    }

    @inlinable @inline(__always) mutating func open(_ byte: UInt8, _ what: String) throws(MissiveJSONError) {
        guard try nextByte() == byte else { throw fail("expected \(what)") }
        guard depth < Self.maxDepth else { throw fail("JSON nested more than \(Self.maxDepth) levels deep") }
        depth += 1
        index += 1
    }

    /// Reads `{` and returns the cursor ``nextKey(_:)`` walks the members with.
    @inlinable public mutating func beginObject() throws(MissiveJSONError) -> Cursor {
        try open(UInt8(ascii: "{"), "an object")
        return Cursor()
    }

    /// Reads the next member's key and the `:` after it, or the object's `}` (then returns `nil`). The caller
    /// reads or skips the member's value before asking for the next key.
    @inlinable @inline(__always) public mutating func nextKey(_ cursor: inout Cursor) throws(MissiveJSONError) -> MissiveJSONKey? {
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
        return MissiveJSONKey(raw: key.raw, isPlainASCII: key.isPlainASCII, hasEscapes: key.hasEscapes)
    }

    /// Reads `[` and returns the cursor ``nextElement(_:)`` walks the elements with.
    @inlinable public mutating func beginArray() throws(MissiveJSONError) -> Cursor {
        try open(UInt8(ascii: "["), "an array")
        return Cursor()
    }

    /// Moves to the next element and returns `true`, or reads the array's `]` and returns `false`. The caller
    /// reads or skips each element before asking for the next.
    @inlinable public mutating func nextElement(_ cursor: inout Cursor) throws(MissiveJSONError) -> Bool {
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
    @inlinable public mutating func readBool() throws(MissiveJSONError) -> Bool {
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
    @inlinable public mutating func readNull() throws(MissiveJSONError) -> Bool {
        guard try nextByte() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    @inlinable mutating func literal(_ text: StaticString) throws(MissiveJSONError) {
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
    public mutating func skipValue() throws(MissiveJSONError) {
        // A string or a number, the most common values of all, needs no container state.
        switch try nextByte() {
        case UInt8(ascii: "\""):
            _ = try scanString()
            return
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try skipNumber()
            return
        default:
            break
        }
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
            // A value, told by its first byte as peekKind() tells it.
            let first = try nextByte()
            switch first {
            case UInt8(ascii: "\""): _ = try scanString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
            case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try readBool()
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let object = first == UInt8(ascii: "{")
                // What `beginObject()` and `beginArray()` do, with the first byte already known.
                guard depth < Self.maxDepth else { throw fail("JSON nested more than \(Self.maxDepth) levels deep") }
                depth += 1
                index += 1
                cursor = Cursor()
                setKind(open, object: object, &kinds)
                open += 1
                // The container's first entry, or its end.
                if object {
                    if try nextKey(&cursor) != nil { continue }
                } else if try nextElement(&cursor) {
                    continue
                }
                open -= 1
            default:
                throw fail("unexpected character")
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
    public mutating func skipValueRange() throws(MissiveJSONError) -> Range<Int> {
        skipWhitespace()
        let from = index
        try skipValue()
        return from..<index
    }

    /// The bytes of `range`, which must lie in the document.
    public func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: start.map { UnsafeRawPointer($0 + range.lowerBound) }, count: range.count)
    }
}

/// A member's key as ``MissiveJSONReader/nextKey(_:)`` found it: its bytes in the document, not a `String`.
///
/// Valid only while the reader's bytes are.
public struct MissiveJSONKey {
    /// The key's bytes as written, without the quotes.
    public let raw: UnsafeRawBufferPointer
    /// Whether the bytes hold no escape and no byte above 0x7F, so that they are the key's characters.
    public let isPlainASCII: Bool
    /// Whether the bytes hold an escape.
    public let hasEscapes: Bool

    @inlinable init(raw: UnsafeRawBufferPointer, isPlainASCII: Bool, hasEscapes: Bool) {
        (self.raw, self.isPlainASCII, self.hasEscapes) = (raw, isPlainASCII, hasEscapes)
    }

    /// Whether the key is `name`, compared as `String`s are (as `JSONDecoder` compares keys): byte by byte
    /// for a plain ASCII key, by canonical equivalence otherwise.
    @inlinable public func matches(_ name: StaticString) -> Bool {
        if isPlainASCII {
            let length = name.utf8CodeUnitCount
            guard raw.count == length else { return false }
            return length == 0 || memcmp(raw.baseAddress!, name.utf8Start, length) == 0
        }
        return string == name.description
    }

    /// The key, unescaped.
    public var string: String {
        if isPlainASCII { return String(decoding: raw, as: UTF8.self) }
        // The scanner validated the key, so decoding cannot fail.
        return (try? MissiveJSONStrings.decode(raw, hasEscapes: hasEscapes, loneSurrogates: .replace)) ?? ""
    }
}

/// The error ``ActionArgument/list(fromJSONArray:)`` threw, now the JSON layer's one error type.
@available(*, deprecated, renamed: "MissiveJSONError")
public typealias JSONParseError = MissiveJSONError
