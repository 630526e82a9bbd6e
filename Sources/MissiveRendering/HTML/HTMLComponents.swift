import Missive

/// The replaceable parts of the HTML renderer: one function per part of a transcript and per element kind,
/// each returning an HTML fragment, and the stylesheet they are drawn with.
///
/// Start from ``standard`` and replace a part to change that part only:
///
/// ```swift
/// var components = HTMLComponents.standard
/// components.dateSeparator = { title in
///     "<h2 class=\"date-separator\">=== \(HTMLEscaping.escape(title)) ===</h2>"
/// }
/// let renderer = HTMLRenderer(title: "Team", components: components)
/// ```
///
/// A component writes markup, so it must pass every string it is given through
/// ``HTMLEscaping/escape(_:)`` (text and attribute values alike), and every URL through
/// ``HTMLEscaping/allowedURL(_:)`` before it becomes an `href`. The strings it is given are cleaned
/// (`TextHygiene`) but not escaped. The page's Content-Security-Policy forbids scripts and every external
/// resource whatever a component writes.
public struct HTMLComponents: Sendable {
    /// Draws one element; `layout` draws child elements with the same components.
    public typealias ElementDrawing = @Sendable (_ element: ViewElement, _ layout: HTMLLayout) -> String

    /// The drawing of each element kind. A kind without a drawing is not drawn.
    public var elements: [ViewElement.Kind: ElementDrawing]
    /// Frames a message's content (already drawn, quote included) as a bubble.
    public var bubble: @Sendable (_ content: String, _ options: MessageLayoutOptions) -> String
    /// The avatar beside the last bubble of a group: the author's display name and sender id.
    public var avatar: @Sendable (_ author: String, _ senderID: String) -> String
    /// The author's name above the first bubble of a group.
    public var author: @Sendable (_ name: String, _ senderID: String) -> String
    /// The time under the last bubble of a group.
    public var timestamp: @Sendable (_ time: String) -> String
    /// The thread replies counter under a message with replies.
    public var threadInfo: @Sendable (_ replies: Int) -> String
    /// The preview of the replied-to message, inside the bubble above the content.
    public var quotedPreview: @Sendable (_ quote: QuotedPreview) -> String
    /// The separator before the first message of a day.
    public var dateSeparator: @Sendable (_ title: String) -> String
    /// The content of an unknown or refused message.
    public var unsupportedCard: @Sendable (_ card: UnsupportedCard) -> String
    /// A message's actions (``TranscriptMessage/actions``) as buttons, inside the bubble under the content;
    /// `layout` draws elements with these components.
    public var actionBar: @Sendable (_ actions: [ActionDeclaration], _ layout: HTMLLayout) -> String
    /// The CSS of the page's one `<style>` element. It is the app's own text, never a sender's; the
    /// renderer still writes any `</` in it as `<\/`, so that it cannot close the element.
    public var stylesheet: String

    /// The standard action bar: `<div class="actions" role="group">` holding one button element per action,
    /// with its id in `data-action` for a page's own script to act on.
    public static let standardActionBar: @Sendable ([ActionDeclaration], HTMLLayout) -> String = { actions, layout in
        "<div class=\"actions\" role=\"group\">" + actions.map { layout.draw(.button($0.title, action: $0.id)) }.joined() + "</div>"
    }

