import Foundation
import Missive
import MissiveRendering
import MissiveTestSupport
import Testing

/// The terminal renderer, measuring, layout options and decorations, on the sample conversation decoded
/// through the real sample plugins.
@Suite struct TerminalRenderingTests {
    static func sampleMessages() throws -> [Message] {
        let registry = try Fixtures.sampleRegistry()
        return try Fixtures.conversationLines().map { line throws(MissiveError) in try registry.decode(line: line) }
    }

    /// The text with SGR colour sequences removed.
    static func stripColors(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "\u{1B}" else {
                out.append(scalar)
                continue
            }
            // ESC [ parameters m
            while let next = scalars.next(), next != "m" {}
        }
        return String(out)
    }

    // MARK: Golden output

    /// The whole conversation at 80 columns, without colours, as a person reads it, with each message's actions
    /// as `missive render` shows them. To accept a deliberate change, run the tests with MISSIVE_UPDATE_GOLDEN=1
    /// and review the diff of the file.
    @Test func theSampleConversationMatchesItsGoldenDrawing() throws {
        let registry = try Fixtures.sampleRegistry()
        let messages = try Fixtures.conversationLines().map { line throws(MissiveError) in try registry.decode(line: line) }
        let transcript = Transcript(messages: messages, currentUserID: "alice", actions: registry.actions(for:))
        let drawn = TerminalRenderer(width: 80, colors: false).render(transcript)
        let path = Fixtures.repositoryRoot + "/Tests/Golden/conversation-80.txt"
        if ProcessInfo.processInfo.environment["MISSIVE_UPDATE_GOLDEN"] == "1" {
            try drawn.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOfFile: path, encoding: .utf8)
        let drawnLines = drawn.split(separator: "\n", omittingEmptySubsequences: false)
        let goldenLines = golden.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, (line, expected)) in zip(drawnLines, goldenLines).enumerated() where line != expected {
            Issue.record("line \(index + 1) differs:\n  drawn:  \(line)\n  golden: \(expected)")
            break
        }
        #expect(drawnLines.count == goldenLines.count)
    }

    // MARK: Measuring

    /// The size a view measures at equals what the renderer draws, colours stripped, at many widths: for
    /// every drawn message of the sample conversation, and for a bubble around it.
    @Test func everySampleViewMeasuresExactlyAsItIsDrawn() throws {
        let transcript = Transcript(messages: try Self.sampleMessages())
        let renderer = TerminalRenderer(width: 80, colors: true)
        var measured = 0
        for row in transcript.rows {
            guard case .message(let item) = row, case .view(let view) = item.body else { continue }
            for width in [8, 13, 20, 31, 48, 76] {
                let size = TerminalRenderer.measure(view, maxWidth: width)
                let lines = Self.stripColors(renderer.render(view, maxWidth: width)).split(separator: "\n", omittingEmptySubsequences: false)
                #expect(size.rows == lines.count, "\(item.message.envelope.id) at \(width)")
                #expect(size.columns == lines.map { TerminalWidth.of($0) }.max(), "\(item.message.envelope.id) at \(width)")
                #expect(size.columns <= width, "\(item.message.envelope.id) is wider than \(width)")
                measured += 1
            }
            // The message as the transcript draws it: every line within the terminal's width.
            for line in renderer.block(for: item).lines { #expect(line.columns <= renderer.width) }
        }
        #expect(measured >= 6 * 20)
    }

    @Test func cellWidthsFollowTheTerminalRules() {
        #expect(TerminalWidth.of("abc") == 3)
        #expect(TerminalWidth.of("寿司") == 4)
        #expect(TerminalWidth.of("ｱ") == 1)  // halfwidth katakana
        #expect(TerminalWidth.of("Ａ") == 2)  // fullwidth Latin
        #expect(TerminalWidth.of("한국어") == 6)
        #expect(TerminalWidth.of("🍜") == 2)
        #expect(TerminalWidth.of("👍🏽") == 2)  // with a skin tone modifier: one character
        #expect(TerminalWidth.of("👨‍👩‍👧") == 2)  // a ZWJ family
        #expect(TerminalWidth.of("🇯🇵") == 2)
        #expect(TerminalWidth.of("❤️") == 2)  // text-default emoji with VS16
        #expect(TerminalWidth.of("❤") == 1)
        #expect(TerminalWidth.of("e\u{301}") == 1)  // combining acute: zero
        #expect(TerminalWidth.of("\u{301}") == 0)
        #expect(TerminalWidth.of("a\u{200B}b") == 2)
        #expect(TerminalWidth.of("★×─") == 3)  // ambiguous width counts as one
    }

    @Test func wrappingKeepsWordsAndCharactersWhole() {
        let lines = TerminalText.wrap([TerminalText.Run("寿司が大好き and supercalifragilistic")], width: 7)
        #expect(lines.map(\.plainText) == ["寿司が", "大好き", "and", "superca", "lifragi", "listic"])
        #expect(lines.allSatisfy { $0.columns <= 7 })
        let cut = TerminalText.wrap([TerminalText.Run("one two three four five")], width: 9, maxLines: 2)
        #expect(cut.map(\.plainText) == ["one two", "three…"])
    }

    @Test func measuringIsTheSameFromEightThreads() async throws {
        let views = Transcript(messages: try Self.sampleMessages()).rows.compactMap { row -> ViewElement? in
            guard case .message(let item) = row, case .view(let view) = item.body else { return nil }
            return view
        }
        let expected = views.map { TerminalRenderer.measure($0, maxWidth: 40) }
        let results = await withTaskGroup(of: [TerminalSize].self) { group in
            for _ in 0..<8 { group.addTask { views.map { TerminalRenderer.measure($0, maxWidth: 40) } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        for result in results { #expect(result == expected) }
    }

    // MARK: Layout options and decorations

    static func envelope(_ id: String, from sender: String, at seconds: Int64, parent: String? = nil, text: String = "hi") -> Envelope {
        Envelope(
            id: id, conversationID: "c", senderID: sender, sentAt: seconds * 1000, objectName: "MS:Text",
            content: Array("{\"content\":\"\(text)\"}".utf8), parentID: parent)
    }

    @Test func consecutiveMessagesOfOneSenderWithinAMinuteFormAGroup() {
        let registry = MessageRegistry.Builder().build()
        let base: Int64 = 1_767_225_600  // 2026-01-01 00:00 UTC
        let messages = [
            Self.envelope("a1", from: "ann", at: base),
            Self.envelope("a2", from: "ann", at: base + 30),
            Self.envelope("a3", from: "ann", at: base + 90),  // 60 s after a2: still grouped
            Self.envelope("a4", from: "ann", at: base + 151),  // 61 s: a new group
            Self.envelope("b1", from: "me", at: base + 160),
            Self.envelope("b2", from: "me", at: base + 170),
        ].map(registry.decode)
        let transcript = Transcript(messages: messages, currentUserID: "me")
        let options = transcript.rows.compactMap { row -> MessageLayoutOptions? in
            if case .message(let item) = row { return item.options }
            return nil
        }
        #expect(options.count == 6)
        #expect(options[0].contains(.authorName) && !options[0].contains(.avatar) && options[0].contains(.continuation))
        #expect(!options[1].contains(.authorName) && !options[1].contains(.timestamp))
        #expect(options[2].contains(.avatar) && options[2].contains(.timestamp) && !options[2].contains(.authorName))
        #expect(options[3].contains(.authorName) && options[3].contains(.avatar))
        // The current user's own messages: flipped, no name, no avatar, a timestamp on the last.
        #expect(options[4].contains(.flipped) && !options[4].contains(.authorName) && !options[4].contains(.timestamp))
        #expect(options[5].contains(.flipped) && options[5].contains(.timestamp) && !options[5].contains(.avatar))
        #expect(options.allSatisfy { $0.contains(.bubble) })
    }

    @Test func messagesAreDrawnInTheOrderSentAndEachIdOnce() {
        let registry = MessageRegistry.Builder().build()
        let base: Int64 = 1_767_225_600
        let messages = [
            Self.envelope("late", from: "ann", at: base + 86_400),
            Self.envelope("early", from: "bob", at: base),
            Self.envelope("same-a", from: "bob", at: base + 10),
            Self.envelope("same-b", from: "ann", at: base + 10),
            Self.envelope("early", from: "bob", at: base),  // received twice
        ].map(registry.decode)
        let transcript = Transcript(messages: messages)
        let order = transcript.rows.compactMap { row -> String? in
            if case .message(let item) = row { return item.message.envelope.id }
            return nil
        }
        #expect(order == ["early", "same-a", "same-b", "late"])

        // A message given again with new content (an action's edit appended after it) is drawn as the last
        // version, in the place of the first.
        var edited = Self.envelope("early", from: "bob", at: base)
        edited.content = Array(#"{"content":"edited"}"#.utf8)
        let replaced = Transcript(messages: messages + [registry.decode(edited)])
        guard case .message(let first) = replaced.rows[1] else { Issue.record("no message"); return }
        #expect(first.message.envelope.id == "early" && first.message.digest == "edited")
        #expect(replaced.rows.count == transcript.rows.count)
        #expect(transcript.rows.filter { if case .dateSeparator = $0 { true } else { false } }.count == 2)
        #expect(TerminalRenderer(width: 40).render(Transcript(messages: [])) == TerminalRenderer.emptyText + "\n")

        // Ids are compared as bytes: two ids that Swift's String calls equal (é precomposed, and e with a
        // combining accent) are two messages.
        let accents = Transcript(messages: [Self.envelope("\u{E9}", from: "ann", at: base), Self.envelope("e\u{301}", from: "bob", at: base + 1)].map(registry.decode))
        #expect(accents.rows.filter { if case .message = $0 { true } else { false } }.count == 2)
    }

    @Test func dateSeparatorsFollowTheTimeZoneAndBreakGroups() throws {
        let registry = MessageRegistry.Builder().build()
        // 23:59:40 and 00:00:10 UTC: one day in Tokyo (08:59 and 09:00), two in UTC.
        let messages = [Self.envelope("x1", from: "ann", at: 1_767_225_580), Self.envelope("x2", from: "ann", at: 1_767_225_610)].map(registry.decode)
        func separators(_ transcript: Transcript) -> [String] {
            transcript.rows.compactMap { if case .dateSeparator(let title) = $0 { return title } else { return nil } }
        }
        let utc = Transcript(messages: messages)
        #expect(separators(utc) == ["Wednesday, 31 December 2025", "Thursday, 1 January 2026"])
        let tokyo = Transcript(messages: messages, clock: TranscriptClock(timeZone: try #require(TimeZone(identifier: "Asia/Tokyo"))))
        #expect(separators(tokyo) == ["Thursday, 1 January 2026"])
        // Across midnight, the two are not grouped even within 60 s.
        guard case .message(let first) = utc.rows[1] else { Issue.record("no message"); return }
        #expect(first.options.contains(.avatar))
        guard case .message(let tokyoFirst) = tokyo.rows[1] else { Issue.record("no message"); return }
        #expect(tokyoFirst.options.contains(.continuation))
    }

    @Test func repliesShowTheirParentAndParentsCountTheirReplies() throws {
        let transcript = Transcript(messages: try Self.sampleMessages())
        var items: [String: TranscriptMessage] = [:]
        for row in transcript.rows { if case .message(let item) = row { items[item.message.envelope.id] = item } }
        // A poll with two replies in the transcript.
        let poll = try #require(items["m25"])
        #expect(poll.replyCount == 2 && poll.options.contains(.threadInfo))
        #expect(items["m27"]?.quote == .found(author: "alice", text: "[Poll] Lunch today?", media: nil))
        // A reply to a message this transcript lacks.
        #expect(items["m29"]?.quote == .notFound(parentID: "m00"))
        // A reply to a sticker previews the media.
        guard case .found(_, _, let media)? = items["m30"]?.quote else { Issue.record("no quote on m30"); return }
        #expect(media?.mimeType == "image/webp")
        // Status messages are not drawn.
        #expect(items["m04"] == nil && items["m31"] == nil)
        let drawn = TerminalRenderer(width: 80).render(transcript)
        #expect(drawn.contains("↳ 2 replies"))
        #expect(drawn.contains("┃ " + QuotedPreview.notFoundText))
    }

    @Test func unknownAndRefusedMessagesGetTheUnsupportedCard() throws {
        let transcript = Transcript(messages: try Self.sampleMessages())
        var cards: [String: UnsupportedCard] = [:]
        for row in transcript.rows {
            if case .message(let item) = row, case .unsupported(let card) = item.body {
                cards[item.message.envelope.id] = card
                #expect(item.options.contains(.unsupported))
            }
        }
        #expect(cards["m11"]?.title == "[Order] A-1042, 42.50 EUR")  // the sender's fallback text
        #expect(cards["m12"]?.title == UnsupportedCard.defaultTitle)
        #expect(cards["m12"]?.detail == "type acme:receipt is not installed")
        #expect(cards["m14"]?.detail.hasPrefix("demo:poll refused this content") == true)
        #expect(cards["m13"]?.detail.contains("businessID 'group_vote'") == true)
    }

    // MARK: Components

    @Test func replacingOneComponentChangesThatPartOnly() throws {
        let transcript = Transcript(messages: try Self.sampleMessages(), currentUserID: "alice")
        var components = TerminalComponents.standard
        components.dateSeparator = { title, _ in TerminalBlock([TerminalLine("=== \(title) ===")]) }
        let standard = TerminalRenderer(width: 80).render(transcript).split(separator: "\n", omittingEmptySubsequences: false)
        let replaced = TerminalRenderer(width: 80, components: components).render(transcript).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(standard.count == replaced.count)
        let differing = zip(standard, replaced).filter { $0 != $1 }
        #expect(differing.count == 2)
        #expect(differing.allSatisfy { $0.1.hasPrefix("=== ") && $0.0.contains("───") })

        // An element kind: badges drawn another way, inside stacks too.
        var badges = TerminalComponents.standard
        badges.elements[.badge] = { element, _, _ in
            guard case .badge(let badge) = element else { return TerminalBlock() }
            return TerminalBlock([TerminalLine("<<\(badge.text)>>")])
        }
        let notice = TerminalRenderer(width: 80, components: badges).render(transcript)
        #expect(notice.contains("<<notice>>") && !notice.contains("[notice]"))
    }

    // MARK: Text hygiene and colours

    @Test func colorsOnlyOnATerminalWithoutNoColor() throws {
        #expect(!TerminalRenderer.colorsSuitStandardOutput(environment: ["NO_COLOR": "1"]))
        #expect(!TerminalRenderer.colorsSuitStandardOutput(environment: ["TERM": "dumb"]))
        let transcript = Transcript(messages: try Self.sampleMessages())
        let plain = TerminalRenderer(width: 80, colors: false).render(transcript)
        #expect(!plain.unicodeScalars.contains { TextHygiene.isUnsafe($0) && $0 != "\n" })
        let colored = TerminalRenderer(width: 80, colors: true).render(transcript)
        #expect(colored.contains("\u{1B}["))
        // Its only escape sequences are SGR colours: with them removed, the plain drawing.
        #expect(Self.stripColors(colored) == plain)
    }

    /// Every link URL in a tree.
    static func links(_ element: ViewElement) -> [String] {
        switch element {
        case .link(let link): [link.url]
        case .stack(let stack): stack.children.flatMap(links)
        default: []
        }
    }

    @Test func theHostileMessagesStayInert() throws {
        let transcript = Transcript(messages: try Self.sampleMessages())
        for row in transcript.rows {
            guard case .message(let item) = row, case .view(let view) = item.body else { continue }
            #expect(Self.links(view).allSatisfy { $0.hasPrefix("https://") || $0.hasPrefix("http://") }, "\(item.message.envelope.id)")
        }
        let drawn = TerminalRenderer(width: 80).render(transcript)
        // m23's javascript: link is drawn as its text only.
        #expect(drawn.contains("prize now\n") || drawn.contains("prize now "))
        #expect(!drawn.contains("<javascript:"))
        #expect(!drawn.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) })
    }
}
