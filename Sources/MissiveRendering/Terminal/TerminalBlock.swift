import MissiveCore

/// A colour of the terminal's palette (the 16 ANSI colours).
public enum TerminalColor: UInt8, Sendable, Hashable, CaseIterable {
    case black = 30, red, green, yellow, blue, magenta, cyan, white
    case brightBlack = 90, brightRed, brightGreen, brightYellow, brightBlue, brightMagenta, brightCyan, brightWhite
}

/// How a span of text looks. Styles never change how many columns text takes.
public struct TerminalStyle: Sendable, Hashable {
    public var bold = false
    public var dim = false
    public var italic = false
    public var underline = false
    public var inverse = false
    /// The foreground colour, or `nil` for the terminal's own.
    public var color: TerminalColor?

    /// No style.
    public static let plain = TerminalStyle()

    /// Creates a style.
    public init(bold: Bool = false, dim: Bool = false, italic: Bool = false, underline: Bool = false, inverse: Bool = false, color: TerminalColor? = nil) {
        self.bold = bold
        self.dim = dim
        self.italic = italic
        self.underline = underline
        self.inverse = inverse
        self.color = color
    }

    /// The SGR sequence that sets the style after a reset, or `""` for plain.
    var sgr: String {
        var codes: [String] = []
        if bold { codes.append("1") }
        if dim { codes.append("2") }
        if italic { codes.append("3") }
        if underline { codes.append("4") }
        if inverse { codes.append("7") }
        if let color { codes.append(String(color.rawValue)) }
        return codes.isEmpty ? "" : "\u{1B}[" + codes.joined(separator: ";") + "m"
    }
}

/// A run of text in one style. Its text is clean (no control characters) and on one line.
public struct TerminalSpan: Sendable, Hashable {
    /// The text.
    public let text: String
    /// Its style.
    public let style: TerminalStyle
    /// The columns it takes (``TerminalWidth``).
    public let columns: Int

    /// Creates a span; `text` must already be clean and on one line.
    public init(_ text: String, style: TerminalStyle = .plain) {
        self.text = text
        self.style = style
        self.columns = TerminalWidth.of(text)
    }
}

/// One row of a terminal drawing.
public struct TerminalLine: Sendable, Hashable {
    /// The spans, left to right.
    public private(set) var spans: [TerminalSpan] = []
    /// The columns the line takes.
    public private(set) var columns = 0

    /// An empty line.
    public init() {}

    /// A line of one span.
    public init(_ text: String, style: TerminalStyle = .plain) {
        append(text, style: style)
    }

    /// Appends text in a style.
    public mutating func append(_ text: String, style: TerminalStyle = .plain) {
        guard !text.isEmpty else { return }
        append(TerminalSpan(text, style: style))
    }

    /// Appends a span.
    public mutating func append(_ span: TerminalSpan) {
        spans.append(span)
        columns += span.columns
    }

    /// Appends every span of another line.
    public mutating func append(_ line: TerminalLine) {
        for span in line.spans { append(span) }
    }

    /// The line followed by spaces up to `width` columns.
    public func padded(to width: Int) -> TerminalLine {
        guard columns < width else { return self }
        var copy = self
        copy.append(String(repeating: " ", count: width - columns))
        return copy
    }

    /// The text without styles.
    public var plainText: String { spans.map(\.text).joined() }

    /// The line with ANSI styles when `colors` is true, else its plain text.
    public func rendered(colors: Bool) -> String {
        guard colors else { return plainText }
        var out = ""
        for span in spans {
            let sgr = span.style.sgr
            out += sgr.isEmpty ? span.text : sgr + span.text + "\u{1B}[0m"
        }
        return out
    }
}

/// A rectangle of terminal lines: what a component draws.
public struct TerminalBlock: Sendable, Hashable {
    /// The lines, top to bottom; each may be narrower than ``columns``.
    public var lines: [TerminalLine]

    /// A block of these lines.
    public init(_ lines: [TerminalLine] = []) {
        self.lines = lines
    }

    /// The widest line's columns.
    public var columns: Int { lines.map(\.columns).max() ?? 0 }
    /// The number of lines.
    public var rows: Int { lines.count }
    /// Columns and rows.
    public var size: TerminalSize { TerminalSize(columns: columns, rows: rows) }

    /// Appends the lines of another block below this one.
    public mutating func append(_ block: TerminalBlock) { lines += block.lines }

    /// `count` empty lines.
    public static func blank(_ count: Int) -> TerminalBlock { TerminalBlock(Array(repeating: TerminalLine(), count: max(count, 0))) }
}

/// A size in terminal cells.
public struct TerminalSize: Sendable, Hashable, CustomStringConvertible {
    /// Columns.
    public var columns: Int
    /// Rows.
    public var rows: Int

