import MissiveCore
import Testing

/// What a sender or a plugin writes never acts on a terminal or spoofs the text after it.
@Suite struct TextHygieneTests {
    @Test(arguments: [
        ("\u{1B}[2Jclear", "clear"),  // CSI
        ("\u{1B}[38;5;196mred\u{1B}[0m", "red"),
        ("\u{1B}]0;title\u{07}after", "after"),  // OSC ended by BEL
        ("\u{1B}]8;;https://x.example\u{1B}\\link\u{1B}]8;;\u{1B}\\", "link"),  // OSC 8 hyperlink, ended by ST
        ("\u{1B}Pq#0;2;0;0;0\u{1B}\\x", "x"),  // DCS
        ("\u{9B}31mC1", "C1"),  // C1 CSI
        ("a\u{1B}7b", "ab"),  // ESC and one character
        ("tab\there", "tab here"),
        ("del\u{7F}", "del "),
        ("\u{202E}evil\u{202C} and \u{2067}iso\u{2069}", "evil and iso"),
        ("line\r\nbreak\u{2028}sep\u{85}nel", "line break sep nel"),
        ("trailing escape \u{1B}", "trailing escape "),
        ("plain text ✓ 链接 \u{200F}", "plain text ✓ 链接 \u{200F}"),
    ])
    func oneLineTextLosesWhatATerminalWouldActOn(input: String, expected: String) {
        #expect(TextHygiene.line(input) == expected)
        #expect(!TextHygiene.line(input).unicodeScalars.contains(where: TextHygiene.isUnsafe))
    }

    /// Cleaning first looks at the text's bytes for the few that can start an unsafe code point: no unsafe
    /// code point may slip past that look, wherever it sits in the text.
    @Test func everyUnsafeCodePointIsCleanedAndEverySafeOneKept() {
        var checked = 0
        for value in UInt32(0)...0x10FFFF where value < 0x3000 || value > 0xFFF0 || value % 97 == 0 {
            guard let scalar = Unicode.Scalar(value), value != 0x1B, !(0x90...0x9F).contains(value) else { continue }
            let text = "ab" + String(Character(scalar)) + "cd"
            let cleaned = TextHygiene.line(text)
            if TextHygiene.isUnsafe(scalar) {
                #expect(!cleaned.unicodeScalars.contains(scalar), "U+\(String(value, radix: 16)) kept")
            } else {
                #expect(cleaned == text, "U+\(String(value, radix: 16)) changed")
            }
            checked += 1
        }
        #expect(checked > 10_000)
    }

    @Test func aBlockKeepsItsLineBreaksOnly() {
        #expect(TextHygiene.block("one\r\ntwo\u{2028}three\u{1B}[Kfour") == "one\ntwo\nthreefour")
    }

    @Test func aDigestIsCutOnACharacterBoundary() {
        // 255 letters then a family emoji of 7 code points: the emoji would cross the limit, so it goes whole.
        let family = "👨‍👩‍👧‍👦"
        let digest = TextHygiene.digest(String(repeating: "a", count: 250) + family + "tail")
        #expect(digest == String(repeating: "a", count: 250) + "…")
        #expect(digest.unicodeScalars.count <= TextHygiene.maxDigestCodePoints)
        #expect(TextHygiene.digest("short") == "short")
    }

    @Test func jsonKeepsItsValueWithUnsafeCodePointsEscaped() {
        let json = Array("{\"a\":\"x\u{9B}y\u{202E}z\u{2028}\",\n\"b\":1}".utf8)
        #expect(String(decoding: TextHygiene.escapingUnsafe(json: json), as: UTF8.self) == "{\"a\":\"x\\u009by\\u202ez\\u2028\",\n\"b\":1}")
    }
}
