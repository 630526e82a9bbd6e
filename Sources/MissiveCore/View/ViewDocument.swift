/// The limits a view must keep. A host cuts what goes past them; the conformance suite reports it.
public struct ViewLimits: Sendable, Hashable {
    /// The longest view document, in bytes.
    public var maxDocumentBytes = 64 * 1024
    /// The deepest nesting of stacks: a tree of one element has depth 1.
    public var maxDepth = 8
    /// The most elements in a tree.
    public var maxElements = 256
    /// The longest text of one element, in Unicode code points.
    public var maxTextCodePoints = 4096
    /// The largest line limit of a text element.
    public var maxLineLimit = 100
    /// The largest spacing of a stack.
    public var maxSpacing = 8
    /// The largest width or height of an image, in pixels.
    public var maxImageSide = 16384
    /// The longest URL, in bytes.
    public var maxURLBytes = 2048

    /// The limits of `missive.view.v1`.
    public static let standard = ViewLimits()

    /// Creates the standard limits.
    public init() {}
}

/// Something wrong with a view, found while reading or sanitizing it.
public struct ViewProblem: Sendable, Hashable, CustomStringConvertible {
    /// How serious it is.
    public enum Severity: String, Sendable, Hashable {
        /// A rule of `missive.view.v1` is broken: the host repaired or dropped the part.
        case invalid
        /// An element of a kind this host does not know was replaced by its declared fallback, as the
        /// format intends; not an error.
        case fallback
    }

    /// Where: `root`, `root.children[2]`, `root.children[0].fallback`.
    public let path: String
    /// What is wrong.
    public let message: String
    /// How serious it is.
    public let severity: Severity

    /// `path: message`.
    public var description: String { "\(path): \(message)" }

    /// Creates a problem.
    public init(path: String, message: String, severity: Severity = .invalid) {
        self.path = path
        self.message = message
        self.severity = severity
    }
}

/// A view read from its JSON form: the sanitized tree, or `nil` when nothing usable was left, and what
/// was wrong.
public struct ViewReading: Sendable {
    /// The sanitized tree.
    public var element: ViewElement?
    /// The problems, in document order.
    public var problems: [ViewProblem]

    /// Creates a reading.
    public init(element: ViewElement?, problems: [ViewProblem]) {
        self.element = element
        self.problems = problems
    }

    /// The problems that break a rule (not the fallbacks taken).
    public var violations: [ViewProblem] { problems.filter { $0.severity == .invalid } }
}

/// The JSON form of a view (`missive.view.v1`), read and written.
///
/// A document is one element object; its members are listed in `docs/VIEWS.md`. Reading is forgiving the
/// way Adaptive Cards are: an element of an unknown kind is replaced by its `fallback` member (an element)
/// or skipped; an element missing a required member is skipped; members this version does not know are
/// ignored. Every problem is reported, and the result is sanitized (``ViewSanitizer``).
public enum ViewDocument {
    /// Reads a view document.
    public static func read(_ bytes: [UInt8], limits: ViewLimits = .standard) -> ViewReading {
        guard bytes.count <= limits.maxDocumentBytes else {
            return ViewReading(
                element: nil,
                problems: [ViewProblem(path: "root", message: "the document has \(bytes.count) bytes; at most \(limits.maxDocumentBytes) are allowed")])
        }
        let value: JSONValue
        do {
            // Deep enough for stacks nested past the limit to be read and then cut with a clear problem.
            value = try JSONValue.parse(bytes, maxDepth: 4 * limits.maxDepth + 8, loneSurrogates: .replace)
        } catch {
            return ViewReading(element: nil, problems: [ViewProblem(path: "root", message: "not valid JSON: \(error)")])
        }
        var problems: [ViewProblem] = []
        let element = self.element(value, path: "root", problems: &problems)
        var sanitizer = ViewSanitizer(limits: limits)
        let sanitized = element.flatMap { sanitizer.sanitize($0, path: "root") }
        return ViewReading(element: sanitized, problems: problems + sanitizer.problems)
    }

    /// The JSON form of a tree: members in a fixed order, so that the same tree gives the same bytes.
    public static func encode(_ element: ViewElement) -> [UInt8] {
        var out = ""
        write(element, into: &out)
        return Array(out.utf8)
    }

