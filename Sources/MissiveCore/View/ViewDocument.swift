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
