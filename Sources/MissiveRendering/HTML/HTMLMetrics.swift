import Missive

/// A size in CSS pixels.
public struct HTMLSize: Sendable, Hashable, CustomStringConvertible {
    /// The width, in CSS pixels.
    public var width: Double
    /// The height, in CSS pixels.
    public var height: Double

    /// Creates a size.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// `WIDTHxHEIGHT`, each rounded to a tenth of a pixel.
    public var description: String {
        func tenth(_ value: Double) -> String {
            let rounded = (value * 10).rounded() / 10
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
        return "\(tenth(width))x\(tenth(height))"
    }
}

/// The numbers the standard HTML look is built from: the stylesheet (``HTMLStylesheet``) is written from
/// them and ``HTMLRenderer/estimate(_:maxWidth:)`` computes with them, so the estimate and the page agree
/// on font sizes, line heights, paddings and gaps. <doc:DrawingAsHTML> describes the model.
public enum HTMLMetrics {
    /// A font as the estimate models it.
    public struct Font: Sendable, Hashable {
        /// The font size, in CSS pixels (1 em).
        public var size: Double
        /// The height of one line, in CSS pixels.
        public var lineHeight: Double
        /// Whether it is bold (font weight 600 or more).
        public var bold: Bool
        /// Whether it is the fixed-width font.
        public var monospace: Bool

        /// Creates a font.
        public init(size: Double, lineHeight: Double, bold: Bool = false, monospace: Bool = false) {
            self.size = size
            self.lineHeight = lineHeight
            self.bold = bold
            self.monospace = monospace
        }

        /// The same font, bold.
        public var emboldened: Font {
            var font = self
            font.bold = true
            return font
        }
    }

    // MARK: Text

    /// Body text, links and fact values: 15 px on 20 px lines.
    public static let body = Font(size: 15, lineHeight: 20)
    /// Titles: bold, 18 px on 24 px lines.
    public static let title = Font(size: 18, lineHeight: 24, bold: true)
    /// Captions, image captions, progress percentages: 13 px on 18 px lines.
    public static let caption = Font(size: 13, lineHeight: 18)
    /// Code: the fixed-width font, 13 px on 18 px lines.
    public static let code = Font(size: 13, lineHeight: 18, monospace: true)
    /// Badges: bold, 12 px on 16 px lines.
    public static let badge = Font(size: 12, lineHeight: 16, bold: true)
    /// Buttons: semi-bold body text.
    public static let button = Font(size: 15, lineHeight: 20, bold: true)

    /// The average advance of a narrow character in a proportional font, in em.
    public static let narrowAdvance = 0.55
    /// The advance of every narrow character in the fixed-width font, in em.
    public static let monospaceAdvance = 0.6
    /// The advance of an East Asian wide character or an emoji (``TerminalWidth`` gives it 2 columns), in em.
    public static let wideAdvance = 1.0
    /// How much wider bold narrow characters are.
    public static let boldFactor = 1.05

    /// The font of a text role.
    public static func font(for role: TextRole) -> Font {
        switch role {
        case .body: body
        case .title: title
        case .caption: caption
        case .code: code
        }
    }

    // MARK: Elements

    /// One spacing unit of a stack, in CSS pixels.
    public static let spacingUnit = 8.0
    /// The image placeholder's size when the image's size is unknown: 240 × 160.
    public static let defaultImageSize = (width: 240, height: 160)
    /// The tallest image placeholder at its natural size: taller images are scaled down to it.
    public static let maxImageHeight = 240.0
    /// The gap between an image placeholder and its caption line (caption font).
    public static let imageCaptionGap = 4.0
    /// The vertical margin above and below a divider; the rule itself is 1 px.
    public static let dividerMargin = 4.0
    /// The narrowest a divider is drawn on its own.
    public static let dividerMinWidth = 48.0
    /// The widest a fact label is drawn; longer labels end with an ellipsis.
    public static let factLabelMaxWidth = 200.0
    /// The gap between a fact's label and its value.
    public static let factColumnGap = 12.0
    /// The gap between two facts.
    public static let factRowGap = 2.0
    /// The gap between a progress element's label and its bar row.
    public static let progressGap = 4.0
    /// The progress bar's width (it shrinks when the width is smaller) and height.
    public static let progressBar = (width: 160.0, height: 8.0)
    /// The gap between the progress bar and its percentage.
    public static let progressPercentGap = 8.0
    /// A button's padding (vertical, horizontal) and border width.
    public static let buttonPadding = (vertical: 6.0, horizontal: 12.0, border: 1.0)
    /// A badge's padding (vertical, horizontal).
    public static let badgePadding = (vertical: 2.0, horizontal: 8.0)

