/// A parsed JSON value: the JSON layer's one tree, for documents small enough to hold whole (a plugin's view,
/// an action's arguments, the checker's comparison of an example with its encoding).
///
/// Objects keep their members in order, repeated keys included; ``subscript(_:)`` takes the first. Numbers keep
/// their spelling, so that they are written back as they came and compared exactly (``JSONDecimal``).
///
/// Two values are equal (`==`) when they are the same JSON value, as `roundtrip.examples` compares them:
/// numbers by their exact decimal value (`1`, `1.0`, `1e0` and `10e-1` are equal; two integers beyond 2^53
/// that a `Double` would round to one value are not), strings by their UTF-16 code units once escapes are
/// resolved (`"\u00e9"` equals `"é"`), arrays in order, objects by their members whatever their order (a key
/// given twice keeps its values in order).
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number: its value as a `Double`, and its spelling as written.
    case number(Double, String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    // MARK: Reading

    /// Parses `bytes` as exactly one JSON value nested at most `maxDepth` deep (never more than
    /// ``MissiveJSONReader/maxDepth``), with UTF-8 checked and lone surrogates refused or repaired as
    /// `loneSurrogates` says (``JSONLoneSurrogates``: refused unless the text is only shown).
    package static func parse(
        _ bytes: [UInt8], maxDepth: Int = MissiveJSONReader.maxDepth, loneSurrogates: JSONLoneSurrogates = .refuse
    ) throws(MissiveJSONError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(MissiveJSONError) -> JSONValue in
            var reader = MissiveJSONReader(buffer, checkingUTF8: true, refusingLoneSurrogates: loneSurrogates == .refuse)
            let value = try read(&reader, depth: 0, limit: min(maxDepth, MissiveJSONReader.maxDepth), loneSurrogates)
            try reader.finish()
            return value
        }
    }

    /// The value of a complete JSON document, or `nil` when `bytes` is not one (lone surrogates refused).
    package init?(_ bytes: [UInt8]) {
        guard let value = try? JSONValue.parse(bytes) else { return nil }
        self = value
    }

    private static func read(
        _ reader: inout MissiveJSONReader, depth: Int, limit: Int, _ loneSurrogates: JSONLoneSurrogates
    ) throws(MissiveJSONError) -> JSONValue {
        switch try reader.peekKind() {
        case .object:
            guard depth < limit else { throw reader.fail("nested deeper than \(limit)") }
            var members: [(key: String, value: JSONValue)] = []
            var cursor = try reader.beginObject()
            while let key = try reader.nextKey(&cursor) {
                let name = key.isPlainASCII
                    ? String(decoding: key.raw, as: UTF8.self)
                    : try MissiveJSONStrings.decode(key.raw, hasEscapes: key.hasEscapes, loneSurrogates: loneSurrogates)
                members.append((name, try read(&reader, depth: depth + 1, limit: limit, loneSurrogates)))
            }
            return .object(members)
        case .array:
            guard depth < limit else { throw reader.fail("nested deeper than \(limit)") }
            var values: [JSONValue] = []
            var cursor = try reader.beginArray()
            while try reader.nextElement(&cursor) { values.append(try read(&reader, depth: depth + 1, limit: limit, loneSurrogates)) }
            return .array(values)
        case .string:
            let scanned = try reader.scanString()
            if scanned.isPlainASCII { return .string(String(decoding: scanned.raw, as: UTF8.self)) }
            return .string(try MissiveJSONStrings.decode(scanned.raw, hasEscapes: scanned.hasEscapes, loneSurrogates: loneSurrogates))
        case .number:
            let number = try reader.scanNumber()
            let spelling = String(decoding: reader.bytes(number.range), as: UTF8.self)
            return .number(Double(spelling) ?? .nan, spelling)
        case .bool:
            return .bool(try reader.readBool())
        case .null:
            try reader.literal("null")
            return .null
        }
    }

    // MARK: Looking at it

    /// The first member named `key`, for an object.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The value in words, for error messages: `a string`, `an array`, ...
    package var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "true or false"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The name of the value's JSON kind: `null`, `boolean`, `number`, `string`, `array` or `object`.
    package var kind: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// An object's members grouped by key (as UTF-16 code units), each key's values in order.
    package var membersByKey: [[UInt16]: [JSONValue]] {
        guard case .object(let members) = self else { return [:] }
        var grouped: [[UInt16]: [JSONValue]] = [:]
        for member in members { grouped[Array(member.key.utf16), default: []].append(member.value) }
        return grouped
    }

    // MARK: Equality

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(_, let a), .number(_, let b)): a == b || JSONDecimal(a) == JSONDecimal(b)
        case (.string(let a), .string(let b)): a.utf16.elementsEqual(b.utf16)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && lhs.membersByKey == rhs.membersByKey
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(_, let spelling): hasher.combine(JSONDecimal(spelling))
        case .string(let value): hasher.combine(Array(value.utf16))
        case .array(let values): hasher.combine(values)
        case .object(let members): hasher.combine(members.count)  // member order does not count
        }
    }

    // MARK: Writing

    /// The value as compact JSON, numbers as spelled, strings display-safe
    /// (``MissiveJSONWriter/Escaping-swift.enum/displaySafe``).
    package var serialized: String {
        var writer = MissiveJSONWriter(escaping: .displaySafe)
        write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Appends the value to `writer`.
    package func write(to writer: inout MissiveJSONWriter) {
        switch self {
        case .null: writer.null()
        case .bool(let value): writer.bool(value)
        case .number(_, let spelling): writer.raw(spelling.utf8)
        case .string(let value): writer.string(value)
        case .array(let values):
            writer.beginArray()
            for value in values { value.write(to: &writer) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for member in members {
                writer.key(member.key)
                member.value.write(to: &writer)
            }
            writer.endObject()
        }
    }

    /// Appends `text` as a display-safe JSON string literal (``MissiveJSONWriter/Escaping-swift.enum/displaySafe``).
    package static func quote(_ text: String, into out: inout String) {
        out += String(decoding: MissiveJSONWriter.quoted(text, escaping: .displaySafe), as: UTF8.self)
    }
}

/// A JSON number as a decimal value, read from its spelling and never through a `Double`: sign, significant
/// digits (no leading or trailing zero) and the exponent of the last digit. 1.50 is (false, "15", -1); zero is
/// (false, "", 0) whatever its sign or spelling.
package struct JSONDecimal: Hashable, Sendable, CustomStringConvertible {
    package let negative: Bool
    package let digits: [UInt8]
    package let exponent: Int

    /// The value of `spelling`, a number in JSON's grammar (as the reader scanned it).
    package init(_ spelling: String) {
        let bytes = Array(spelling.utf8)
        var at = 0
        var negative = false
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") {
            negative = true
            at += 1
        }
        func isDigit(_ index: Int) -> Bool { index < bytes.count && (0x30...0x39).contains(bytes[index]) }
        var digits: [UInt8] = []
        var exponent = 0
        while isDigit(at) {
            digits.append(bytes[at])
            at += 1
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
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
            // Saturated far beyond any digit count, so that absurd exponents still compare sensibly.
            var written = 0
            while isDigit(at) {
                written = min(written * 10 + Int(bytes[at] - 0x30), 1 << 40)
                at += 1
            }
            exponent += negativeExponent ? -written : written
        }
        // Leading zeros (of "0.05") and trailing zeros (of "1.50", "100") carry no value.
        digits.removeFirst(digits.prefix { $0 == UInt8(ascii: "0") }.count)
        while digits.last == UInt8(ascii: "0") {
            digits.removeLast()
            exponent += 1
        }
        if digits.isEmpty {
            (self.negative, self.digits, self.exponent) = (false, [], 0)
        } else {
            (self.negative, self.digits, self.exponent) = (negative, digits, exponent)
        }
    }

    /// The value written plainly when that takes at most 24 digits (`42`, `-1.5`, `0.0025`), else in
    /// scientific notation (`15e-40`).
    package var description: String {
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