    /// Creates a size.
    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    /// `COLUMNSxROWS`.
    public var description: String { "\(columns)x\(rows)" }
}

/// Text wrapped to a width, the way every terminal component wraps: at spaces where it can, inside a word
/// only when the word alone is wider than the width, never splitting a character.
public enum TerminalText {
    /// One piece of text to wrap, in a style.
    public struct Run: Sendable {
        public var text: String
        public var style: TerminalStyle
        /// Creates a run.
        public init(_ text: String, style: TerminalStyle = .plain) {
            self.text = text
            self.style = style
        }
    }

    /// `runs` wrapped into lines of at most `width` columns (at least 1). Words are separated by one space
    /// (runs of spaces count as one, and so does the boundary between two runs); a line break in the text
    /// starts a new line. With `maxLines`, the last kept line ends with `…`.
    public static func wrap(_ runs: [Run], width: Int, maxLines: Int? = nil) -> [TerminalLine] {
        let width = max(width, 1)
        var lines: [TerminalLine] = []
        var line = TerminalLine()
        for run in runs {
            let paragraphs = run.text.split(separator: "\n", omittingEmptySubsequences: false)
            for (paragraphIndex, paragraph) in paragraphs.enumerated() {
                if paragraphIndex > 0 {
                    lines.append(line)
                    line = TerminalLine()
                }
                for word in paragraph.split(separator: " ") {
                    let wordColumns = TerminalWidth.of(word)
                    let space = line.columns > 0 ? 1 : 0
                    if line.columns + space + wordColumns <= width {
                        if space == 1 { line.append(" ", style: run.style.underline ? .plain : run.style) }
                        line.append(String(word), style: run.style)
                        continue
                    }
                    if line.columns > 0 {
                        lines.append(line)
                        line = TerminalLine()
                    }
                    // A word wider than the line is cut between characters.
                    var piece = ""
                    var pieceColumns = 0
                    for character in word {
                        let columns = TerminalWidth.of(character)
                        if pieceColumns + columns > width && pieceColumns > 0 {
                            line.append(piece, style: run.style)
                            lines.append(line)
                            line = TerminalLine()
                            piece = ""
                            pieceColumns = 0
                        }
                        piece.append(character)
                        pieceColumns += columns
                    }
                    line.append(piece, style: run.style)
                }
            }
        }
        lines.append(line)
        if let maxLines, maxLines >= 1, lines.count > maxLines {
            lines = Array(lines.prefix(maxLines))
            lines[maxLines - 1] = ellipsized(lines[maxLines - 1], width: width)
        }
        return lines
    }

    /// `text` cut into lines of at most `width` columns between characters, keeping every space: for code.
    public static func hardWrap(_ text: String, width: Int, style: TerminalStyle = .plain, maxLines: Int? = nil) -> [TerminalLine] {
        let width = max(width, 1)
        var lines: [TerminalLine] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var piece = ""
            var columns = 0
            for character in paragraph {
                let next = TerminalWidth.of(character)
                if columns + next > width && columns > 0 {
                    lines.append(TerminalLine(piece, style: style))
                    piece = ""
                    columns = 0
                }
                piece.append(character)
                columns += next
            }
            lines.append(TerminalLine(piece, style: style))
        }
        if let maxLines, maxLines >= 1, lines.count > maxLines {
            lines = Array(lines.prefix(maxLines))
            lines[maxLines - 1] = ellipsized(lines[maxLines - 1], width: width)
        }
        return lines
    }

    /// `text` on one line of at most `width` columns, ending with `…` when it had to be cut.
    public static func truncate(_ text: String, width: Int, style: TerminalStyle = .plain) -> TerminalLine {
        let width = max(width, 1)
        guard TerminalWidth.of(text) > width else { return TerminalLine(text, style: style) }
        var kept = ""
        var columns = 0
        for character in text {
            let next = TerminalWidth.of(character)
            if columns + next > width - 1 { break }
            kept.append(character)
            columns += next
        }
        return TerminalLine(kept + "…", style: style)
    }

    /// A line cut so that `…` fits after it within `width`.
    private static func ellipsized(_ line: TerminalLine, width: Int) -> TerminalLine {
        var result = TerminalLine()
        var budget = width - 1
        for span in line.spans {
            guard budget > 0 else { break }
            if span.columns <= budget {
                result.append(span)
                budget -= span.columns
                continue
            }
            var kept = ""
            for character in span.text {
                let columns = TerminalWidth.of(character)
                if columns > budget { break }
                kept.append(character)
                budget -= columns
            }
            result.append(kept, style: span.style)
            budget = 0
        }
        result.append("…", style: line.spans.last?.style ?? .plain)
        return result
    }
}
