import Missive

/// The replaceable parts of the terminal renderer: one drawing function per part of a transcript and per
/// element kind.
///
/// Start from ``standard`` and replace a part to change that part only:
///
/// ```swift
/// var components = TerminalComponents.standard
/// components.dateSeparator = { title, width in TerminalBlock([TerminalLine("=== \(title) ===")]) }
/// let renderer = TerminalRenderer(width: 80, colors: false, components: components)
/// ```
///
/// Every function is pure: the renderer and ``TerminalRenderer/measure(_:maxWidth:)-swift.type.method`` call the same ones,
/// so a view measures exactly as it is drawn. Strings reaching them are clean (`TextHygiene`).
public struct TerminalComponents: Sendable {
    /// Draws one element within `width` columns; `layout` draws child elements with the same components.
    public typealias ElementDrawing = @Sendable (_ element: ViewElement, _ width: Int, _ layout: TerminalLayout) -> TerminalBlock

    /// The drawing of each element kind.
    public var elements: [ViewElement.Kind: ElementDrawing]
    /// Frames a message's content (already drawn, quote included) as a bubble.
    public var bubble: @Sendable (_ content: TerminalBlock, _ options: MessageLayoutOptions) -> TerminalBlock
    /// The avatar beside the last bubble of a group, from the author's name and sender id: at most
    /// ``avatarColumns`` columns.
    public var avatar: @Sendable (_ author: String, _ senderID: String) -> TerminalLine
    /// The width of the avatar column.
    public var avatarColumns: Int
    /// The author's name above the first bubble of a group.
    public var author: @Sendable (_ name: String, _ senderID: String) -> TerminalLine
    /// The time under the last bubble of a group.
    public var timestamp: @Sendable (_ time: String) -> TerminalLine
    /// The thread replies counter under a message with replies.
    public var threadInfo: @Sendable (_ replies: Int) -> TerminalLine
    /// The preview of the replied-to message, inside the bubble above the content.
    public var quotedPreview: @Sendable (_ quote: QuotedPreview, _ width: Int) -> TerminalBlock
    /// The separator before the first message of a day, across the whole `width`.
    public var dateSeparator: @Sendable (_ title: String, _ width: Int) -> TerminalBlock
    /// The content of an unknown or refused message.
    public var unsupportedCard: @Sendable (_ card: UnsupportedCard, _ width: Int) -> TerminalBlock
    /// A message's actions (``TranscriptMessage/actions``) as buttons, inside the bubble under the content;
    /// `layout` draws elements with these components.
    public var actionBar: @Sendable (_ actions: [ActionDeclaration], _ width: Int, _ layout: TerminalLayout) -> TerminalBlock

    /// The standard action bar: a horizontal stack of one button per action, which wraps when it does not fit.
    public static let standardActionBar: @Sendable ([ActionDeclaration], Int, TerminalLayout) -> TerminalBlock = { actions, width, layout in
        layout.draw(.stack(ViewStack(axis: .horizontal, spacing: 1, children: actions.map { .button($0.title, action: $0.id) })), width: width)
    }

