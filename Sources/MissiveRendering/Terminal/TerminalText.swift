import MissiveCore

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
