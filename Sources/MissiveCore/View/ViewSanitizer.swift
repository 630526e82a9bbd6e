/// Holds a tree to the rules of `missive.view.v1`, repairing what it can and reporting each repair.
///
/// - Strings are cleaned by ``TextHygiene``: text elements keep their line breaks, every other string is
///   one line. Text longer than ``ViewLimits/maxTextCodePoints`` is cut.
/// - A link whose URL is not http or https becomes its text; such an image becomes its alternative text.
/// - Negative or oversized image sizes are dropped, a fraction is clamped to 0...1, a spacing to its
///   range, a line limit below 1 is dropped.
/// - A button whose action id is not ASCII letters, digits, `.`, `_` and `-` (1 to 64 of them), or whose
///   arguments are not a JSON array, is dropped.
/// - Stacks nested past ``ViewLimits/maxDepth``, and elements past ``ViewLimits/maxElements``, are dropped.
/// - Empty texts, links, badges and fact lists are dropped silently, and so are empty stacks.
public struct ViewSanitizer {
    /// The limits held to.
    public let limits: ViewLimits
    /// What was repaired, so far.
    public private(set) var problems: [ViewProblem] = []
    private var elements = 0
    private var reportedCount = false

    /// Creates a sanitizer.
    public init(limits: ViewLimits = .standard) {
        self.limits = limits
    }

    /// `element` held to the rules, or `nil` when nothing of it is left.
    public mutating func sanitize(_ element: ViewElement, path: String = "root") -> ViewElement? {
        sanitize(element, path: path, depth: 1)
    }

    /// Whether a URL may be shown as a link or fetched as an image: `http://` or `https://` (any case)
    /// followed by a host, without spaces, control characters, quotes or angle brackets, within the length
    /// limit.
    public static func isAllowedURL(_ url: String, limits: ViewLimits = .standard) -> Bool {
        guard url.utf8.count <= limits.maxURLBytes else { return false }
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = lower.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            rest = lower.dropFirst(7)
        } else {
            return false
        }
        guard let first = rest.first, first != "/", first != "?", first != "#" else { return false }
        return !url.unicodeScalars.contains {
            $0.value <= 0x20 || $0 == "\"" || $0 == "<" || $0 == ">" || $0 == "\\" || $0 == "`" || TextHygiene.isUnsafe($0)
        }
    }

    /// Whether an action id is 1 to 64 ASCII letters, digits, `.`, `_` and `-` (``NameGrammar/actionIDProblem(_:)``).
    public static func isValidActionID(_ action: String) -> Bool {
        NameGrammar.actionIDProblem(action) == nil
    }

    private mutating func note(_ path: String, _ message: String) {
        problems.append(ViewProblem(path: path, message: message))
    }

    private mutating func sanitize(_ element: ViewElement, path: String, depth: Int) -> ViewElement? {
        guard elements < limits.maxElements else {
            if !reportedCount {
                note(path, "more than \(limits.maxElements) elements: the rest are dropped")
                reportedCount = true
            }
            return nil
        }
        elements += 1
        switch element {
        case .text(var text):
            text.text = block(text.text, path: path + ".text")
            if let maxLines = text.maxLines {
                if maxLines < 1 {
                    note(path + ".maxLines", "must be at least 1: dropped")
                    text.maxLines = nil
                } else if maxLines > limits.maxLineLimit {
                    note(path + ".maxLines", "must be at most \(limits.maxLineLimit): lowered")
                    text.maxLines = limits.maxLineLimit
                }
            }
            return text.text.isEmpty ? nil : .text(text)
        case .link(var link):
            link.text = line(link.text, path: path + ".text")
            guard Self.isAllowedURL(link.url, limits: limits) else {
                note(path + ".url", "only http and https URLs are allowed: shown as text")
                return link.text.isEmpty ? nil : .text(ViewText(link.text))
            }
            if link.text.isEmpty { link.text = link.url }
            return .link(link)
        case .image(var image):
            image.alt = line(image.alt, path: path + ".alt")
            guard Self.isAllowedURL(image.url, limits: limits) else {
                note(path + ".url", "only http and https URLs are allowed: shown as its alternative text")
                return image.alt.isEmpty ? nil : .text(ViewText(image.alt, role: .caption))
            }
            image.width = size(image.width, path: path + ".width")
            image.height = size(image.height, path: path + ".height")
            return .image(image)
        case .stack(var stack):
            if stack.spacing < 0 || stack.spacing > limits.maxSpacing {
                note(path + ".spacing", "must be 0 to \(limits.maxSpacing): clamped")
                stack.spacing = min(max(stack.spacing, 0), limits.maxSpacing)
            }
            guard depth < limits.maxDepth || stack.children.isEmpty else {
                note(path, "stacks nested deeper than \(limits.maxDepth): the children are dropped")
                return nil
            }
            stack.children = stack.children.enumerated().compactMap { index, child in
                sanitize(child, path: "\(path).children[\(index)]", depth: depth + 1)
            }
            return stack.children.isEmpty ? nil : .stack(stack)
        case .facts(let facts):
            let cleaned = facts.enumerated().map { index, fact in
                ViewFact(line(fact.label, path: "\(path).facts[\(index)].label"), line(fact.value, path: "\(path).facts[\(index)].value"))
            }
            return cleaned.isEmpty ? nil : .facts(cleaned)
        case .progress(var progress):
            progress.label = line(progress.label, path: path + ".label")
            progress.detail = progress.detail.map { line($0, path: path + ".detail") }
            if !progress.fraction.isFinite || progress.fraction < 0 || progress.fraction > 1 {
                note(path + ".fraction", "must be a number from 0 to 1: clamped")
                progress.fraction = progress.fraction.isNaN ? 0 : min(max(progress.fraction, 0), 1)
            }
            return .progress(progress)
        case .button(var button):
            button.title = line(button.title, path: path + ".title")
            guard Self.isValidActionID(button.action) else {
                note(path + ".action", "an action id is 1 to 64 ASCII letters, digits, '.', '_' and '-': the button is dropped")
                return nil
            }
            if let arguments = button.arguments {
                guard case .array? = try? JSONValue.parse(Array(arguments.utf8), maxDepth: 16, loneSurrogates: .replace) else {
                    note(path + ".arguments", "must be one JSON array: the button is dropped")
                    return nil
                }
            }
            return button.title.isEmpty ? nil : .button(button)
        case .divider:
            return .divider
        case .badge(var badge):
            badge.text = line(badge.text, path: path + ".text")
            return badge.text.isEmpty ? nil : .badge(badge)
        }
    }

    private mutating func line(_ text: String, path: String) -> String { cut(TextHygiene.line(text), path: path) }

    private mutating func block(_ text: String, path: String) -> String { cut(TextHygiene.block(text), path: path) }

    private mutating func cut(_ text: String, path: String) -> String {
        let cut = TextHygiene.cut(text, toCodePoints: limits.maxTextCodePoints)
        if cut != text { note(path, "longer than \(limits.maxTextCodePoints) code points: cut") }
        return cut
    }

    private mutating func size(_ value: Int?, path: String) -> Int? {
        guard let value else { return nil }
        guard value >= 0, value <= limits.maxImageSide else {
            note(path, "must be 0 to \(limits.maxImageSide) pixels: dropped")
            return nil
        }
        return value
    }
}

extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