    /// Missive's own look: the class names <doc:DrawingAsHTML> lists, styled by ``HTMLStylesheet/standard``.
    public static let standard = HTMLComponents(
        elements: StandardHTMLElements.all,
        bubble: { content, options in
            var classes = "bubble"
            if !options.contains(.continuation) { classes += " bubble-tail" }
            if options.contains(.unsupported) { classes += " bubble-unsupported" }
            return "<div class=\"\(classes)\">\(content)</div>"
        },
        avatar: { author, senderID in
            "<span class=\"avatar avatar-c\(StandardHTMLElements.colorIndex(for: senderID))\" aria-hidden=\"true\""
                + HTMLEscaping.attribute("title", author) + ">" + HTMLEscaping.escape(StandardHTMLElements.initials(of: author)) + "</span>"
        },
        author: { name, senderID in
            "<div class=\"author author-c\(StandardHTMLElements.colorIndex(for: senderID))\" dir=\"auto\">" + HTMLEscaping.escape(name) + "</div>"
        },
        timestamp: { time in "<time class=\"timestamp\">" + HTMLEscaping.escape(time) + "</time>" },
        threadInfo: { replies in
            "<span class=\"thread-info\">↳ " + (replies == 1 ? "1 reply" : "\(replies) replies") + "</span>"
        },
        quotedPreview: { quote in
            switch quote {
            case .found(let author, let text, let media):
                var out = "<blockquote class=\"quote\"><div class=\"quote-author\" dir=\"auto\">" + HTMLEscaping.escape(author) + "</div>"
                if !text.isEmpty { out += "<div class=\"quote-text\" dir=\"auto\">" + HTMLEscaping.escape(text) + "</div>" }
                if let media {
                    out += "<span class=\"quote-media\">" + HTMLEscaping.escape(StandardHTMLElements.mediaLabel(media.mimeType)) + "</span>"
                }
                return out + "</blockquote>"
            case .notFound:
                return "<blockquote class=\"quote quote-missing\"><div class=\"quote-text\">" + HTMLEscaping.escape(QuotedPreview.notFoundText)
                    + "</div></blockquote>"
            }
        },
        dateSeparator: { title in "<h2 class=\"date-separator\"><span>" + HTMLEscaping.escape(title) + "</span></h2>" },
        unsupportedCard: { card in
            "<div class=\"unsupported\" role=\"note\"><div class=\"unsupported-title\" dir=\"auto\">" + HTMLEscaping.escape(card.title)
                + "</div><div class=\"unsupported-detail\">" + HTMLEscaping.escape(card.detail) + "</div></div>"
        },
        stylesheet: HTMLStylesheet.standard
    )

    /// ``standard`` for a page whose Content-Security-Policy allows no inline style (`style-src 'self'`, without
    /// `'unsafe-inline'`): nothing it draws has a `style` attribute. A progress bar's width is one of the classes
    /// `pct-0` … `pct-100`, which its ``stylesheet`` (the standard one, and those classes) defines. `missive
    /// serve`'s web page draws with it.
    public static let withoutInlineStyles: HTMLComponents = {
        var components = HTMLComponents.standard
        components.elements[.progress] = StandardHTMLElements.progress(inlineStyle: false)
        components.stylesheet += "\n" + (0...100).map { ".el-progress-fill.pct-\($0) { width: \($0)%; }\n" }.joined()
        return components
    }()

    /// Creates components from every part.
    public init(
        elements: [ViewElement.Kind: ElementDrawing],
        bubble: @escaping @Sendable (String, MessageLayoutOptions) -> String,
        avatar: @escaping @Sendable (String, String) -> String,
        author: @escaping @Sendable (String, String) -> String,
        timestamp: @escaping @Sendable (String) -> String,
        threadInfo: @escaping @Sendable (Int) -> String,
        quotedPreview: @escaping @Sendable (QuotedPreview) -> String,
        dateSeparator: @escaping @Sendable (String) -> String,
        unsupportedCard: @escaping @Sendable (UnsupportedCard) -> String,
        stylesheet: String,
        actionBar: @escaping @Sendable ([ActionDeclaration], HTMLLayout) -> String = HTMLComponents.standardActionBar
    ) {
        self.elements = elements
        self.bubble = bubble
        self.avatar = avatar
        self.author = author
        self.timestamp = timestamp
        self.threadInfo = threadInfo
        self.quotedPreview = quotedPreview
        self.dateSeparator = dateSeparator
        self.unsupportedCard = unsupportedCard
        self.stylesheet = stylesheet
        self.actionBar = actionBar
    }
}

