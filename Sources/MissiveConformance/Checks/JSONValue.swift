/// A JSON document read for comparing values exactly, as `roundtrip.examples` compares an example with its
/// first encoding.
///
/// - Numbers are decimal values, read from their spelling and never through a `Double`: `1.0`, `1`, `1e0`
///   and `10e-1` are equal, `3.14159265` and `3.14159` are not, and neither are two integers beyond 2^53
///   that a `Double` would round to one value.
/// - Strings are compared by their UTF-16 code units once escapes are resolved, so `"\u00e9"` equals `"é"`.
/// - An object's member order does not matter.
indirect enum JSONValue: Hashable {
    case null
    case bool(Bool)
    case number(Decimal)
    case string([UInt16])
    case array([JSONValue])
    /// Members by key; a key given twice keeps its values in order.
    case object([[UInt16]: [JSONValue]])

    /// A number as sign, significant digits (no leading or trailing zero) and the exponent of the last
    /// digit: 1.50 is (false, "15", -1); zero is (false, "", 0) whatever its sign or spelling.
    struct Decimal: Hashable {
        let negative: Bool
        let digits: [UInt8]
        let exponent: Int
    }

    /// Nesting deeper than this is not read: the checks compare small documents.
    static let maxDepth = 256

    /// The value of a complete JSON document, or `nil` when `bytes` is not one (or nests too deeply).
    init?(_ bytes: [UInt8]) {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        guard reader.at == bytes.count else { return nil }
        self = value
    }

    /// The name of the value's JSON kind: `null`, `boolean`, `number`, `string`, `array` or `object`.
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The first place where `other` differs from this value, in words, or `nil` when they are equal. The
    /// path starts at `path` (`content.score`, `content.options[2]`).
    func difference(from other: JSONValue, at path: String = "content", this: String = "the example", that: String = "the encoding") -> String? {
        switch (self, other) {
        case (.object(let mine), .object(let theirs)):
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
        case .number(let number): number.description
        case .string(let units):
            String(decoding: units.prefix(40), as: UTF16.self).debugDescription + (units.count > 40 ? "…" : "")
        case .array(let values): "of \(values.count) elements"
        case .object(let members): "of \(members.count) members"
        }
    }

    private static func keyOrder(_ left: [UInt16], _ right: [UInt16]) -> Bool { left.lexicographicallyPrecedes(right) }

    /// A recursive-descent reader over the bytes.
    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }

        mutating func literal(_ text: StaticString, _ value: JSONValue) -> JSONValue? {
            let count = text.utf8CodeUnitCount
            guard at + count <= bytes.count else { return nil }
            for index in 0..<count where bytes[at + index] != text.utf8Start[index] { return nil }
            at += count
            return value
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard at < bytes.count, depth < JSONValue.maxDepth else { return nil }
            switch bytes[at] {
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "["):
                at += 1
                var values: [JSONValue] = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
                    at += 1
                    return .array(values)
                }
                while true {
                    skipSpace()
                    guard let element = value(depth: depth + 1) else { return nil }
                    values.append(element)
                    skipSpace()
                    guard at < bytes.count else { return nil }
                    at += 1
                    if bytes[at - 1] == UInt8(ascii: "]") { return .array(values) }
                    guard bytes[at - 1] == UInt8(ascii: ",") else { return nil }
                }
            case UInt8(ascii: "{"):
                at += 1
                var members: [[UInt16]: [JSONValue]] = [:]
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
                    at += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\""), let key = string() else { return nil }
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
                    at += 1
                    skipSpace()
                    guard let member = value(depth: depth + 1) else { return nil }
                    members[key, default: []].append(member)
                    skipSpace()
                    guard at < bytes.count else { return nil }
                    at += 1
                    if bytes[at - 1] == UInt8(ascii: "}") { return .object(members) }
                    guard bytes[at - 1] == UInt8(ascii: ",") else { return nil }
                }
            default: return number().map(JSONValue.number)
            }
        }

        /// The string at `at` (on its opening quote), as UTF-16 code units with escapes resolved.
        mutating func string() -> [UInt16]? {
            at += 1
            var units: [UInt16] = []
            var start = at
            func flush(_ end: Int) -> Bool {
                guard start < end else { return true }
                guard let text = bytes[start..<end].withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) else { return false }
                units += text.utf16
                return true
            }
            while at < bytes.count {
                let byte = bytes[at]
                if byte == UInt8(ascii: "\"") {
                    guard flush(at) else { return nil }
                    at += 1
                    return units
                }
                if byte < 0x20 { return nil }
                guard byte == UInt8(ascii: "\\") else {
                    at += 1
                    continue
                }
                guard flush(at), at + 1 < bytes.count else { return nil }
                let escape = bytes[at + 1]
                at += 2
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): units.append(UInt16(escape))
                case UInt8(ascii: "b"): units.append(0x08)
                case UInt8(ascii: "f"): units.append(0x0C)
                case UInt8(ascii: "n"): units.append(0x0A)
                case UInt8(ascii: "r"): units.append(0x0D)
                case UInt8(ascii: "t"): units.append(0x09)
                case UInt8(ascii: "u"):
                    guard at + 4 <= bytes.count, let unit = UInt16(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16),
                          bytes[at..<at + 4].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }) else { return nil }
                    units.append(unit)
                    at += 4
                default: return nil
                }
                start = at
            }
            return nil
        }

        /// The number at `at`, in JSON's grammar, as a decimal value.
        mutating func number() -> Decimal? {
            func isDigit(_ index: Int) -> Bool { index < bytes.count && (0x30...0x39).contains(bytes[index]) }
            var negative = false
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") {
                negative = true
                at += 1
            }
            guard isDigit(at) else { return nil }
            var digits: [UInt8] = []
            var exponent = 0
            if bytes[at] == UInt8(ascii: "0") {
                at += 1
                if isDigit(at) { return nil }
            } else {
                while isDigit(at) {
                    digits.append(bytes[at])
                    at += 1
                }
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
                at += 1
                guard isDigit(at) else { return nil }
                while isDigit(at) {
                    digits.append(bytes[at])
                    exponent -= 1
                    at += 1
                }
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
                at += 1
                var negativeExponent = false
                if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") {
                    negativeExponent = bytes[at] == UInt8(ascii: "-")
                    at += 1
                }
                guard isDigit(at) else { return nil }
                // Saturated far beyond any digit count, so that absurd exponents still compare sensibly.
                var written = 0
                while isDigit(at) {
                    written = min(written * 10 + Int(bytes[at] - 0x30), 1 << 40)
                    at += 1
                }
                exponent += negativeExponent ? -written : written
            }
            // Leading zeros (of "0.05") and trailing zeros (of "1.50", "100") carry no value.
            let leading = digits.prefix { $0 == UInt8(ascii: "0") }.count
            digits.removeFirst(leading)
            while digits.last == UInt8(ascii: "0") {
                digits.removeLast()
                exponent += 1
            }
            if digits.isEmpty { return Decimal(negative: false, digits: [], exponent: 0) }
            return Decimal(negative: negative, digits: digits, exponent: exponent)
        }
    }
}

extension JSONValue.Decimal: CustomStringConvertible {
    /// The value written plainly when that takes at most 24 digits (`42`, `-1.5`, `0.0025`), else in
    /// scientific notation (`15e-40`).
    var description: String {
        if digits.isEmpty { return "0" }
        let sign = negative ? "-" : ""
        let text = String(decoding: digits, as: UTF8.self)
        let point = digits.count + exponent
        if exponent >= 0 && point <= 24 { return sign + text + String(repeating: "0", count: exponent) }
        if exponent < 0 && point > 0 { return sign + String(text.prefix(point)) + "." + String(text.dropFirst(point)) }
        if exponent < 0 && point > -6 { return sign + "0." + String(repeating: "0", count: -point) + text }
        return "\(sign)\(text)e\(exponent)"
    }
}