    /// Missive's own look.
    public static let standard = TerminalComponents(
        elements: StandardTerminalElements.all,
        bubble: { content, options in
            let inner = content.columns
            let style = TerminalStyle(dim: true, color: options.contains(.unsupported) ? .yellow : nil)
            var lines = [TerminalLine("╭" + String(repeating: "─", count: inner + 2) + "╮", style: style)]
            for line in content.lines {
                var row = TerminalLine("│ ", style: style)
                row.append(line.padded(to: inner))
                row.append(" │", style: style)
                lines.append(row)
            }
            lines.append(TerminalLine("╰" + String(repeating: "─", count: inner + 2) + "╯", style: style))
            return TerminalBlock(lines)
        },
        avatar: { author, senderID in
            // The first letter or digit: "(A)", or a wide one such as "(寿)" in all four columns.
            let initial = author.first(where: { $0.isLetter || $0.isNumber }).map { String($0).uppercased() } ?? "?"
            let letter = TerminalWidth.of(initial) <= 2 && TerminalWidth.of(initial) >= 1 ? initial : "?"
            return TerminalLine("(" + letter + ")", style: TerminalStyle(bold: true, color: StandardTerminalElements.color(for: senderID)))
        },
        avatarColumns: 4,
        author: { name, senderID in TerminalLine(name, style: TerminalStyle(bold: true, color: StandardTerminalElements.color(for: senderID))) },
        timestamp: { time in TerminalLine(time, style: TerminalStyle(dim: true)) },
        threadInfo: { replies in TerminalLine(replies == 1 ? "↳ 1 reply" : "↳ \(replies) replies", style: TerminalStyle(color: .cyan)) },
        quotedPreview: { quote, width in
            let bar = TerminalStyle(dim: true)
            switch quote {
            case .found(let author, let text, let media):
                var first = TerminalLine("┃ ", style: bar)
                first.append(TerminalText.truncate(author, width: width - 2, style: TerminalStyle(bold: true)))
                var second = TerminalLine("┃ ", style: bar)
                let preview = media.map { "\(text) (\($0.mimeType))" } ?? text
                second.append(TerminalText.truncate(preview, width: width - 2, style: TerminalStyle(dim: true)))
                return TerminalBlock([first, second])
            case .notFound:
                var line = TerminalLine("┃ ", style: bar)
                line.append(TerminalText.truncate(QuotedPreview.notFoundText, width: width - 2, style: TerminalStyle(dim: true, italic: true)))
                return TerminalBlock([line])
            }
        },
        dateSeparator: { title, width in
            let label = " \(title) "
            let columns = TerminalWidth.of(label)
            guard columns + 4 <= width else { return TerminalBlock([TerminalText.truncate(title, width: width, style: TerminalStyle(dim: true))]) }
            let left = (width - columns) / 2
            let right = width - columns - left
            return TerminalBlock([TerminalLine(String(repeating: "─", count: left) + label + String(repeating: "─", count: right), style: TerminalStyle(dim: true))])
        },
        unsupportedCard: { card, width in
            var block = TerminalBlock(TerminalText.wrap([TerminalText.Run(card.title, style: TerminalStyle(italic: true))], width: width, maxLines: 3))
            block.append(TerminalBlock(TerminalText.wrap([TerminalText.Run(card.detail, style: TerminalStyle(dim: true))], width: width, maxLines: 3)))
            return block
        }
    )

    /// Creates components from every part.
    public init(
        elements: [ViewElement.Kind: ElementDrawing],
        bubble: @escaping @Sendable (TerminalBlock, MessageLayoutOptions) -> TerminalBlock,
        avatar: @escaping @Sendable (String, String) -> TerminalLine,
        avatarColumns: Int,
        author: @escaping @Sendable (String, String) -> TerminalLine,
        timestamp: @escaping @Sendable (String) -> TerminalLine,
        threadInfo: @escaping @Sendable (Int) -> TerminalLine,
        quotedPreview: @escaping @Sendable (QuotedPreview, Int) -> TerminalBlock,
        dateSeparator: @escaping @Sendable (String, Int) -> TerminalBlock,
        unsupportedCard: @escaping @Sendable (UnsupportedCard, Int) -> TerminalBlock,
        actionBar: @escaping @Sendable ([ActionDeclaration], Int, TerminalLayout) -> TerminalBlock = TerminalComponents.standardActionBar
    ) {
        self.elements = elements
        self.bubble = bubble
        self.avatar = avatar
        self.avatarColumns = avatarColumns
        self.author = author
        self.timestamp = timestamp
        self.threadInfo = threadInfo
        self.quotedPreview = quotedPreview
        self.dateSeparator = dateSeparator
        self.unsupportedCard = unsupportedCard
        self.actionBar = actionBar
    }
}

/// Draws view elements with a set of components: what element drawings use for their children.
public struct TerminalLayout: Sendable {
    /// The components used.
    public let components: TerminalComponents

    /// A layout with these components.
    public init(components: TerminalComponents = .standard) {
        self.components = components
    }