/// Draws view elements with a set of components: what element drawings use for their children.
public struct HTMLLayout: Sendable {
    /// The components used.
    public let components: HTMLComponents

    /// A layout with these components.
    public init(components: HTMLComponents = .standard) {
        self.components = components
    }

    /// `element` as an HTML fragment; empty when its kind has no drawing.
    public func draw(_ element: ViewElement) -> String {
        guard let drawing = components.elements[element.kind] else { return "" }
        return drawing(element, self)
    }
}

/// The standard drawing of each element kind.
enum StandardHTMLElements {
    /// The `rel` of every link: no access to the opener, no referrer, no endorsement.
    static let linkAttributes = " rel=\"noopener noreferrer nofollow\" referrerpolicy=\"no-referrer\""

    /// A progress bar: its label and detail, the bar (with its width in a `style` attribute, or, without
    /// `inlineStyle`, as the class `pct-N`), and the percentage.
    static func progress(inlineStyle: Bool) -> HTMLComponents.ElementDrawing {
        { element, _ in
            guard case .progress(let progress) = element else { return "" }
            let text = HTMLProgressText(progress)
            var out = "<div class=\"el-progress\">"
            if !text.line.isEmpty {
                out += "<div class=\"el-progress-label\" dir=\"auto\">" + HTMLEscaping.escape(text.label)
                if let detail = text.detail {
                    out += "<span class=\"el-progress-detail\">" + HTMLEscaping.escape(text.label.isEmpty ? detail : " · " + detail) + "</span>"
                }
                out += "</div>"
            }
            let valueText = text.detail.map { "\(text.percent), \($0)" } ?? text.percent
            let fill = inlineStyle ? "<div class=\"el-progress-fill\" style=\"width: \(text.value)%\"></div>" : "<div class=\"el-progress-fill pct-\(text.value)\"></div>"
            out += "<div class=\"el-progress-row\"><div class=\"el-progress-bar\" role=\"progressbar\""
                + HTMLEscaping.attribute("aria-label", text.label.isEmpty ? "Progress" : text.label)
                + " aria-valuemin=\"0\" aria-valuemax=\"100\" aria-valuenow=\"\(text.value)\"" + HTMLEscaping.attribute("aria-valuetext", valueText)
                + ">" + fill + "</div>"
            out += "<span class=\"el-progress-percent\">\(text.percent)</span></div>"
            return out + "</div>"
        }
    }

