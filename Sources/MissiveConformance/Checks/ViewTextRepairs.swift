import Foundation
import Missive

/// The cleaning a host gives the text of a view, found in the document as the plugin wrote it.
///
/// A host cleans every string of a view with ``TextHygiene`` before drawing it (docs/VIEWS.md, "Reading"),
/// which ``ViewDocument/read(_:limits:)`` does silently. The checker reports each string that needed it, so
/// that `view.valid` reports every repair: escape sequences and bidi controls removed, other control
/// characters turned into spaces, line breaks turned into spaces outside text elements. The line breaks
/// of a text element (LF, CR LF, CR, U+0085, U+2028, U+2029) are kept, as `\n`, and are no repair.
package enum ViewTextRepairs {
    /// The members whose strings are shown to people, and cleaned.
    static let shownMembers: Set<String> = ["text", "title", "alt", "label", "value", "detail"]

    /// One problem for each shown string of the document that cleaning changes, with its path (`root`,
    /// `root.children[1].text`, `root.facts[0].value`). A document that is not JSON gives none: `view.renders`
    /// and the reading report it.
    package static func find(in document: [UInt8]) -> [ViewProblem] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(document)) else { return [] }
        var problems: [ViewProblem] = []
        walk(value, path: "root", into: &problems)
        return problems
    }

    private static func walk(_ value: Any, path: String, into problems: inout [ViewProblem]) {
        if let array = value as? [Any] {
            for (index, item) in array.enumerated() { walk(item, path: "\(path)[\(index)]", into: &problems) }
            return
        }
        guard let object = value as? [String: Any] else { return }
        let isTextElement = object["type"] as? String == "text"
        for key in object.keys.sorted() {
            let member = object[key]!
            if let string = member as? String {
                guard shownMembers.contains(key), let repair = repair(string, keepingLineBreaks: isTextElement && key == "text") else { continue }
                problems.append(ViewProblem(path: "\(path).\(key)", message: repair))
            } else {
                walk(member, path: "\(path).\(key)", into: &problems)
            }
        }
    }

    /// What cleaning does to `text`, in words, or `nil` when it leaves it as it is.
    static func repair(_ text: String, keepingLineBreaks: Bool) -> String? {
        let cleaned = keepingLineBreaks ? TextHygiene.block(text) : TextHygiene.line(text)
        guard cleaned != (keepingLineBreaks ? normalizingLineBreaks(text) : text) else { return nil }
        var what: [String] = []
        let scalars = text.unicodeScalars
        if scalars.contains(where: { $0 == "\u{1B}" || (0x90...0x9F).contains($0.value) }) { what.append("escape sequences removed") }
        if scalars.contains(where: { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) }) {
            what.append("bidi controls removed")
        }
        let breaks: Set<Unicode.Scalar> = ["\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"]
        if scalars.contains(where: { ($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) && $0 != "\u{1B}" && !breaks.contains($0) }) {
            what.append("control characters made spaces")
        }
        if !keepingLineBreaks && scalars.contains(where: breaks.contains) { what.append("line breaks made spaces (the string is one line)") }
        if what.isEmpty { what.append("cleaned") }
        return "\(what.joined(separator: ", ")): \(preview(Array(text.utf8), limit: 60)) is shown as \(preview(Array(cleaned.utf8), limit: 60))"
    }

    /// `text` with each line break written as `\n`, as a text element keeps them.
    private static func normalizingLineBreaks(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var previousCR = false
        for scalar in text.unicodeScalars {
            defer { previousCR = scalar == "\r" }
            if scalar == "\n" && previousCR { continue }
            out.append(["\r", "\u{85}", "\u{2028}", "\u{2029}"].contains(scalar) ? "\n" : scalar)
        }
        return String(out)
    }
}
