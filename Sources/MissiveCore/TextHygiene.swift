/// Cleaning of text that comes from a sender or a plugin before it reaches a terminal, a page or a log.
///
/// A message's text can carry what a terminal acts on (escape sequences that clear the screen or set the
/// window title, C1 controls that some terminals read as escapes) or what spoofs the text around it (bidi
/// overrides and isolates). Cleaned text has none of them:
/// - escape sequences (`ESC [ … final`, `ESC ] … BEL` or `ST`, `ESC P/X/^/_ … ST`, `ESC` and one character,
///   and their C1 forms) are removed whole;
/// - every other C0 or C1 control and DEL becomes a space, and so do line breaks (LF, CR, U+0085, U+2028,
///   U+2029) where the text is one line; a block keeps them as `\n`;
/// - bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) are removed, so that they
///   cannot reorder what follows. The marks U+200E and U+200F stay: they affect only neutral characters
///   next to them.
public enum TextHygiene {
    /// The longest digest or push text, in code points (`MISSIVE_TEXT_MAX_CODE_POINTS`).
    public static let maxDigestCodePoints = 256

    /// The text on one line, cleaned.
    public static func line(_ text: String) -> String {
        clean(text, keepingLineBreaks: false)
    }

    /// The text cleaned, with its line breaks kept as `\n` (CR LF counts as one).
    public static func block(_ text: String) -> String {
        clean(text, keepingLineBreaks: true)
    }

    /// A digest or push text: cleaned onto one line, and cut to ``maxDigestCodePoints`` code points on a
    /// character boundary, ending with `…` when cut.
    public static func digest(_ text: String) -> String {
        cut(line(text), toCodePoints: maxDigestCodePoints)
    }

    /// `text` cut to at most `limit` code points on a character boundary, ending with `…` when cut.
    public static func cut(_ text: String, toCodePoints limit: Int) -> String {
        // A code point takes at least one byte: most text is short enough not to need counting.
        guard text.utf8.count > limit, text.unicodeScalars.count > limit else { return text }
        var result = ""
        var count = 0
        for character in text {
            let size = character.unicodeScalars.count
            guard count + size <= limit - 1 else { break }
            result.append(character)
            count += size
        }
        return result + "…"
    }

    /// Whether a code point is one that cleaned text never holds.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isBidiControl(scalar) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// JSON text with every unsafe code point other than JSON's whitespace (which valid JSON can hold raw
    /// only inside strings: C1 controls, DEL, line and paragraph separators, bidi controls) written as a `\u`
    /// escape: the same JSON value, safe to print. Bytes that are not valid UTF-8 are left as they are.
    /// The JSON layer's display-safe escaping (`MissiveJSONWriter.Escaping.displaySafe`) does it.
    public static func escapingUnsafe(json bytes: [UInt8]) -> [UInt8] {
        MissiveJSONWriter.displaySafe(json: bytes)
    }

    // MARK: -

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\n" || scalar == "\r" || scalar == "\u{85}" || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// Whether `text` may hold a code point that cleaning changes, judged from its UTF-8 bytes alone: every
    /// such code point is a byte below 0x20, DEL, or starts with 0xC2 (C1 controls, NEL) or 0xE2 (U+2028,
    /// U+2029 and the bidi controls). Text without those bytes, nearly all text, is clean for certain.
    private static func mayBeUnsafe(_ text: String) -> Bool {
        func scan(_ bytes: some Sequence<UInt8>) -> Bool {
            bytes.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }
        }
        return text.utf8.withContiguousStorageIfAvailable(scan) ?? scan(text.utf8)
    }

    private static func clean(_ text: String, keepingLineBreaks: Bool) -> String {
        // Most text is clean: look at its bytes, then at its code points, before copying them.
        guard mayBeUnsafe(text), text.unicodeScalars.contains(where: isUnsafe) else { return text }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if let end = escapeSequenceEnd(scalars, at: index) {
                index = end
                continue
            }
            index += 1
            if isBidiControl(scalar) { continue }
            if isLineBreak(scalar) {
                // CR LF is one break.
                if scalar == "\r" && index < scalars.count && scalars[index] == "\n" { index += 1 }
                out.append(keepingLineBreaks ? "\n" : " ")
            } else if isControl(scalar) {
                out.append(" ")
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Where the escape sequence that starts at `index` ends, or `nil` when none starts there.
    private static func escapeSequenceEnd(_ scalars: [Unicode.Scalar], at index: Int) -> Int? {
        let first = scalars[index].value
        var position: Int
        var kind: UInt32
        switch first {
        case 0x1B:
            guard index + 1 < scalars.count else { return index + 1 }
            let next = scalars[index + 1].value
            switch next {
            case 0x5B, 0x5D, 0x50, 0x58, 0x5E, 0x5F: kind = next  // [ ] P X ^ _
            case 0x20...0x7E: return index + 2  // ESC and one character
            default: return index + 1
            }
            position = index + 2
        case 0x9B: kind = 0x5B; position = index + 1  // CSI
        case 0x9D: kind = 0x5D; position = index + 1  // OSC
        case 0x90, 0x98, 0x9E, 0x9F: kind = 0x50; position = index + 1  // DCS, SOS, PM, APC
        default: return nil
        }
        if kind == 0x5B {
            // Parameters and intermediates, then one final byte.
            while position < scalars.count, (0x20...0x3F).contains(scalars[position].value) { position += 1 }
            if position < scalars.count, (0x40...0x7E).contains(scalars[position].value) { position += 1 }
            return position
        }
        // A string sequence ends at BEL (OSC only), ST (ESC \ or U+009C), or the end of the text.
        while position < scalars.count {
            let value = scalars[position].value
            if value == 0x07 && kind == 0x5D { return position + 1 }
            if value == 0x9C { return position + 1 }
            if value == 0x1B { return position + 1 < scalars.count && scalars[position + 1] == "\\" ? position + 2 : position + 1 }
            position += 1
        }
        return position
    }
}
