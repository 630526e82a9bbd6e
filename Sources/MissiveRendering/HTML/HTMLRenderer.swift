import Foundation
import Missive

/// Draws transcripts and views as HTML: one self-contained HTML5 page per transcript, or a fragment per
/// view or message.
///
/// The page has one inline `<style>` and nothing else to load: no script, no image, no font, no frame. Its
/// ``contentSecurityPolicy`` forbids all of them, so that even markup a sender managed to smuggle in could
/// neither run nor fetch anything. Images are never fetched: each is a placeholder box of the image's aspect
/// ratio holding its alternative text, with an ordinary link to the image. Every string from a sender or a
/// plugin is escaped by ``HTMLEscaping/escape(_:)``, and only http and https URLs become links.
///
/// <doc:DrawingAsHTML> describes the page's structure, its class names and the estimate's font model.
public struct HTMLRenderer: Sendable {
    /// The page's title, in `<title>` and in its heading.
    public var title: String
    /// The page's language (`<html lang>`): the language of the renderer's own words, such as
    /// ``QuotedPreview/notFoundText``.
    public var language: String
    /// The parts it draws with.
    public var components: HTMLComponents

    /// The page's Content-Security-Policy: nothing may load but the inline stylesheet (and `data:` images,
    /// which a custom component may use for avatars; the standard components use none). No script may run,
    /// `<base>` cannot redirect links and no form can be submitted.
    public static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

    /// A renderer titling its pages `title`.
    public init(title: String = "Conversation", language: String = "en", components: HTMLComponents = .standard) {
        self.title = title
        self.language = language
        self.components = components
    }

    // MARK: Views

    /// The size `element` takes when drawn with the standard components in a column `maxWidth` CSS pixels
    /// wide: what a list needs before drawing. For a message in a transcript, pass
    /// ``HTMLMetrics/bubbleContentWidth``.
    ///
    /// It is an estimate from a font model (``HTMLMetrics``; <doc:DrawingAsHTML>), not a measurement: real fonts
    /// differ from the model's average advances. It uses the stylesheet's own font sizes, line heights,
    /// paddings and gaps, and wraps text the way the stylesheet does. It is a pure function, safe to call
    /// from any thread.
    public static func estimate(_ element: ViewElement, maxWidth: Double) -> HTMLSize {
        HTMLEstimator.size(element, maxWidth: maxWidth)
    }

    /// `element` as an HTML fragment, drawn with this renderer's components. It needs the components'
    /// stylesheet to look right.
    public func render(_ element: ViewElement) -> String {
        HTMLLayout(components: components).draw(element)
    }

    // MARK: Transcripts

    /// One message as an `<article class="msg">` with its id in `data-id`: author, avatar, bubble (quote,
    /// content and action buttons) and footer (time and thread counter), as its options ask.
    public func render(_ item: TranscriptMessage) -> String {
        let options = item.options
        let flipped = options.contains(.flipped)
        let senderID = item.message.envelope.senderID
        var classes = "msg"
        if flipped { classes += " msg-flipped" }
        if options.contains(.continuation) { classes += " msg-continuation" }
        if options.contains(.unsupported) { classes += " msg-unsupported" }
        var out = "<article class=\"\(classes)\"" + HTMLEscaping.attribute("data-id", item.message.envelope.id)
            + HTMLEscaping.attribute("data-sender", senderID) + ">"
        if options.contains(.authorName) { out += components.author(item.author, senderID) }
        out += "<div class=\"msg-row\">"
        if !flipped {
            out += "<div class=\"avatar-slot\">" + (options.contains(.avatar) ? components.avatar(item.author, senderID) : "") + "</div>"
        }
        var content = "<div class=\"msg-content\">"
        if options.contains(.quotedMessage), let quote = item.quote { content += components.quotedPreview(quote) }
        switch item.body {
        case .view(let view): content += render(view)
        case .unsupported(let card): content += components.unsupportedCard(card)
        }
        if !item.actions.isEmpty { content += components.actionBar(item.actions, HTMLLayout(components: components)) }
        content += "</div>"
        out += options.contains(.bubble) ? components.bubble(content, options) : content
        out += "</div>"
        var footer = ""
        if options.contains(.timestamp) { footer += components.timestamp(item.time) }
        if options.contains(.threadInfo) && item.replyCount > 0 { footer += components.threadInfo(item.replyCount) }
        if !footer.isEmpty { out += "<div class=\"msg-footer\">" + footer + "</div>" }
        return out + "</article>"
    }

    /// The whole transcript as one HTML5 page: date separators and messages, in order, in a `<main>`.
    public func render(_ transcript: Transcript) -> String {
        var rows: [String] = []
        for row in transcript.rows {
            switch row {
            case .dateSeparator(let title): rows.append(components.dateSeparator(title))
            case .message(let item): rows.append(render(item))
            }
        }
        if rows.isEmpty { rows.append("<p class=\"transcript-empty\">No messages</p>") }
        return document(body: rows.joined(separator: "\n"))
    }

    /// A page around `body` (trusted markup, such as what the renderer draws): the head with the charset,
    /// the Content-Security-Policy, the title and the stylesheet, then `body` in
    /// `<main class="transcript">` after the title's heading.
    public func document(body: String) -> String {
        let title = HTMLEscaping.escape(self.title)
        let language = HTMLEscaping.escape(self.language.isEmpty ? "en" : self.language)
        // The policy is written as it is: it is the renderer's own constant, without `"`, `&` or `<`.
        // `</` cannot end a `<style>` element if it is never written there.
        let stylesheet = components.stylesheet.replacingOccurrences(of: "</", with: "<\\/")
        return """
            <!DOCTYPE html>
            <html lang="\(language)">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(Self.contentSecurityPolicy)">
            <meta name="referrer" content="no-referrer">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(title)</title>
            <style>
            \(stylesheet)
            </style>
            </head>
            <body>
            <main class="transcript">
            <header class="transcript-header"><h1 dir="auto">\(title)</h1></header>
            \(body)
            </main>
            </body>
            </html>

            """
    }
}