    // MARK: Transcripts

    /// The widest bubble, border included.
    public static let bubbleMaxWidth = 560.0
    /// A bubble's padding (vertical, horizontal) and border width.
    public static let bubblePadding = (vertical: 8.0, horizontal: 12.0, border: 1.0)
    /// The widest content of a bubble: what to pass to ``HTMLRenderer/estimate(_:maxWidth:)`` for a
    /// message drawn in a transcript with the standard components.
    public static var bubbleContentWidth: Double { bubbleMaxWidth - 2 * (bubblePadding.horizontal + bubblePadding.border) }
    /// The widest transcript column.
    public static let transcriptMaxWidth = 760.0
    /// The avatar's diameter; the avatar column is this plus ``avatarGap``.
    public static let avatarSize = 32.0
    /// The gap between the avatar column and the bubble.
    public static let avatarGap = 8.0
}

/// The estimate of ``HTMLRenderer/estimate(_:maxWidth:)``: pure functions of the element and the width.
enum HTMLEstimator {
    /// The size `element` takes in a column `maxWidth` px wide, drawn by the standard components.
    static func size(_ element: ViewElement, maxWidth rawWidth: Double) -> HTMLSize {
        let maxWidth = rawWidth.isFinite ? max(rawWidth, 1) : 1
        switch element {
        case .text(let text):
            let font = HTMLMetrics.font(for: text.role)
            return block(text.text, font: text.emphasis == .strong ? font.emboldened : font, maxWidth: maxWidth, maxLines: text.maxLines)
        case .link(let link):
            let shown = link.text.isEmpty ? (HTMLEscaping.allowedURL(link.url) ?? "") : link.text
            return block(shown, font: HTMLMetrics.body, maxWidth: maxWidth, maxLines: nil)
        case .image(let image):
            let box = HTMLImageBox(image)
            let width = min(box.width, maxWidth)
            let height = width * box.ratioHeight / box.ratioWidth
            return HTMLSize(width: width, height: height + HTMLMetrics.imageCaptionGap + HTMLMetrics.caption.lineHeight)
        case .stack(let stack):
            let gap = Double(HTMLStackSpacing.clamped(stack.spacing)) * HTMLMetrics.spacingUnit
            return stack.axis == .vertical
                ? vertical(stack.children, gap: gap, maxWidth: maxWidth) : horizontal(stack.children, gap: gap, maxWidth: maxWidth)
        case .facts(let facts):
            return self.facts(facts, maxWidth: maxWidth)
        case .progress(let progress):
            return self.progress(progress, maxWidth: maxWidth)
        case .button(let button):
            let padding = HTMLMetrics.buttonPadding
            let width = textWidth(button.title, font: HTMLMetrics.button) + 2 * (padding.horizontal + padding.border)
            return HTMLSize(width: min(width, maxWidth), height: HTMLMetrics.button.lineHeight + 2 * (padding.vertical + padding.border))
        case .divider:
            return HTMLSize(width: min(HTMLMetrics.dividerMinWidth, maxWidth), height: 1 + 2 * HTMLMetrics.dividerMargin)
        case .badge(let badge):
            let padding = HTMLMetrics.badgePadding
            let width = textWidth(badge.text, font: HTMLMetrics.badge) + 2 * padding.horizontal
            return HTMLSize(width: min(width, maxWidth), height: HTMLMetrics.badge.lineHeight + 2 * padding.vertical)
        }
    }

    // MARK: Text

    /// The advance of one character.
    static func advance(_ character: Character, font: HTMLMetrics.Font) -> Double {
        switch TerminalWidth.of(character) {
        case 0: return 0
        case 2: return HTMLMetrics.wideAdvance * font.size
        default:
            let em = font.monospace ? HTMLMetrics.monospaceAdvance : HTMLMetrics.narrowAdvance
            return em * font.size * (font.bold ? HTMLMetrics.boldFactor : 1)
        }
    }