    // MARK: Reading

    private static func element(_ value: JSONValue, path: String, problems: inout [ViewProblem]) -> ViewElement? {
        guard case .object = value else {
            problems.append(ViewProblem(path: path, message: "an element must be an object, not \(value.kindDescription)"))
            return nil
        }
        guard case .string(let kindName)? = value["type"] else {
            problems.append(ViewProblem(path: path, message: "an element needs a \"type\" string"))
            return nil
        }
        guard let kind = ViewElement.Kind(rawValue: kindName) else {
            if let fallback = value["fallback"] {
                problems.append(ViewProblem(path: path, message: "unknown element type \"\(kindName)\": its fallback is used", severity: .fallback))
                return element(fallback, path: path + ".fallback", problems: &problems)
            }
            problems.append(ViewProblem(path: path, message: "unknown element type \"\(kindName)\" without a fallback: skipped"))
            return nil
        }
        var reader = MemberReader(value: value, path: path, kind: kindName)
        defer { problems += reader.problems }
        switch kind {
        case .text:
            guard let text = reader.string("text") else { return nil }
            let role = reader.enumeration("role", TextRole.self) ?? .body
            let emphasis = reader.enumeration("emphasis", TextEmphasis.self) ?? .none
            return .text(ViewText(text, role: role, emphasis: emphasis, maxLines: reader.integer("maxLines")))
        case .link:
            guard let text = reader.string("text"), let url = reader.string("url") else { return nil }
            return .link(ViewLink(text, url: url))
        case .image:
            guard let url = reader.string("url") else { return nil }
            return .image(ViewImage(url: url, width: reader.integer("width"), height: reader.integer("height"), alt: reader.string("alt", required: false) ?? ""))
        case .stack:
            let axis = reader.enumeration("axis", ViewStack.Axis.self) ?? .vertical
            let spacing = reader.integer("spacing") ?? 0
            guard let items = reader.array("children") else { return nil }
            let children = items.enumerated().compactMap { index, item in
                element(item, path: "\(path).children[\(index)]", problems: &problems)
            }
            return .stack(ViewStack(axis: axis, spacing: spacing, children: children))
        case .facts:
            guard let items = reader.array("facts") else { return nil }
            var facts: [ViewFact] = []
            for (index, item) in items.enumerated() {
                var row = MemberReader(value: item, path: "\(path).facts[\(index)]", kind: "fact")
                if let label = row.string("label"), let value = row.string("value") { facts.append(ViewFact(label, value)) }
                problems += row.problems
            }
            return .facts(facts)
        case .progress:
            guard let label = reader.string("label"), let fraction = reader.number("fraction") else { return nil }
            return .progress(ViewProgress(label, fraction: fraction, detail: reader.string("detail", required: false)))
        case .button:
            guard let title = reader.string("title"), let action = reader.string("action") else { return nil }
            var arguments: String?
            if let value = value["arguments"] {
                if case .array = value {
                    arguments = value.serialized
                } else {
                    reader.problems.append(ViewProblem(path: path + ".arguments", message: "must be an array, not \(value.kindDescription)"))
                }
            }
            return .button(ViewButton(title, action: action, arguments: arguments))
        case .divider:
            return .divider
        case .badge:
            guard let text = reader.string("text") else { return nil }
            return .badge(ViewBadge(text, tone: reader.enumeration("tone", ViewBadge.Tone.self) ?? .neutral))
        }
    }

    /// Reads an element's members, noting each one that is missing or of the wrong kind.
    private struct MemberReader {
        let value: JSONValue
        let path: String
        let kind: String
        var problems: [ViewProblem] = []

        mutating func string(_ key: String, required: Bool = true) -> String? {
            switch value[key] {
            case .string(let text)?: return text
            case nil, .null?:
                if required { problems.append(ViewProblem(path: path, message: "a \(kind) needs \"\(key)\": skipped")) }
                return nil
            case let other?:
                problems.append(ViewProblem(path: "\(path).\(key)", message: "must be a string, not \(other.kindDescription)"))
                return nil
            }
        }

