import MissiveCore

/// Comparing JSON values exactly, as `roundtrip.examples` compares an example with its first encoding: the JSON
/// layer's ``JSONValue`` equality (decimal numbers, UTF-16 strings, members in any order), with the first
/// difference named.
extension JSONValue {
    /// The first place where `other` differs from this value, in words, or `nil` when they are equal. The
    /// path starts at `path` (`content.score`, `content.options[2]`).
    func difference(from other: JSONValue, at path: String = "content", this: String = "the example", that: String = "the encoding") -> String? {
        switch (self, other) {
        case (.object, .object):
            let mine = membersByKey, theirs = other.membersByKey
            for key in mine.keys.sorted(by: Self.keyOrder) {
                let name = "\(path).\(String(decoding: key, as: UTF16.self))"
                guard let values = theirs[key] else { return "\(name) is in \(this) and missing from \(that)" }
                let own = mine[key]!
                guard own.count == values.count else { return "\(name) appears \(own.count) times in \(this) and \(values.count) in \(that)" }
                for (left, right) in zip(own, values) {
                    if let difference = left.difference(from: right, at: name, this: this, that: that) { return difference }
                }
            }
            if let added = theirs.keys.sorted(by: Self.keyOrder).first(where: { mine[$0] == nil }) {
                return "\(path).\(String(decoding: added, as: UTF16.self)) is in \(that) and missing from \(this)"
            }
            return nil
        case (.array(let mine), .array(let theirs)):
            for (index, (left, right)) in zip(mine, theirs).enumerated() {
                if let difference = left.difference(from: right, at: "\(path)[\(index)]", this: this, that: that) { return difference }
            }
            return mine.count == theirs.count ? nil : "\(path) has \(mine.count) elements in \(this) and \(theirs.count) in \(that)"
        default:
            guard self != other else { return nil }
            if kind != other.kind { return "\(path) is \(kind) \(excerpt) in \(this) and \(other.kind) \(other.excerpt) in \(that)" }
            return "\(path) is \(excerpt) in \(this) and \(other.excerpt) in \(that)"
        }
    }

    /// A short spelling of a scalar value for messages.
    private var excerpt: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .number(_, let spelling): JSONDecimal(spelling).description
        case .string(let text):
            String(decoding: text.utf16.prefix(40), as: UTF16.self).debugDescription + (text.utf16.count > 40 ? "…" : "")
        case .array(let values): "of \(values.count) elements"
        case .object(let members): "of \(members.count) members"
        }
    }

    private static func keyOrder(_ left: [UInt16], _ right: [UInt16]) -> Bool { left.lexicographicallyPrecedes(right) }
}
