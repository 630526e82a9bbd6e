import Foundation
import Missive
import MissiveRendering
import MissiveTestSupport
import Testing

/// The HTML renderer: escaping, URLs, the page's self-containment, the component registry, the size
/// estimate, and the sample conversation drawn by a real headless Chromium.
@Suite("HTML rendering")
struct HTMLRenderingTests {
    // MARK: Escaping

    @Test func escapingCoversTextAndAttributes() {
        #expect(
            HTMLEscaping.escape(#"<a href="x" onclick='y()'>&amp;</a>"#)
                == "&lt;a href=&quot;x&quot; onclick=&#39;y()&#39;&gt;&amp;amp;&lt;/a&gt;")
        // Everything else is kept as it is, line breaks and tabs included.
        let plain = "Grüße, 寿司 👍🏽\n\tcafé é"
        #expect(HTMLEscaping.escape(plain) == plain)
        // What cleaned text never holds becomes U+FFFD: escape sequences cannot reach the page whole.
        #expect(HTMLEscaping.escape("a\u{1B}[2Jb\u{202E}c\u{0}d\u{85}") == "a\u{FFFD}[2Jb\u{FFFD}c\u{FFFD}d\u{FFFD}")
        #expect(HTMLEscaping.attribute("title", #"" onmouseover="x"#) == #" title="&quot; onmouseover=&quot;x""#)
    }

    @Test func everySenderStringIsEscaped() throws {
        let hostile = #"<script>alert(1)</script>"' onmouseover="alert(2)" <img src=x>"#
        let view = ViewElement.vstack(spacing: 1) {
            ViewElement.text(hostile, role: .title)
            ViewElement.text(hostile, role: .code, maxLines: 2)
            ViewElement.link(hostile, url: "https://example.com/?q=1&r=2")
            ViewElement.image(url: "https://example.com/a.png", width: 10, height: 10, alt: hostile)
            ViewElement.facts([hostile: hostile])
            ViewElement.progress(hostile, fraction: 0.5, detail: hostile)
            ViewElement.button(hostile, action: hostile, arguments: hostile)
            ViewElement.badge(hostile, tone: .danger)
        }
        let html = HTMLRenderer().render(view)
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("\" onmouseover"))
        #expect(!html.contains("' onmouseover"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39; onmouseover=&quot;alert(2)&quot; &lt;img src=x&gt;"))
        #expect(html.contains(#"href="https://example.com/?q=1&amp;r=2""#))

