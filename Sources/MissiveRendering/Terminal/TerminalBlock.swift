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