    /// The width of `text` on one line.
    static func textWidth(_ text: some StringProtocol, font: HTMLMetrics.Font) -> Double {
        var width = 0.0
        for character in text { width += advance(character, font: font) }
        return width
    }

    /// The widths of the lines `text` takes once wrapped to `maxWidth`: line breaks are kept (a final one
    /// adds no line), lines wrap greedily at spaces, and a word wider than the width breaks between
    /// characters (CSS `white-space: pre-wrap; overflow-wrap: anywhere`).
    static func lines(_ text: String, font: HTMLMetrics.Font, maxWidth: Double) -> [Double] {
        guard !text.isEmpty else { return [] }
        var hardLines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if hardLines.count > 1 && hardLines.last?.isEmpty == true { hardLines.removeLast() }
        let space = advance(" ", font: font)
        var widths: [Double] = []
        for hardLine in hardLines {
            let whole = textWidth(hardLine, font: font)
            if whole <= maxWidth {
                widths.append(whole)
                continue
            }
            var current = 0.0
            var empty = true
            for word in hardLine.split(separator: " ", omittingEmptySubsequences: false) {
                let wordWidth = textWidth(word, font: font)
                if !empty && current + space + wordWidth <= maxWidth {
                    current += space + wordWidth
                    continue
                }
                if !empty {
                    // The space hangs at the end of the line it follows.
                    widths.append(current)
                    current = 0
                    empty = true
                }
                if wordWidth <= maxWidth {
                    current = wordWidth
                    empty = false
                    continue
                }
                // A word wider than the line: broken between characters.
                for character in word {
                    let width = advance(character, font: font)
                    if !empty && current + width > maxWidth {
                        widths.append(current)
                        current = 0
                    }
                    current += width
                    empty = false
                }
            }
            widths.append(current)
        }
        return widths
    }

    /// The size of a block of text: as wide as its widest line when it fits, else as wide as the column
    /// (`fit-content`), and as tall as its lines, at most `maxLines`.
    static func block(_ text: String, font: HTMLMetrics.Font, maxWidth: Double, maxLines: Int?) -> HTMLSize {
        let widths = lines(text, font: font, maxWidth: maxWidth)
        guard !widths.isEmpty else { return HTMLSize(width: 0, height: 0) }
        let maxContent = text.split(separator: "\n", omittingEmptySubsequences: false).map { textWidth($0, font: font) }.max() ?? 0
        let count = min(widths.count, max(maxLines ?? Int.max, 1))
        return HTMLSize(width: min(maxContent, maxWidth), height: Double(count) * font.lineHeight)
    }

    // MARK: Containers

    static func vertical(_ children: [ViewElement], gap: Double, maxWidth: Double) -> HTMLSize {
        var width = 0.0
        var height = 0.0
        for (index, child) in children.enumerated() {
            let size = self.size(child, maxWidth: maxWidth)
            width = max(width, size.width)
            height += size.height + (index > 0 ? gap : 0)
        }
        return HTMLSize(width: width, height: height)
    }

    /// Children in a wrapping row (`flex-wrap: wrap`): a child goes on the next line when it does not fit
    /// beside the ones before; a vertical divider is 1 px plus its margins wide and as tall as its line.
    static func horizontal(_ children: [ViewElement], gap: Double, maxWidth: Double) -> HTMLSize {
        var lines: [HTMLSize] = []
        var line = HTMLSize(width: 0, height: 0)
        var empty = true
        for child in children {
            let size =
                child == .divider
                ? HTMLSize(width: min(1 + 2 * HTMLMetrics.dividerMargin, maxWidth), height: 0) : self.size(child, maxWidth: maxWidth)
            if !empty && line.width + gap + size.width > maxWidth {
                lines.append(line)
                line = HTMLSize(width: 0, height: 0)
                empty = true
            }
            line.width += (empty ? 0 : gap) + size.width
            line.height = max(line.height, size.height)
            empty = false
        }
        if !empty { lines.append(line) }
        let height = lines.reduce(0) { $0 + $1.height } + Double(max(lines.count - 1, 0)) * gap
        return HTMLSize(width: lines.map(\.width).max() ?? 0, height: height)
    }