    static let all: [ViewElement.Kind: HTMLComponents.ElementDrawing] = [
        .text: { element, _ in
            guard case .text(let text) = element else { return "" }
            var classes = "el-text el-text-\(text.role.rawValue)"
            switch text.emphasis {
            case .none: break
            case .strong: classes += " el-strong"
            case .italic: classes += " el-italic"
            }
            var style = ""
            if let maxLines = text.maxLines, maxLines >= 1 {
                classes += " el-clamp"
                style = HTMLEscaping.attribute("style", "-webkit-line-clamp: \(maxLines); line-clamp: \(maxLines)")
            }
            // The HTML parser drops a line feed right after `<pre>`: one is written there so the text keeps its own.
            if text.role == .code { return "<pre class=\"\(classes)\"\(style)>\n" + HTMLEscaping.escape(text.text) + "</pre>" }
            return "<p class=\"\(classes)\"\(style) dir=\"auto\">" + HTMLEscaping.escape(text.text) + "</p>"
        },
        .link: { element, _ in
            guard case .link(let link) = element else { return "" }
            guard let url = HTMLEscaping.allowedURL(link.url) else {
                return "<span class=\"el-link el-link-blocked\" dir=\"auto\">" + HTMLEscaping.escape(link.text) + "</span>"
            }
            return "<a class=\"el-link\"" + HTMLEscaping.attribute("href", url) + linkAttributes + " dir=\"auto\">"
                + HTMLEscaping.escape(link.text.isEmpty ? url : link.text) + "</a>"
        },
        .image: { element, _ in
            guard case .image(let image) = element else { return "" }
            let box = HTMLImageBox(image)
            let alt = image.alt.isEmpty ? "Image" : image.alt
            var out = "<figure class=\"el-image\"" + HTMLEscaping.attribute("style", "width: \(HTMLStylesheet.px(box.width))") + ">"
            out += "<div class=\"el-image-box\" role=\"img\"" + HTMLEscaping.attribute("aria-label", alt)
                + HTMLEscaping.attribute("style", "aspect-ratio: \(Int(box.ratioWidth)) / \(Int(box.ratioHeight))") + ">"
            out += "<span class=\"el-image-alt\" dir=\"auto\">" + HTMLEscaping.escape(alt) + "</span></div>"
            out += "<figcaption class=\"el-image-caption\">"
            if let url = HTMLEscaping.allowedURL(image.url) {
                out += "<a" + HTMLEscaping.attribute("href", url) + linkAttributes + ">Open image</a>"
            } else {
                out += "Image link not allowed"
            }
            if let width = image.width, let height = image.height, width > 0, height > 0 { out += " · \(width) × \(height)" }
            return out + "</figcaption></figure>"
        },
        .stack: { element, layout in
            guard case .stack(let stack) = element else { return "" }
            let spacing = HTMLStackSpacing.clamped(stack.spacing)
            return "<div class=\"el-stack el-stack-\(stack.axis.rawValue) el-gap-\(spacing)\">" + stack.children.map(layout.draw).joined() + "</div>"
        },
        .facts: { element, _ in
            guard case .facts(let facts) = element else { return "" }
            var out = "<dl class=\"el-facts\">"
            for fact in facts {
                out += "<dt" + HTMLEscaping.attribute("title", fact.label) + " dir=\"auto\">" + HTMLEscaping.escape(fact.label) + "</dt>"
                out += "<dd dir=\"auto\">" + HTMLEscaping.escape(fact.value) + "</dd>"
            }
            return out + "</dl>"
        },
        .progress: progress(inlineStyle: true),
        .button: { element, _ in
            guard case .button(let button) = element else { return "" }
            var out = "<button type=\"button\" class=\"el-button\" disabled" + HTMLEscaping.attribute("data-action", button.action)
            if let arguments = button.arguments { out += HTMLEscaping.attribute("data-arguments", arguments) }
            return out + " dir=\"auto\">" + HTMLEscaping.escape(button.title) + "</button>"
        },
        .divider: { _, _ in "<hr class=\"el-divider\">" },
        .badge: { element, _ in
            guard case .badge(let badge) = element else { return "" }
            return "<span class=\"el-badge el-badge-\(badge.tone.rawValue)\" dir=\"auto\">" + HTMLEscaping.escape(badge.text) + "</span>"
        },
    ]

    /// Up to two initials: the first letter or digit of each of the first two words, upper-cased; `?` when
    /// the name has none.
    static func initials(of name: String) -> String {
        var initials = ""
        for word in name.split(whereSeparator: { $0.isWhitespace }) {
            guard let first = word.first(where: { $0.isLetter || $0.isNumber }) else { continue }
            initials += first.uppercased()
            if initials.count == 2 { break }
        }
        return initials.isEmpty ? "?" : initials
    }

    /// A colour for a sender, the same on every run: an index below ``HTMLStylesheet/senderColorCount``.
    static func colorIndex(for sender: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in sender.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return Int(hash % UInt32(HTMLStylesheet.senderColorCount))
    }

    /// `Image · image/jpeg`: what a quoted media message shows instead of its media.
    static func mediaLabel(_ mimeType: String) -> String {
        let lower = mimeType.lowercased()
        let kind =
            lower.hasPrefix("image/") ? "Image" : lower.hasPrefix("video/") ? "Video" : lower.hasPrefix("audio/") ? "Audio" : "File"
        return mimeType.isEmpty ? kind : "\(kind) · \(mimeType)"
    }
}