    /// `element` drawn within `width` columns (at least 1).
    public func draw(_ element: ViewElement, width: Int) -> TerminalBlock {
        guard let drawing = components.elements[element.kind] else { return TerminalBlock() }
        return drawing(element, max(width, 1), self)
    }
}

/// The standard drawing of each element kind.
enum StandardTerminalElements {
    static let all: [ViewElement.Kind: TerminalComponents.ElementDrawing] = [
        .text: { element, width, _ in
            guard case .text(let text) = element else { return TerminalBlock() }
            var style = TerminalStyle()
            switch text.role {
            case .body: break
            case .title: style.bold = true
            case .caption: style.dim = true
            case .code: style.color = .cyan
            }
            if text.emphasis == .strong { style.bold = true }
            if text.emphasis == .italic { style.italic = true }
            if text.role == .code { return TerminalBlock(TerminalText.hardWrap(text.text, width: width, style: style, maxLines: text.maxLines)) }
            return TerminalBlock(TerminalText.wrap([TerminalText.Run(text.text, style: style)], width: width, maxLines: text.maxLines))
        },
        .link: { element, width, _ in
            guard case .link(let link) = element else { return TerminalBlock() }
            return TerminalBlock(
                TerminalText.wrap(
                    [TerminalText.Run(link.text, style: TerminalStyle(underline: true, color: .blue)), TerminalText.Run("<\(link.url)>", style: TerminalStyle(dim: true))],
                    width: width))
        },
        .image: { element, width, _ in
            guard case .image(let image) = element else { return TerminalBlock() }
            var label = "[image"
            if let imageWidth = image.width, let height = image.height { label += " \(imageWidth)x\(height)" }
            label += "]"
            var runs = [TerminalText.Run(label, style: TerminalStyle(color: .magenta))]
            if !image.alt.isEmpty { runs.append(TerminalText.Run(image.alt)) }
            var block = TerminalBlock(TerminalText.wrap(runs, width: width))
            block.append(TerminalBlock(TerminalText.hardWrap(image.url, width: width, style: TerminalStyle(dim: true))))
            return block
        },
        .stack: { element, width, layout in
            guard case .stack(let stack) = element else { return TerminalBlock() }
            if stack.axis == .horizontal, let row = horizontal(stack, width: width, layout: layout) { return row }
            // Dividers take the width of the widest other child.
            let drawn = stack.children.map { $0 == .divider ? nil : layout.draw($0, width: width) }
            let inner = drawn.compactMap { $0?.columns }.max() ?? min(width, 24)
            var block = TerminalBlock()
            for (index, child) in stack.children.enumerated() {
                if index > 0 && stack.axis == .vertical { block.append(.blank(stack.spacing)) }
                block.append(drawn[index] ?? divider(max(inner, 1)))
            }
            return block
        },
        .facts: { element, width, _ in
            guard case .facts(let facts) = element else { return TerminalBlock() }
            let labelColumns = min(facts.map { TerminalWidth.of($0.label) }.max() ?? 0, max(width / 2 - 2, 1))
            var block = TerminalBlock()
            for fact in facts {
                let label = TerminalText.truncate(fact.label, width: labelColumns, style: TerminalStyle(bold: true)).padded(to: labelColumns)
                if width < labelColumns + 3 {
                    block.append(TerminalBlock([label]))
                    block.append(TerminalBlock(TerminalText.wrap([TerminalText.Run(fact.value)], width: width)))
                    continue
                }
                let values = TerminalText.wrap([TerminalText.Run(fact.value)], width: width - labelColumns - 2)
                for (index, value) in values.enumerated() {
                    var line = index == 0 ? label : TerminalLine(String(repeating: " ", count: labelColumns))
                    line.append("  ")
                    line.append(value)
                    block.append(TerminalBlock([line]))
                }
            }
            return block
        },
        .progress: { element, width, _ in
            guard case .progress(let progress) = element else { return TerminalBlock() }
            var runs = [TerminalText.Run(progress.label)]
            if let detail = progress.detail, !detail.isEmpty { runs.append(TerminalText.Run("· " + detail, style: TerminalStyle(dim: true))) }
            var block = TerminalBlock(TerminalText.wrap(runs, width: width))
            // Right-aligned in four columns, so that bars of one list end in the same column.
            let digits = "\(Int((progress.fraction * 100).rounded()))%"
            let percent = String(repeating: " ", count: max(0, 4 - digits.count)) + digits
            let barColumns = min(20, width - 5)
            var bar = TerminalLine()
            if barColumns >= 1 {
                let filled = Int((progress.fraction * Double(barColumns)).rounded())
                bar.append(String(repeating: "█", count: filled), style: TerminalStyle(color: .green))
                bar.append(String(repeating: "░", count: barColumns - filled), style: TerminalStyle(dim: true))
                bar.append(" ")
            }
            bar.append(TerminalText.truncate(percent, width: width))
            block.append(TerminalBlock([bar]))
            return block
        },
        .button: { element, width, _ in
            guard case .button(let button) = element else { return TerminalBlock() }
            guard width >= 5 else { return TerminalBlock([TerminalText.truncate(button.title, width: width, style: TerminalStyle(bold: true))]) }
            var line = TerminalLine("[ ", style: TerminalStyle(color: .blue))
            line.append(TerminalText.truncate(button.title, width: width - 4, style: TerminalStyle(bold: true, color: .blue)))
            line.append(" ]", style: TerminalStyle(color: .blue))
            return TerminalBlock([line])
        },
        .divider: { _, width, _ in divider(min(width, 24)) },
        .badge: { element, width, _ in
            guard case .badge(let badge) = element else { return TerminalBlock() }
            let color: TerminalColor? =
                switch badge.tone {
                case .neutral: nil
                case .info: .blue
                case .success: .green
                case .warning: .yellow
                case .danger: .red
                }
            guard width >= 3 else { return TerminalBlock([TerminalText.truncate(badge.text, width: width, style: TerminalStyle(color: color))]) }
            var line = TerminalLine("[", style: TerminalStyle(color: color))
            line.append(TerminalText.truncate(badge.text, width: width - 2, style: TerminalStyle(bold: true, color: color)))
            line.append("]", style: TerminalStyle(color: color))
            return TerminalBlock([line])
        },
    ]

