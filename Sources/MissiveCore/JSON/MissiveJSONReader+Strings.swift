extension MissiveJSONReader {
    /// Reads a string.
    @inlinable public mutating func readString() throws(MissiveJSONError) -> String {
        guard try nextByte() == UInt8(ascii: "\"") else { throw fail("expected a string") }
        let scanned = try scanString()
        if scanned.isPlainASCII { return String(decoding: scanned.raw, as: UTF8.self) }
        return try MissiveJSONStrings.decode(scanned.raw, hasEscapes: scanned.hasEscapes, loneSurrogates: .refuse)
    }

    /// Scans the string at the reader's offset (which holds its `"`), checking escapes, surrogates, control
    /// characters and UTF-8, and returns its raw contents.
    @usableFromInline mutating func scanString() throws(MissiveJSONError) -> ScannedString {
        index += 1
        let from = index
        var plain = true
        var escapes = false
        while index < count {
            let byte = byte(at: index)
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(start: start.unsafelyUnwrapped + from, count: index - from)
                index += 1
                return ScannedString(raw: raw, isPlainASCII: plain, hasEscapes: escapes)
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
                if checksUTF8 { try scanUTF8Sequence(byte) } else { index += 1 }
            }
        }
        throw fail("unterminated string")
    }

    /// Checks one escape (the reader is at its backslash), a `\u` surrogate pair as one.
    @usableFromInline mutating func scanEscape() throws(MissiveJSONError) {
        index += 1
        guard let escaped = peek() else { throw fail("unterminated string") }
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
            UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 1
        case UInt8(ascii: "u"):
            index += 1
            let code = try hex4()
            guard refusesLoneSurrogates, (0xD800..<0xE000).contains(code) else { return }
            if code >= 0xDC00 { throw MissiveJSONStrings.loneSurrogate(at: index - 6) }
            guard count - index >= 6, byte(at: index) == UInt8(ascii: "\\"), byte(at: index + 1) == UInt8(ascii: "u") else {
                throw MissiveJSONStrings.loneSurrogate(at: index - 6)
            }
            index += 2
            guard (0xDC00..<0xE000).contains(try hex4()) else { throw MissiveJSONStrings.loneSurrogate(at: index - 12) }
        default:
            throw fail("invalid escape")
        }
    }

    @usableFromInline mutating func hex4() throws(MissiveJSONError) -> UInt32 {
        guard count - index >= 4 else { throw fail("invalid \\u escape") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let value = MissiveJSONStrings.hexValue(byte(at: index)) else { throw fail("invalid \\u escape") }
            code = code << 4 | UInt32(value)
            index += 1
        }
        return code
    }

    /// Checks one multi-byte UTF-8 sequence starting with `lead`: no overlong forms, no surrogates, nothing
    /// above U+10FFFF.
    @usableFromInline mutating func scanUTF8Sequence(_ lead: UInt8) throws(MissiveJSONError) {
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
        default: throw fail("invalid UTF-8 in a string")
        }
        guard count - index >= length else { throw fail("invalid UTF-8 in a string") }
        let second = byte(at: index + 1)
        guard second >= low, second <= high else { throw fail("invalid UTF-8 in a string") }
        for offset in 2..<length where byte(at: index + offset) & 0xC0 != 0x80 {
            throw fail("invalid UTF-8 in a string")
        }
        index += length
    }
}

/// A string's raw contents, as the scanner checked them.
@usableFromInline struct ScannedString {
    @usableFromInline let raw: UnsafeRawBufferPointer
    @usableFromInline let isPlainASCII: Bool
    @usableFromInline let hasEscapes: Bool

    @usableFromInline init(raw: UnsafeRawBufferPointer, isPlainASCII: Bool, hasEscapes: Bool) {
        (self.raw, self.isPlainASCII, self.hasEscapes) = (raw, isPlainASCII, hasEscapes)
    }
}

/// What a `\u` escape of a lone surrogate (half of a UTF-16 pair, which RFC 8259's grammar allows but which is
/// no character) becomes when a JSON string is decoded. This is Missive's one rule for it:
///
/// - **Refused** wherever a string is taken as a value to act on, store or compare: the generated coding (and
///   `JSONDecoder`, its fallback, refuses it too), action arguments, the checker's exact comparison. A Swift
///   `String` cannot hold a lone surrogate, so any other choice would change the value.
/// - **Repaired to U+FFFD** only where the text is shown and the document must survive it: the envelope's own
///   string fields and plugin view documents, as missive_plugin.h lets content decoders do.
///
/// The range scanner, which checks a document's syntax and hands content bytes on untouched, accepts it: the
/// content's decoder then applies its own rule (a Swift type's refuses, a C decoder may repair).
@usableFromInline package enum JSONLoneSurrogates: Sendable {
    /// An error.
    case refuse
    /// U+FFFD REPLACEMENT CHARACTER.
    case replace
}

/// Unescaping of JSON strings: the one decoder of a string's contents.
@usableFromInline enum MissiveJSONStrings {
    /// The error for a lone surrogate's escape at `offset`.
    @usableFromInline static func loneSurrogate(at offset: Int) -> MissiveJSONError {
        MissiveJSONError(offset: offset, message: "a \\u escape of a lone surrogate, which is not valid Unicode")
    }

    /// Decodes a string's raw contents (without the quotes), which a reader scanned: valid escapes and, where the
    /// reader checked it, valid UTF-8 (bytes that are not are repaired to U+FFFD). A lone surrogate's escape is
    /// refused or replaced as `loneSurrogates` says; the offset of an error is within `raw`.
    @usableFromInline static func decode(
        _ raw: UnsafeRawBufferPointer, hasEscapes: Bool, loneSurrogates: JSONLoneSurrogates
    ) throws(MissiveJSONError) -> String {
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
                if (0xD800..<0xDC00).contains(code), i + 6 <= raw.count, raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u") {
                    let low = hex4(raw, i + 2)
                    if (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                guard let scalar = Unicode.Scalar(code) else {
                    if loneSurrogates == .refuse { throw loneSurrogate(at: i - 6) }
                    utf8.append(contentsOf: [0xEF, 0xBF, 0xBD])  // U+FFFD
                    continue
                }
                // A scalar's encoding starts with an ASCII or a lead byte, so bytes before it that are not
                // valid UTF-8 (where the scanner did not check them) are repaired as if decoded on their own.
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

    /// The value of one hexadecimal digit, or `nil`.
    @usableFromInline static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