        // Ids, sender names and fallback texts of messages too.
        let registry = MessageRegistry.Builder().build()
        let envelopes = [
            Envelope(
                id: #"x" onclick="alert(1)"#, conversationID: "c", senderID: "<b>eve</b>", sentAt: 1_767_225_600_000, objectName: "MS:Text",
                content: Array(#"{"content":"<script>alert(1)</script>"}"#.utf8)),
            Envelope(
                id: "y", conversationID: "c", senderID: "<b>eve</b>", sentAt: 1_767_225_610_000, objectName: "x:<i>unknown</i>",
                content: Array("{}".utf8), parentID: "<parent>", fallbackText: "<style>body{display:none}</style>"),
        ]
        let transcript = Transcript(messages: envelopes.map(registry.decode), authorName: { "\($0) & <u>co</u>" })
        let page = HTMLRenderer(title: "</title><script>alert(1)</script>").render(transcript)
        #expect(!page.contains("<script"))
        #expect(!page.contains("<b>"))
        #expect(!page.contains("<i>"))
        #expect(!page.contains("<u>"))
        #expect(!page.contains("<parent>"))
        #expect(!page.contains("<style>body"))
        #expect(!page.contains(#"" onclick"#))
        #expect(page.contains(#"data-id="x&quot; onclick=&quot;alert(1)""#))
        #expect(page.contains("<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>"))
        #expect(page.contains("&lt;b&gt;eve&lt;/b&gt; &amp; &lt;u&gt;co&lt;/u&gt;"))
    }

    // MARK: URLs

    @Test(arguments: [
        "javascript:alert(1)", "JavaScript:alert(document.domain)", " javascript:alert(1)", "java\nscript:alert(1)",
        "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)", "file:///etc/passwd", "//evil.example/x",
        #"https://example.com/"onmouseover="alert(1)"#, "https://example.com/<script>",
    ])
    func aURLThatIsNotHTTPNeverBecomesAnHref(_ url: String) {
        let renderer = HTMLRenderer()
        // Built by hand: these trees never went through ViewSanitizer.
        let link = renderer.render(.link(ViewLink("click me", url: url)))
        #expect(!link.contains("href"))
        #expect(link.contains("click me"))
        #expect(link.contains("el-link-blocked"))
        let image = renderer.render(.image(ViewImage(url: url, width: 4, height: 3, alt: "a photo")))
        #expect(!image.contains("href"))
        #expect(image.contains("a photo"))
        #expect(!image.contains("src="))
        let nested = renderer.render(.vstack { ViewElement.link(url, url: url) })
        #expect(!nested.contains("href"))
    }

    @Test func anHTTPLinkIsAPlainLink() {
        let html = HTMLRenderer().render(.link("Menu", url: "https://example.com/menu?a=1&b=2"))
        #expect(html == #"<a class="el-link" href="https://example.com/menu?a=1&amp;b=2" rel="noopener noreferrer nofollow" referrerpolicy="no-referrer" dir="auto">Menu</a>"#)
    }

    // MARK: Elements

    /// For a page whose policy forbids inline styles, a progress bar is the same markup with its width as a class
    /// that the components' stylesheet defines, and no `style` attribute anywhere.
    @Test func withoutInlineStylesAProgressWidthIsAClassItsStylesheetDefines() {
        let strict = HTMLRenderer(components: .withoutInlineStyles)
        let standard = HTMLRenderer()
        for fraction in [0, 0.375, 0.6, 1, 7] {
            let element = ViewElement.progress("Sushi", fraction: fraction, detail: "3 votes")
            let drawn = strict.render(element)
            let value = min(100, Int((min(fraction, 1) * 100).rounded()))
            #expect(!drawn.contains("style="), "\(drawn)")
            #expect(drawn == standard.render(element).replacingOccurrences(of: #"" style="width: \#(value)%""#, with: " pct-\(value)\""), "\(drawn)")
            #expect(HTMLComponents.withoutInlineStyles.stylesheet.contains(".el-progress-fill.pct-\(value) { width: \(value)%; }"))
        }
        #expect(HTMLComponents.withoutInlineStyles.stylesheet.hasPrefix(HTMLComponents.standard.stylesheet))
    }

    @Test func elementsHaveTheirClassesAndAccessibleMarkup() {
        let renderer = HTMLRenderer()
        let progress = renderer.render(.progress("Sushi", fraction: 0.6, detail: "3 votes"))
        #expect(progress.contains(#"role="progressbar""#))
        #expect(progress.contains(#"aria-valuenow="60""#))
        #expect(progress.contains(#"aria-label="Sushi""#))
        #expect(progress.contains("60%"))
        #expect(progress.contains("3 votes"))
        // A fraction outside 0...1 (an unsanitized tree) is clamped.
        #expect(renderer.render(.progress("x", fraction: 7)).contains(#"aria-valuenow="100""#))
        #expect(renderer.render(.progress("x", fraction: .nan)).contains(#"aria-valuenow="0""#))

        let button = renderer.render(.button("Vote", action: "vote", arguments: "[1]"))
        #expect(button == #"<button type="button" class="el-button" disabled data-action="vote" data-arguments="[1]" dir="auto">Vote</button>"#)

        let image = renderer.render(.image(url: "https://example.com/p.jpg", width: 1024, height: 768, alt: "Sushi"))
        #expect(image.contains(#"class="el-image""#))
        #expect(image.contains("aspect-ratio: 1024 / 768"))
        #expect(image.contains(#"aria-label="Sushi""#))
        #expect(image.contains(#"href="https://example.com/p.jpg""#))
        #expect(!image.contains("src="))
        #expect(!image.contains("<img"))

        // Code keeps its first line break: the parser drops the one written right after `<pre>`.
        #expect(renderer.render(.text("\nfn main()", role: .code)) == "<pre class=\"el-text el-text-code\">\n\nfn main()</pre>")
        #expect(renderer.render(.text("Hi", emphasis: .strong, maxLines: 2)).contains("el-strong el-clamp"))
        #expect(renderer.render(.divider) == #"<hr class="el-divider">"#)
        #expect(renderer.render(.badge("new", tone: .success)).contains("el-badge el-badge-success"))
        #expect(renderer.render(.hstack(spacing: 20) { ViewElement.badge("a") }).contains("el-stack-horizontal el-gap-8"))
    }

    // MARK: The page

    @Test func thePageIsSelfContained() throws {
        let transcript = try Self.sampleTranscript()
        let page = HTMLRenderer(title: "Team").render(transcript)
        let head = try #require(page.components(separatedBy: "</head>").first)
        #expect(page.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"))
        #expect(
            head.contains(
                #"<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">"#
            ))
        #expect(head.contains("<title>Team</title>"))
        // Escaped text never holds `<`: these would be elements.
        let lower = page.lowercased()
        for tag in ["<script", "<img", "<link", "<iframe", "<object", "<embed", "<base", "<form", "<svg", "<video", "<audio", "<source"] {
            #expect(!lower.contains(tag), "the page contains \(tag)")
        }
        #expect(lower.components(separatedBy: "<style").count == 2, "exactly one style element")
        // No attribute loads, submits or runs anything.
        let nodes = DOM.parse(page).descendants
        for node in nodes {
            for name in node.attributes.keys {
                #expect(!["src", "srcset", "poster", "data", "action", "formaction", "background", "ping", "srcdoc"].contains(name), "\(node.name) has \(name)")
                #expect(!name.hasPrefix("on"), "\(node.name) has \(name)")
            }
        }
        #expect(nodes.filter { $0.name == "meta" }.first?.attributes["charset"] == "utf-8")
        // The stylesheet loads nothing either.
        let css = nodes.first { $0.name == "style" }?.textContent.lowercased() ?? ""
        #expect(css.contains(".msg"))
        for loading in ["@import", "url(", "@font-face", "image-set("] { #expect(!css.contains(loading), "the stylesheet has \(loading)") }
        // Every message and every separator is there.
        for row in transcript.rows {
            switch row {
            case .dateSeparator(let title): #expect(page.contains(HTMLEscaping.escape(title)))
            case .message(let item): #expect(page.contains("data-id=\"\(HTMLEscaping.escape(item.message.envelope.id))\""))
            }
        }
        #expect(page.contains(QuotedPreview.notFoundText))
        #expect(page.contains("@media (prefers-color-scheme: dark)"))
        // A stylesheet of the app's cannot close the style element.
        var components = HTMLComponents.standard
        components.stylesheet = "</style><script>alert(1)</script>"
        #expect(!HTMLRenderer(components: components).render(transcript).contains("</style><script>"))
    }

    @Test func replacingOneComponentChangesThatPartOnly() throws {
        let transcript = try Self.sampleTranscript()
        let standard = HTMLRenderer(title: "T").render(transcript)
        var components = HTMLComponents.standard
        components.dateSeparator = { title in "<h2 class=\"date-separator custom\">=== " + HTMLEscaping.escape(title) + " ===</h2>" }
        let custom = HTMLRenderer(title: "T", components: components).render(transcript)
        let titles = transcript.rows.compactMap { row -> String? in
            if case .dateSeparator(let title) = row { return title }
            return nil
        }
        #expect(titles.count >= 2)
        #expect(custom != standard)
        // The standard page with each separator's markup swapped for the custom one is the custom page.
        var expected = standard
        for title in Set(titles) {
            expected = expected.replacingOccurrences(of: HTMLComponents.standard.dateSeparator(title), with: components.dateSeparator(title))
        }
        #expect(custom == expected)
        // Line by line: the lines that differ are the separators' lines.
        let differing = zip(standard.split(separator: "\n"), custom.split(separator: "\n")).filter { $0 != $1 }
        #expect(differing.count == titles.count)
        #expect(differing.allSatisfy { $0.1.contains("date-separator custom") })

        // The same for an element kind: only badges change.
        components = .standard
        components.elements[.badge] = { element, _ in
            guard case .badge(let badge) = element else { return "" }
            return "<mark>" + HTMLEscaping.escape(badge.text) + "</mark>"
        }
        let view = ViewElement.vstack { ViewElement.text("a"); ViewElement.badge("b"); ViewElement.text("c") }
        #expect(
            HTMLRenderer(components: components).render(view)
                == HTMLRenderer().render(view).replacingOccurrences(of: HTMLRenderer().render(.badge("b")), with: "<mark>b</mark>"))
    }

