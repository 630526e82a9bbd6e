import Foundation
import Missive

/// Draws transcripts and views for a terminal: Unicode box drawing, ANSI colours (or none), and text
/// wrapped to the width in terminal columns (``TerminalWidth``).
///
/// Every string it draws comes from a sanitized view or is cleaned by `TextHygiene`, so that nothing a
/// sender or a plugin wrote can move the cursor, change the title or reorder text. The only escape
/// sequences in its output are its own colours, and none at all when ``colors`` is false.
public struct TerminalRenderer: Sendable {
    /// The width of the terminal, in columns.
    public var width: Int
    /// Whether to write ANSI colours.
    public var colors: Bool
    /// The parts it draws with.
    public var components: TerminalComponents

    /// A renderer for a terminal `width` columns wide.
    public init(width: Int = 80, colors: Bool = false, components: TerminalComponents = .standard) {
        self.width = max(width, 20)
        self.colors = colors
        self.components = components
    }

    /// Whether colours suit standard output: it is a terminal and `NO_COLOR` is not set to a non-empty value
    /// (no-color.org).
    public static func colorsSuitStandardOutput(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
        if environment["TERM"] == "dumb" { return false }
        return isatty(STDOUT_FILENO) == 1
    }

    // MARK: Views

    /// The size `element` takes when drawn within `maxWidth` columns, with the standard components: the
    /// content size a list needs before drawing. Pure and safe to call from any thread.
    public static func measure(_ element: ViewElement, maxWidth: Int) -> TerminalSize {
        TerminalLayout().draw(element, width: maxWidth).size
    }

    /// The size `element` takes with this renderer's components.
    public func measure(_ element: ViewElement, maxWidth: Int) -> TerminalSize {
        TerminalLayout(components: components).draw(element, width: maxWidth).size
    }

    /// `element` drawn within `maxWidth` columns, one line per row, without a trailing newline.
    public func render(_ element: ViewElement, maxWidth: Int) -> String {
        text(TerminalLayout(components: components).draw(element, width: maxWidth))
    }

    // MARK: Transcripts

    /// The widest bubble, frame included.
    public var bubbleColumns: Int { max(min(width - components.avatarColumns, width * 3 / 4), 12) }

    /// The widest content of a bubble.
    public var contentColumns: Int { max(bubbleColumns - 4, 1) }

    /// One message drawn: author, bubble (quote, content and action buttons), footer, across the whole width.
    public func block(for item: TranscriptMessage) -> TerminalBlock {
        let options = item.options
        let layout = TerminalLayout(components: components)
        var content = TerminalBlock()
        if options.contains(.quotedMessage), let quote = item.quote {
            content.append(components.quotedPreview(quote, contentColumns))
        }
        switch item.body {
        case .view(let view): content.append(layout.draw(view, width: contentColumns))
        case .unsupported(let card): content.append(components.unsupportedCard(card, contentColumns))
        }
        if !item.actions.isEmpty { content.append(components.actionBar(item.actions, contentColumns, layout)) }
        let bubble = options.contains(.bubble) ? components.bubble(content, options) : content
        let flipped = options.contains(.flipped)
        let gutter = flipped ? 0 : components.avatarColumns
        func place(_ line: TerminalLine) -> TerminalLine {
            if flipped {
                let indent = max(width - line.columns, 0)
                var placed = TerminalLine(String(repeating: " ", count: indent))
                placed.append(line)
                return placed
            }
            var placed = TerminalLine(String(repeating: " ", count: gutter))
            placed.append(line)
            return placed
        }
        var lines: [TerminalLine] = []
        if options.contains(.authorName) {
            // A long name is cut to the width, so that it never runs past the terminal's edge.
            let author = components.author(item.author, item.message.envelope.senderID)
            let room = width - (flipped ? 0 : gutter)
            lines.append(place(author.columns <= room ? author : TerminalText.truncate(author.plainText, width: room, style: author.spans.first?.style ?? .plain)))
        }
        for (index, line) in bubble.lines.enumerated() {
            if flipped {
                lines.append(place(line.padded(to: bubble.columns)))
            } else if options.contains(.avatar) && index == bubble.lines.count - 1 {
                var row = components.avatar(item.author, item.message.envelope.senderID).padded(to: components.avatarColumns)
                row.append(line)
                lines.append(row)
            } else {
                lines.append(place(line))
            }
        }
        var footer = TerminalLine()
        if options.contains(.timestamp) { footer.append(components.timestamp(item.time)) }
        if options.contains(.threadInfo) && item.replyCount > 0 {
            if footer.columns > 0 { footer.append("  ") }
            footer.append(components.threadInfo(item.replyCount))
        }
        if footer.columns > 0 { lines.append(place(footer)) }
        return TerminalBlock(lines)
    }

    /// Every row of a transcript drawn, in order, with a blank line after each group.
    public func blocks(for transcript: Transcript) -> [TerminalBlock] {
        transcript.rows.map { row in
            switch row {
            case .dateSeparator(let title):
                return components.dateSeparator(title, width)
            case .message(let item):
                var block = self.block(for: item)
                if !item.options.contains(.continuation) { block.append(.blank(1)) }
                return block
            }
        }
    }

    /// What an empty transcript draws.
    public static let emptyText = "No messages"

    /// The whole transcript, ending with a newline; ``emptyText`` when nothing is drawn.
    public func render(_ transcript: Transcript) -> String {
        var lines = blocks(for: transcript).flatMap(\.lines)
        // The blank line after the last group is not needed.
        while lines.last?.columns == 0 { lines.removeLast() }
        guard !lines.isEmpty else { return Self.emptyText + "\n" }
        return lines.map { $0.rendered(colors: colors) }.joined(separator: "\n") + "\n"
    }

    private func text(_ block: TerminalBlock) -> String {
        block.lines.map { $0.rendered(colors: colors) }.joined(separator: "\n")
    }
}
