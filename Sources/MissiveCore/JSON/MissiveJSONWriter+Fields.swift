extension MissiveJSONWriter {
    /// Writes a member whose value is a string, or `null`.
    package mutating func field(_ name: String, _ text: String?) { key(name); string(text) }
    /// Writes a member whose value is an integer.
    package mutating func field(_ name: String, _ number: some FixedWidthInteger) { key(name); integer(number) }
    /// Writes a member whose value is `true` or `false`.
    package mutating func field(_ name: String, _ flag: Bool) { key(name); bool(flag) }

    /// Writes a string value, or `null`.
    package mutating func string(_ text: String?) { if let text { string(text) } else { null() } }

    /// Writes an array of strings.
    package mutating func strings(_ list: [String]) {
        beginArray()
        for item in list { string(item) }
        endArray()
    }

    /// `text` as one JSON string literal, escaped as `escaping` says.
    package static func quoted(_ text: String, escaping: Escaping = .encoderCompatible) -> [UInt8] {
        var writer = MissiveJSONWriter(capacity: text.utf8.count + 2, escaping: escaping)
        writer.string(text)
        return writer.bytes
    }
}