    static func divider(_ columns: Int) -> TerminalBlock {
        TerminalBlock([TerminalLine(String(repeating: "─", count: columns), style: TerminalStyle(dim: true))])
    }

    /// The children side by side when each fits in what is left of the width, else `nil`.
    static func horizontal(_ stack: ViewStack, width: Int, layout: TerminalLayout) -> TerminalBlock? {
        var columns: [TerminalBlock] = []
        var used = 0
        for child in stack.children {
            let gap = columns.isEmpty ? 0 : stack.spacing
            let left = width - used - gap
            guard left >= 1 else { return nil }
            let block = child == .divider ? TerminalBlock([TerminalLine("│", style: TerminalStyle(dim: true))]) : layout.draw(child, width: left)
            // A child that had to wrap to fit is better drawn below the others.
            if child != .divider && block.columns > left { return nil }
            if child != .divider && layout.draw(child, width: width).rows > block.rows { return nil }
            columns.append(block)
            used += gap + block.columns
        }
        let rows = columns.map(\.rows).max() ?? 0
        var lines: [TerminalLine] = []
        for row in 0..<rows {
            var line = TerminalLine()
            for (index, block) in columns.enumerated() {
                if index > 0 { line.append(String(repeating: " ", count: stack.spacing)) }
                let cell = row < block.rows ? block.lines[row] : TerminalLine()
                // The last column needs no padding: trailing spaces would only widen the line.
                line.append(index == columns.count - 1 ? cell : cell.padded(to: block.columns))
            }
            lines.append(line)
        }
        return TerminalBlock(lines)
    }

    /// A colour for a sender, the same on every run.
    static func color(for sender: String) -> TerminalColor {
        let palette: [TerminalColor] = [.red, .green, .yellow, .blue, .magenta, .cyan]
        var hash: UInt32 = 2_166_136_261
        for byte in sender.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return palette[Int(hash % UInt32(palette.count))]
    }
}