        mutating func number(_ key: String) -> Double? {
            switch value[key] {
            case .number(let number, _)?: return number
            case nil, .null?:
                problems.append(ViewProblem(path: path, message: "a \(kind) needs \"\(key)\": skipped"))
                return nil
            case let other?:
                problems.append(ViewProblem(path: "\(path).\(key)", message: "must be a number, not \(other.kindDescription)"))
                return nil
            }
        }

        mutating func integer(_ key: String) -> Int? {
            switch value[key] {
            case nil, .null?: return nil
            case .number(let number, _)? where number.rounded() == number && abs(number) < 1e15: return Int(number)
            case let other?:
                problems.append(ViewProblem(path: "\(path).\(key)", message: "must be an integer, not \(other.kindDescription)"))
                return nil
            }
        }

        mutating func array(_ key: String) -> [JSONValue]? {
            switch value[key] {
            case .array(let items)?: return items
            case nil, .null?:
                problems.append(ViewProblem(path: path, message: "a \(kind) needs \"\(key)\": skipped"))
                return nil
            case let other?:
                problems.append(ViewProblem(path: "\(path).\(key)", message: "must be an array, not \(other.kindDescription)"))
                return nil
            }
        }

        mutating func enumeration<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) -> T? where T.RawValue == String {
            guard let raw = value[key] else { return nil }
            if case .string(let name) = raw, let known = T(rawValue: name) { return known }
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            problems.append(ViewProblem(path: "\(path).\(key)", message: "must be one of \(names); the default is used"))
            return nil
        }
    }

    // MARK: Writing

    private static func write(_ element: ViewElement, into out: inout String) {
        func member(_ key: String, _ text: String) {
            out += ",\"\(key)\":"
            JSONValue.quote(text, into: &out)
        }
        func number(_ key: String, _ value: some CustomStringConvertible) { out += ",\"\(key)\":\(value)" }
        out += "{\"type\":\"\(element.kind.rawValue)\""
        switch element {
        case .text(let text):
            member("text", text.text)
            if text.role != .body { member("role", text.role.rawValue) }
            if text.emphasis != .none { member("emphasis", text.emphasis.rawValue) }
            if let maxLines = text.maxLines { number("maxLines", maxLines) }
        case .link(let link):
            member("text", link.text)
            member("url", link.url)
        case .image(let image):
            member("url", image.url)
            if let width = image.width { number("width", width) }
            if let height = image.height { number("height", height) }
            member("alt", image.alt)
        case .stack(let stack):
            member("axis", stack.axis.rawValue)
            number("spacing", stack.spacing)
            out += ",\"children\":["
            for (index, child) in stack.children.enumerated() {
                if index > 0 { out += "," }
                write(child, into: &out)
            }
            out += "]"
        case .facts(let facts):
            out += ",\"facts\":["
            for (index, fact) in facts.enumerated() {
                if index > 0 { out += "," }
                out += "{\"label\":"
                JSONValue.quote(fact.label, into: &out)
                out += ",\"value\":"
                JSONValue.quote(fact.value, into: &out)
                out += "}"
            }
            out += "]"
        case .progress(let progress):
            member("label", progress.label)
            number("fraction", progress.fraction.isFinite ? progress.fraction : 0)
            if let detail = progress.detail { member("detail", detail) }
        case .button(let button):
            member("title", button.title)
            member("action", button.action)
            if let arguments = button.arguments { out += ",\"arguments\":\(arguments)" }
        case .divider:
            break
        case .badge(let badge):
            member("text", badge.text)
            if badge.tone != .neutral { member("tone", badge.tone.rawValue) }
        }
        out += "}"
    }
}

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

extension ViewElement {
    /// The view a host shows for a type that describes none: the digest as body text, and for a media type
    /// its media (an image for `image/*` with an http or https URL, else a link to the media).
    public static func defaultView(digest: String, media: MediaReference?) -> ViewElement {
        guard let media, let url = media.remoteURL, ViewSanitizer.isAllowedURL(url) else { return .text(digest) }
        if media.mimeType.lowercased().hasPrefix("image/") {
            return .image(url: url, alt: digest)
        }
        return .vstack {
            ViewElement.text(digest)
            ViewElement.link("Open \(media.mimeType)", url: url)
        }
    }
}
