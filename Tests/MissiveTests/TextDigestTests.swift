import Missive
import Testing

/// The host's side of text hygiene: the built-in text message's digest and the header's limit.
@Suite struct TextDigestTests {
    /// A text message's digest folds every kind of line break into a space, and leaves text without one as it is.
    @Test(arguments: ["\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}"])
    func aTextDigestFoldsEveryLineBreak(lineBreak: String) {
        #expect(TextMessage(content: "one\(lineBreak)two").digest == "one two")
        #expect(TextMessage(content: "héllo — 链接 \u{2026}").digest == "héllo — 链接 \u{2026}")
    }

    @Test func theCleanersLimitIsTheHeaders() {
        // The cleaner's limit is the header's (MISSIVE_TEXT_MAX_CODE_POINTS, which the checker uses).
        #expect(TextHygiene.maxDigestCodePoints == DisplayText.maxCodePoints)
    }
}