    static func facts(_ facts: [ViewFact], maxWidth: Double) -> HTMLSize {
        guard !facts.isEmpty else { return HTMLSize(width: 0, height: 0) }
        let labelFont = HTMLMetrics.body.emboldened
        let labelColumn = min(facts.map { textWidth($0.label, font: labelFont) }.max() ?? 0, HTMLMetrics.factLabelMaxWidth)
        let valueColumn = max(maxWidth - labelColumn - HTMLMetrics.factColumnGap, 1)
        var widest = 0.0
        var height = 0.0
        for (index, fact) in facts.enumerated() {
            let value = block(fact.value, font: HTMLMetrics.body, maxWidth: valueColumn, maxLines: nil)
            widest = max(widest, value.width)
            height += max(value.height, HTMLMetrics.body.lineHeight) + (index > 0 ? HTMLMetrics.factRowGap : 0)
        }
        return HTMLSize(width: min(labelColumn + HTMLMetrics.factColumnGap + widest, maxWidth), height: height)
    }

    static func progress(_ progress: ViewProgress, maxWidth: Double) -> HTMLSize {
        let label = HTMLProgressText(progress)
        let row = HTMLMetrics.progressBar.width + HTMLMetrics.progressPercentGap + textWidth(label.percent, font: HTMLMetrics.caption)
        let rowHeight = HTMLMetrics.caption.lineHeight
        guard !label.line.isEmpty else { return HTMLSize(width: min(row, maxWidth), height: rowHeight) }
        let text = block(label.line, font: HTMLMetrics.body, maxWidth: maxWidth, maxLines: nil)
        return HTMLSize(width: max(text.width, min(row, maxWidth)), height: text.height + HTMLMetrics.progressGap + rowHeight)
    }
}

/// A stack's spacing as the stylesheet has it: 0 to ``ViewLimits/maxSpacing`` units.
enum HTMLStackSpacing {
    static let maximum = ViewLimits.standard.maxSpacing

    static func clamped(_ spacing: Int) -> Int { min(max(spacing, 0), maximum) }
}

/// An image placeholder's box at its natural size: the image's size scaled down to at most
/// ``HTMLMetrics/maxImageHeight`` tall, or ``HTMLMetrics/defaultImageSize`` when the size is unknown.
struct HTMLImageBox {
    /// The aspect ratio, as a width and a height (both at least 1).
    let ratioWidth: Double
    let ratioHeight: Double
    /// The width at the natural size, before fitting to the column, to a hundredth of a pixel.
    let width: Double

    init(_ image: ViewImage) {
        let known = image.width.flatMap { width in image.height.map { (width, $0) } }.flatMap { $0.0 > 0 && $0.1 > 0 ? $0 : nil }
        let (width, height) = known ?? HTMLMetrics.defaultImageSize
        ratioWidth = Double(width)
        ratioHeight = Double(height)
        let natural = Double(height) > HTMLMetrics.maxImageHeight ? HTMLMetrics.maxImageHeight * Double(width) / Double(height) : Double(width)
        // Rounded to the hundredth of a pixel the stylesheet writes.
        self.width = (natural * 100).rounded() / 100
    }
}

/// What a progress element writes: its label line and its percentage.
struct HTMLProgressText {
    /// The label, then ` · ` and the detail when there is one.
    let line: String
    /// The label alone.
    let label: String
    /// The detail, or `nil`.
    let detail: String?
    /// The fraction as a whole percentage, from 0 to 100.
    let value: Int
    /// `42%`.
    var percent: String { "\(value)%" }

    init(_ progress: ViewProgress) {
        let label = progress.label
        let detail = progress.detail.flatMap { $0.isEmpty ? nil : $0 }
        self.label = label
        self.detail = detail
        line = detail.map { label.isEmpty ? $0 : label + " · " + $0 } ?? label
        let fraction = progress.fraction.isFinite ? min(max(progress.fraction, 0), 1) : 0
        value = Int((fraction * 100).rounded())
    }
}