    // MARK: The estimate

    @Test func theEstimateFollowsTheFontModel() {
        let body = HTMLMetrics.body
        // 0.55 em per narrow character, 1 em per wide one, 20 px lines.
        #expect(Self.close(HTMLRenderer.estimate(.text("Hello"), maxWidth: 300), HTMLSize(width: 5 * 0.55 * body.size, height: body.lineHeight)))
        #expect(Self.close(HTMLRenderer.estimate(.text("寿司👍"), maxWidth: 300), HTMLSize(width: 3 * body.size, height: body.lineHeight)))
        #expect(Self.close(HTMLRenderer.estimate(.text("e\u{301}"), maxWidth: 300), HTMLSize(width: 0.55 * body.size, height: body.lineHeight)))
        // Line breaks are kept; a final one adds no line.
        #expect(HTMLRenderer.estimate(.text("a\nb\nc"), maxWidth: 300).height == 3 * body.lineHeight)
        #expect(HTMLRenderer.estimate(.text("a\n"), maxWidth: 300).height == body.lineHeight)
        #expect(HTMLRenderer.estimate(.text("x", role: .title), maxWidth: 300).height == HTMLMetrics.title.lineHeight)
        #expect(abs(HTMLRenderer.estimate(.text("x", role: .title), maxWidth: 300).width - 0.55 * 18 * HTMLMetrics.boldFactor) < 1e-9)
        #expect(abs(HTMLRenderer.estimate(.text("ab", role: .code), maxWidth: 300).width - 2 * 0.6 * 13) < 1e-9)
        // Wrapped text is as wide as the column; a line limit caps the height.
        let long = ViewElement.text(String(repeating: "word ", count: 60))
        #expect(HTMLRenderer.estimate(long, maxWidth: 200).width == 200)
        #expect(HTMLRenderer.estimate(.text(String(repeating: "word ", count: 60), maxLines: 3), maxWidth: 200).height == 3 * body.lineHeight)
        // Greedy wrapping at spaces: "aaaa bbbb" is 9 advances; at 5 advances it takes two lines.
        let advance = 0.55 * body.size
        #expect(HTMLRenderer.estimate(.text("aaaa bbbb"), maxWidth: 8.99 * advance).height == 2 * body.lineHeight)
        #expect(HTMLRenderer.estimate(.text("aaaa bbbb"), maxWidth: 9.01 * advance).height == body.lineHeight)
        // A word wider than the column breaks between characters.
        #expect(HTMLRenderer.estimate(.text(String(repeating: "a", count: 10)), maxWidth: 4.01 * advance).height == 3 * body.lineHeight)

        // Images: scaled to fit, at most 240 px tall at their natural size, 240 x 160 when unknown; a caption line.
        let caption = HTMLMetrics.imageCaptionGap + HTMLMetrics.caption.lineHeight
        #expect(HTMLRenderer.estimate(.image(url: "https://e.com/a.jpg", width: 1024, height: 768, alt: ""), maxWidth: 300) == HTMLSize(width: 300, height: 225 + caption))
        #expect(HTMLRenderer.estimate(.image(url: "https://e.com/a.jpg", width: 100, height: 50, alt: ""), maxWidth: 300) == HTMLSize(width: 100, height: 50 + caption))
        #expect(HTMLRenderer.estimate(.image(url: "https://e.com/a.jpg", alt: ""), maxWidth: 500) == HTMLSize(width: 240, height: 160 + caption))
        #expect(HTMLRenderer.estimate(.image(url: "https://e.com/a.jpg", width: 500, height: 1000, alt: ""), maxWidth: 500) == HTMLSize(width: 120, height: 240 + caption))

        // Stacks: 8 px per spacing unit; a horizontal stack wraps its children onto lines.
        let two = ViewElement.vstack(spacing: 2) { ViewElement.text("a"); ViewElement.text("b") }
        #expect(HTMLRenderer.estimate(two, maxWidth: 300).height == 2 * body.lineHeight + 16)
        let badges = ViewElement.hstack(spacing: 1) { for index in 0..<6 { ViewElement.badge("badge \(index)") } }
        let oneLine = HTMLRenderer.estimate(badges, maxWidth: 1000)
        let wrapped = HTMLRenderer.estimate(badges, maxWidth: 150)
        #expect(oneLine.height == 20)
        #expect(wrapped.height > oneLine.height)
        #expect(wrapped.width <= 150)
        #expect(HTMLRenderer.estimate(.button("Vote", action: "vote"), maxWidth: 300).height == 34)
        #expect(HTMLRenderer.estimate(.divider, maxWidth: 300).height == 9)
        #expect(HTMLRenderer.estimate(.progress("", fraction: 0.5), maxWidth: 300).height == HTMLMetrics.caption.lineHeight)
        #expect(HTMLRenderer.estimate(.progress("Sushi", fraction: 0.5), maxWidth: 300).height == 20 + 4 + 18)
        // Nothing is wider than the column.
        for element in Self.estimateSamples { #expect(HTMLRenderer.estimate(element, maxWidth: 120).width <= 120) }
    }

    @Test func theEstimateGrowsWithText() {
        var previous = HTMLSize(width: 0, height: 0)
        var text = ""
        for count in 1...40 {
            text += count == 1 ? "lorem" : " ipsum"
            let size = HTMLRenderer.estimate(.text(text), maxWidth: 240)
            #expect(size.width >= previous.width)
            #expect(size.height >= previous.height)
            if size.height == HTMLMetrics.body.lineHeight { #expect(size.width > previous.width, "one line grows with each word") }
            previous = size
        }
        #expect(previous.height > 5 * HTMLMetrics.body.lineHeight)
        // In every kind that holds text.
        for make in [
            { (text: String) in ViewElement.link(text, url: "https://example.com") }, { ViewElement.facts([$0: $0]) },
            { ViewElement.progress($0, fraction: 0.5) }, { ViewElement.button($0, action: "a") }, { ViewElement.badge($0) },
        ] {
            let short = HTMLRenderer.estimate(make("ab cd"), maxWidth: 1000)
            let long = HTMLRenderer.estimate(make(String(repeating: "word ", count: 8) + "end"), maxWidth: 1000)
            #expect(short.width < long.width)
            #expect(short.height <= long.height)
        }
    }

    @Test func theEstimateIsDeterministicOnEightThreads() {
        let serial = Self.estimateSamples.map { HTMLRenderer.estimate($0, maxWidth: 333) }
        #expect(serial == Self.estimateSamples.map { HTMLRenderer.estimate($0, maxWidth: 333) })
        final class Results: Sendable { let sizes = Locked<[[HTMLSize]]>([]) }
        let results = Results()
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            let thread = Thread {
                var sizes: [HTMLSize] = []
                for _ in 0..<20 { sizes = Self.estimateSamples.map { HTMLRenderer.estimate($0, maxWidth: 333) } }
                results.sizes.withLock { $0.append(sizes) }
                group.leave()
            }
            thread.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let all = results.sizes.withLock { $0 }
        #expect(all.count == 8)
        #expect(all.allSatisfy { $0 == serial })
    }

    // MARK: A real browser

    /// The sample conversation drawn by headless Chromium: every message is in the DOM with its text, the
    /// quotes and separators are there, and the hostile messages did nothing.
    @Test(SanitizerRun.timeLimit(minutes: 3)) func chromiumDrawsTheSampleConversation() async throws {
        guard let chromium = Chromium.path() else {
            Issue.record(Chromium.missing)
            return
        }
        let lines = try Fixtures.conversationLines()
        #expect(lines.contains { $0.text.contains("javascript:") }, "the sample conversation has a javascript: URL")
        let transcript = try Self.sampleTranscript()
        let title = "Missive sample conversation"
        let page = HTMLRenderer(title: title).render(transcript)
        let folder = try Fixtures.temporaryDirectory()
        // The page and the browser's profile (a few MB); no plugin is loaded from here.
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/conversation.html"
        try Data(page.utf8).write(to: URL(fileURLWithPath: file))
        let url = URL(fileURLWithPath: file).absoluteString

        let dump = try await Chromium.run(chromium, ["--dump-dom", url], profile: folder + "/profile")
        try #require(dump.status == 0 && !dump.timedOut, "chromium --dump-dom failed (\(dump.status)): \(dump.stderr.suffix(2000))")
        let dom = DOM.parse(dump.stdout)
        let all = dom.descendants

        // Nothing ran and nothing could have: no script element, no javascript: link, no source, the same title.
        #expect(!dump.stdout.lowercased().contains("<script"))
        #expect(!all.contains { $0.name == "script" })
        #expect(!all.contains { $0.attributes["src"] != nil })
        let hrefs = all.compactMap { $0.attributes["href"] }
        #expect(!hrefs.isEmpty)
        for href in hrefs {
            let lower = href.trimmingCharacters(in: .whitespaces).lowercased()
            #expect(!lower.hasPrefix("javascript:"), "href \(href)")
            #expect(lower.hasPrefix("https://") || lower.hasPrefix("http://"), "href \(href)")
        }
        #expect(all.first { $0.name == "title" }?.textContent == title)

        // Every drawn message, with its text.
        let articles = all.filter { $0.name == "article" && $0.attributes["data-id"] != nil }
        let items = transcript.rows.compactMap { row -> TranscriptMessage? in
            if case .message(let item) = row { return item }
            return nil
        }
        #expect(articles.count == items.count)
        var drawnScript = false
        for item in items {
            let id = Self.attributeValue(item.message.envelope.id)
            let matches = articles.filter { $0.attributes["data-id"] == id }
            guard let article = matches.first else {
                Issue.record("message \(id) is not in the DOM")
                continue
            }
            let text = Self.normalized(article.textContent)
            let expected: String?
            switch item.body {
            case .view(let view): expected = Self.firstText(of: view)
            case .unsupported(let card):
                expected = card.title
                #expect(article.classes.contains("msg-unsupported"))
                #expect(article.descendants.contains { $0.classes.contains("unsupported") })
            }
            if let expected {
                #expect(text.contains(Self.normalized(expected)), "message \(id) should show \(expected), shows \(text)")
                if expected.contains("<script") { drawnScript = true }
            }
            #expect(article.classes.contains("msg-flipped") == item.options.contains(.flipped))
            let quotes = article.descendants.filter { $0.name == "blockquote" && $0.classes.contains("quote") }
            if item.options.contains(.quotedMessage), let quote = item.quote {
                #expect(quotes.count == 1, "message \(id) should have a quote")
                switch quote {
                case .found(let author, _, _):
                    #expect(quotes.first.map { Self.normalized($0.textContent).contains(Self.normalized(author)) } == true)
                case .notFound:
                    #expect(quotes.first?.classes.contains("quote-missing") == true)
                    #expect(quotes.first.map { $0.textContent.contains(QuotedPreview.notFoundText) } == true)
                }
            } else {
                #expect(quotes.isEmpty, "message \(id) has no quote")
            }
            if item.options.contains(.threadInfo) && item.replyCount > 0 {
                let counter = article.descendants.first { $0.classes.contains("thread-info") }
                #expect(counter.map { $0.textContent.contains(item.replyCount == 1 ? "1 reply" : "\(item.replyCount) replies") } == true)
            }
        }
        #expect(drawnScript, "a message shows <script> as text")

        // Quotes and separators: as many as the transcript has, in order.
        let quoted = items.filter { $0.options.contains(.quotedMessage) && $0.quote != nil }
        #expect(all.filter { $0.name == "blockquote" && $0.classes.contains("quote") }.count == quoted.count)
        let missing = quoted.filter { if case .notFound = $0.quote { true } else { false } }
        #expect(quoted.count > missing.count && !missing.isEmpty, "a reply with its parent and one without")
        #expect(all.filter { $0.classes.contains("quote-missing") }.count == missing.count)
        let separators = transcript.rows.compactMap { row -> String? in
            if case .dateSeparator(let title) = row { return title }
            return nil
        }
        #expect(separators.count >= 2)
        #expect(all.filter { $0.classes.contains("date-separator") }.map { Self.normalized($0.textContent) } == separators.map(Self.normalized))
        #expect(items.contains { !$0.message.isKnown })

        // A screenshot, to look at.
        let screenshots = Fixtures.repositoryRoot + "/.build/render-screenshots"
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        let png = screenshots + "/conversation.png"
        try? FileManager.default.removeItem(atPath: png)
        let shot = try await Chromium.run(chromium, ["--screenshot=\(png)", "--window-size=900,2400", url], profile: folder + "/profile")
        try #require(shot.status == 0 && !shot.timedOut, "chromium --screenshot failed (\(shot.status)): \(shot.stderr.suffix(2000))")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: png)))
        #expect(bytes.count > 10_000)
        #expect(bytes.prefix(8).elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "a PNG signature")
        // The IHDR chunk: the image is the window's size.
        if bytes.count > 24 {
            let width = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
            #expect(width == 900 && height == 2400, "\(width)x\(height)")
        }
    }

    /// The estimate against Chromium's layout of the same fragments with the same stylesheet: heights of
    /// elements that do not wrap are exact, and every size is close.
    @Test(SanitizerRun.timeLimit(minutes: 3)) func theEstimateAgreesWithChromium() async throws {
        guard let chromium = Chromium.path() else {
            Issue.record(Chromium.missing)
            return
        }
        struct Probe {
            let element: ViewElement
            let width: Double
            /// Whether the model's line breaks may differ from the font's: the height may differ by a line.
            let wraps: Bool
            /// Whether the width is compared: not for text that needs fonts a minimal machine lacks (Debian's
            /// chromium brings no CJK or emoji font, and draws such characters as narrow boxes).
            var checksWidth = true
        }
        let words = "The quick brown fox jumps over the lazy dog near the river bank"
        let probes: [Probe] = [
            Probe(element: .text("Morning! Lunch plans?"), width: 400, wraps: false),
            Probe(element: .text("Where to?", role: .title), width: 400, wraps: false),
            Probe(element: .text("0 votes", role: .caption), width: 400, wraps: false),
            Probe(element: .text("let x = 1\nlet y = 2", role: .code), width: 400, wraps: false),
            Probe(element: .text("寿司が大好き"), width: 400, wraps: false, checksWidth: false),
            Probe(element: .text(words + " " + words), width: 240, wraps: true),
            Probe(element: .text(words + " " + words, maxLines: 2), width: 240, wraps: false),
            Probe(element: .link("View details", url: "https://example.com"), width: 400, wraps: false),
            Probe(element: .image(url: "https://e.com/a.jpg", width: 1024, height: 768, alt: "Sushi"), width: 300, wraps: false),
            Probe(element: .image(url: "https://e.com/a.jpg", alt: "Unknown size"), width: 400, wraps: false),
            Probe(element: .vstack(spacing: 1) { ViewElement.text("Title", role: .title); ViewElement.divider; ViewElement.text("Body text") }, width: 400, wraps: false),
            Probe(element: .hstack(spacing: 1) { ViewElement.badge("notice", tone: .info); ViewElement.badge("ok", tone: .success) }, width: 400, wraps: false),
            Probe(element: .facts(["Type": "application/pdf", "Size": "51.1 KB"]), width: 400, wraps: false),
            Probe(element: .progress("Sushi", fraction: 0.6, detail: "3 votes"), width: 400, wraps: false),
            Probe(element: .button("Vote", action: "vote"), width: 400, wraps: false),
            Probe(element: .hstack(spacing: 2) { ViewElement.progress("Pizza", fraction: 0, detail: "0 votes"); ViewElement.button("Vote", action: "vote") }, width: 400, wraps: false),
        ]
        let renderer = HTMLRenderer()
        var body = ""
        for (index, probe) in probes.enumerated() {
            body += "<div class=\"msg-content\" id=\"probe\(index)\" style=\"width: \(probe.width)px\">" + renderer.render(probe.element) + "</div>\n"
        }
        // The probe page is the test's own: it runs a script to write each fragment's size into the DOM.
        let page = """
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>probe</title><style>\(HTMLStylesheet.standard)</style></head>
            <body>\(body)<script>
            for (const probe of document.querySelectorAll('.msg-content')) {
              const rect = probe.firstElementChild.getBoundingClientRect();
              probe.setAttribute('data-size', rect.width + 'x' + rect.height);
            }
            </script></body></html>
            """
        let folder = try Fixtures.temporaryDirectory()
        // The page and the browser's profile (a few MB); no plugin is loaded from here.
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/probe.html"
        try Data(page.utf8).write(to: URL(fileURLWithPath: file))
        let dump = try await Chromium.run(chromium, ["--dump-dom", URL(fileURLWithPath: file).absoluteString], profile: folder + "/profile")
        try #require(dump.status == 0 && !dump.timedOut, "chromium --dump-dom failed (\(dump.status)): \(dump.stderr.suffix(2000))")
        let measured = Dictionary(
            DOM.parse(dump.stdout).descendants.compactMap { node -> (String, String)? in
                guard let id = node.attributes["id"], let size = node.attributes["data-size"] else { return nil }
                return (id, size)
            }, uniquingKeysWith: { first, _ in first })
        for (index, probe) in probes.enumerated() {
            let estimate = HTMLRenderer.estimate(probe.element, maxWidth: probe.width)
            let parts = measured["probe\(index)"]?.split(separator: "x").compactMap { Double($0) } ?? []
            guard parts.count == 2 else {
                Issue.record("probe \(index) was not measured")
                continue
            }
            let (width, height) = (parts[0], parts[1])
            let line = HTMLMetrics.body.lineHeight
            if probe.wraps {
                #expect(abs(height - estimate.height) <= line, "probe \(index): height \(height), estimated \(estimate.height)")
            } else {
                #expect(abs(height - estimate.height) < 1, "probe \(index): height \(height), estimated \(estimate.height)")
            }
            // Widths: the model's average advances against real glyphs. It errs wide: at most 10% (or 4 px)
            // narrower than the real text, at most 35% wider.
            guard probe.checksWidth else { continue }
            #expect(estimate.width >= min(0.9 * width, width - 4), "probe \(index): width \(width), estimated \(estimate.width)")
            #expect(estimate.width <= 1.35 * width + 4, "probe \(index): width \(width), estimated \(estimate.width)")
        }
    }

    // MARK: Helpers

    /// Elements of every kind, for the estimate tests.
    static let estimateSamples: [ViewElement] = [
        .text("Hello, world"), .text(String(repeating: "long text ", count: 40), maxLines: 4), .text("寿司 and 🍣", role: .title),
        .text("let x = 1\nlet y = 2", role: .code), .link("View details", url: "https://example.com"),
        .image(url: "https://example.com/a.jpg", width: 1024, height: 768, alt: "a"), .image(url: "https://example.com/a.jpg", alt: "b"),
        .facts(["Type": "application/pdf", "Size": "51.1 KB with a long value that wraps onto a second line"]),
        .progress("Sushi", fraction: 0.6, detail: "3 votes"), .button("Vote", action: "vote"), .divider, .badge("notice", tone: .info),
        .vstack(spacing: 1) {
            ViewElement.text("Where to?", role: .title)
            for option in ["Pizza", "Sushi", "Salad"] {
                ViewElement.hstack(spacing: 2) { ViewElement.progress(option, fraction: 0.3); ViewElement.button("Vote", action: "vote") }
            }
            ViewElement.divider
        },
    ]

    /// The sample conversation decoded through the real sample plugins and laid out, the first sender being
    /// the current user.
    static func sampleTranscript() throws -> Transcript {
        let registry = try Fixtures.sampleRegistry()
        let lines = try Fixtures.conversationLines().filter { $0.contains { ![0x20, 0x09, 0x0D].contains($0) } }
        let messages = try lines.map { try registry.decode(line: $0) }
        #expect(!messages.isEmpty)
        return Transcript(messages: messages, currentUserID: messages.first?.envelope.senderID)
    }

    /// Whether two sizes are equal but for rounding.
    static func close(_ a: HTMLSize, _ b: HTMLSize) -> Bool { abs(a.width - b.width) < 1e-9 && abs(a.height - b.height) < 1e-9 }

    /// The text of a view's first text or link element.
    static func firstText(of view: ViewElement) -> String? {
        switch view {
        case .text(let text): return text.text
        case .link(let link): return link.text.isEmpty ? link.url : link.text
        case .stack(let stack):
            for child in stack.children { if let text = firstText(of: child) { return text } }
            return nil
        default: return nil
        }
    }

    /// Whitespace runs as one space, trimmed: DOM text and model text compare equal.
    static func normalized(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// What the DOM holds for an attribute the renderer wrote from `value`.
    static func attributeValue(_ value: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            out.append(TextHygiene.isUnsafe(scalar) && scalar != "\n" && scalar != "\t" ? "\u{FFFD}" : scalar)
        }
        return String(out)
    }
}

/// Running Debian's `chromium` headless.
enum Chromium {
    /// Why the browser tests fail on a machine without Chromium.
    static let missing: Comment = """
        chromium is not installed, and the HTML rendering tests need a real headless Chromium: \
        run .ci/run (it installs it), or apt-get install -y chromium
        """

    /// The `chromium` (or `chromium-browser`) on `PATH`.
    static func path() -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for name in ["chromium", "chromium-browser"] {
            for directory in directories where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }

    /// Runs headless Chromium with `arguments` after the flags every run needs, stopping it after `timeout`.
    static func run(_ chromium: String, _ arguments: [String], profile: String, timeout: Duration = .seconds(90)) async throws -> Fixtures.Run {
        // `--headless` is the new headless mode in current versions; `--no-sandbox` lets it run as root
        // and in containers; the profile is a throwaway one.
        let flags = [
            "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
            "--user-data-dir=\(profile)",
        ]
        return try await Fixtures.run(chromium, flags + arguments, timeout: timeout, priority: .immediate)
    }
}

/// A small reader of the DOM Chromium serializes (`--dump-dom`): elements with their attributes, and text.
/// It knows what that serialization holds: quoted attributes, void elements, raw `<style>` and `<script>`
/// text, and a few entities.
final class DOM {
    /// The element's name, lower-cased, or `#text` or `#document`.
    let name: String
    /// The attributes, their values decoded.
    var attributes: [String: String]
    /// The children, in order.
    var children: [DOM] = []
    /// A text node's text, decoded.
    var text: String

    init(name: String, attributes: [String: String] = [:], text: String = "") {
        self.name = name
        self.attributes = attributes
        self.text = text
    }

    /// Every node below this one, in document order.
    var descendants: [DOM] {
        var out: [DOM] = []
        for child in children {
            out.append(child)
            out += child.descendants
        }
        return out
    }

    /// The text of every text node below, concatenated.
    var textContent: String {
        name == "#text" ? text : children.map(\.textContent).joined()
    }

    /// The `class` attribute's classes.
    var classes: [String] { (attributes["class"] ?? "").split(separator: " ").map(String.init) }

    private static let voidElements: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
    ]
    private static let rawTextElements: Set<String> = ["style", "script", "xmp", "iframe", "noembed", "noframes"]

    /// Parses serialized HTML.
    static func parse(_ html: String) -> DOM {
        let scalars = Array(html.unicodeScalars)
        let root = DOM(name: "#document")
        var stack = [root]
        var index = 0
        func string(_ range: Range<Int>) -> String { String(String.UnicodeScalarView(scalars[range])) }
        func hasPrefix(_ prefix: String, at position: Int) -> Bool {
            let wanted = Array(prefix.unicodeScalars)
            guard position + wanted.count <= scalars.count else { return false }
            return (0..<wanted.count).allSatisfy { String(scalars[position + $0]).lowercased() == String(wanted[$0]).lowercased() }
        }
        func find(_ needle: String, from position: Int) -> Int {
            var at = position
            while at < scalars.count && !hasPrefix(needle, at: at) { at += 1 }
            return at
        }
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r" || scalar == "\u{C}" }

        while index < scalars.count {
            if scalars[index] != "<" {
                var end = index
                while end < scalars.count && scalars[end] != "<" { end += 1 }
                stack.last?.children.append(DOM(name: "#text", text: decode(string(index..<end))))
                index = end
                continue
            }
            if hasPrefix("<!--", at: index) {
                index = min(find("-->", from: index) + 3, scalars.count)
                continue
            }
            if hasPrefix("<!", at: index) {
                index = min(find(">", from: index) + 1, scalars.count)
                continue
            }
            if hasPrefix("</", at: index) {
                let end = find(">", from: index)
                let name = string(index + 2..<end).trimmingCharacters(in: .whitespaces).lowercased()
                if let open = stack.lastIndex(where: { $0.name == name }), open > 0 { stack.removeSubrange(open...) }
                index = min(end + 1, scalars.count)
                continue
            }
            // A start tag.
            var position = index + 1
            var nameEnd = position
            while nameEnd < scalars.count && !isSpace(scalars[nameEnd]) && scalars[nameEnd] != ">" && scalars[nameEnd] != "/" { nameEnd += 1 }
            let name = string(position..<nameEnd).lowercased()
            position = nameEnd
            var attributes: [String: String] = [:]
            while position < scalars.count && scalars[position] != ">" {
                if isSpace(scalars[position]) || scalars[position] == "/" {
                    position += 1
                    continue
                }
                var attributeEnd = position
                while attributeEnd < scalars.count && !isSpace(scalars[attributeEnd]) && !["=", ">", "/"].contains(scalars[attributeEnd]) {
                    attributeEnd += 1
                }
                let attribute = string(position..<attributeEnd).lowercased()
                position = attributeEnd
                while position < scalars.count && isSpace(scalars[position]) { position += 1 }
                var value = ""
                if position < scalars.count && scalars[position] == "=" {
                    position += 1
                    while position < scalars.count && isSpace(scalars[position]) { position += 1 }
                    if position < scalars.count && (scalars[position] == "\"" || scalars[position] == "'") {
                        let quote = scalars[position]
                        var valueEnd = position + 1
                        while valueEnd < scalars.count && scalars[valueEnd] != quote { valueEnd += 1 }
                        value = decode(string(position + 1..<valueEnd))
                        position = min(valueEnd + 1, scalars.count)
                    } else {
                        var valueEnd = position
                        while valueEnd < scalars.count && !isSpace(scalars[valueEnd]) && scalars[valueEnd] != ">" { valueEnd += 1 }
                        value = decode(string(position..<valueEnd))
                        position = valueEnd
                    }
                }
                if attributes[attribute] == nil { attributes[attribute] = value }
            }
            index = min(position + 1, scalars.count)
            let element = DOM(name: name, attributes: attributes)
            stack.last?.children.append(element)
            if rawTextElements.contains(name) {
                let end = find("</\(name)", from: index)
                element.children.append(DOM(name: "#text", text: string(index..<end)))
                index = min(find(">", from: end) + 1, scalars.count)
            } else if !voidElements.contains(name) {
                stack.append(element)
            }
        }
        return root
    }

    /// Text with its character references decoded (the ones a serializer writes, and numeric ones).
    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            out += rest[..<ampersand]
            rest = rest[ampersand...]
            guard let semicolon = rest.prefix(12).firstIndex(of: ";") else {
                out += "&"
                rest = rest.dropFirst()
                continue
            }
            let entity = rest[rest.index(after: rest.startIndex)..<semicolon]
            let named: [Substring: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}"]
            var decoded: String?
            if let value = named[entity] {
                decoded = value
            } else if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                decoded = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
            } else if entity.hasPrefix("#") {
                decoded = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
            }
            if let decoded {
                out += decoded
                rest = rest[rest.index(after: semicolon)...]
            } else {
                out += "&"
                rest = rest.dropFirst()
            }
        }
        return out + rest
    }
}
