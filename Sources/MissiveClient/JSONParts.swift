import MissiveCore

/// The parts of a JSON document the server answers with, read without building a tree of what the client
/// does not need: an object's members as byte ranges (so that a message's `envelope` is kept byte for byte, as
/// the server sent it), an array's elements, and scalar values.
struct JSONParts: Sendable {
    /// The document's bytes.
    let bytes: [UInt8]
    /// Each member's key and the range of its value, in order.
    private let members: [(key: String, range: Range<Int>)]

    /// Reads `bytes`, which must be one JSON object.
    init(object bytes: [UInt8]) throws(ServerClientError) {
        self.bytes = bytes
        do {
            members = try bytes.withUnsafeBufferPointer { buffer throws(MissiveJSONError) -> [(key: String, range: Range<Int>)] in
                var found: [(key: String, range: Range<Int>)] = []
                var scanner = JSONScanner(buffer, validatingUTF8: true)
                try scanner.scanObject { (key, range) throws(MissiveJSONError) in found.append((key, range)) }
                return found
            }
        } catch {
            throw ServerClientError.malformedAnswer("not a JSON object: \(error)")
        }
    }

    /// The raw bytes of the first member named `key`.
    func raw(_ key: String) -> [UInt8]? {
        members.first { $0.key == key }.map { Array(bytes[$0.range]) }
    }

    /// The member `key` as an object.
    func object(_ key: String) throws(ServerClientError) -> JSONParts? {
        guard let raw = raw(key), raw.first == UInt8(ascii: "{") else { return nil }
        return try JSONParts(object: raw)
    }

    /// The member `key` as a value.
    func value(_ key: String) -> JSONValue? {
        raw(key).flatMap { try? JSONValue.parse($0) }
    }

    /// The member `key` as a string, when it is one.
    func string(_ key: String) -> String? {
        if case .string(let text)? = value(key) { return text }
        return nil
    }

    /// The member `key` as an integer, when it is a number that is one.
    func integer(_ key: String) -> Int64? {
        if case .number(_, let spelling)? = value(key) { return Int64(spelling) }
        return nil
    }

    /// The member `key` as a Boolean, when it is one.
    func bool(_ key: String) -> Bool? {
        if case .bool(let flag)? = value(key) { return flag }
        return nil
    }

    /// The member `key` as a string that must be there.
    func requiredString(_ key: String, in what: String) throws(ServerClientError) -> String {
        guard let text = string(key) else { throw ServerClientError.malformedAnswer("\(what) has no string \(key)") }
        return text
    }

    /// The elements of the array under `key`, each as its raw bytes; `nil` when it is not an array.
    func elements(_ key: String) throws(ServerClientError) -> [[UInt8]]? {
        guard let raw = raw(key), raw.first == UInt8(ascii: "[") else { return nil }
        do {
            return try raw.withUnsafeBytes { buffer throws(MissiveJSONError) -> [[UInt8]] in
                var reader = MissiveJSONReader(buffer.bindMemory(to: UInt8.self))
                var cursor = try reader.beginArray()
                var ranges: [Range<Int>] = []
                while try reader.nextElement(&cursor) { ranges.append(try reader.skipValueRange()) }
                return ranges.map { Array(raw[$0]) }
            }
        } catch {
            throw ServerClientError.malformedAnswer("\(key) is not a JSON array: \(error)")
        }
    }

    /// The elements of the array under `key`, each an object.
    func objects(_ key: String) throws(ServerClientError) -> [JSONParts] {
        var parts: [JSONParts] = []
        for element in try elements(key) ?? [] { parts.append(try JSONParts(object: element)) }
        return parts
    }
}

/// Writing small JSON request bodies.
enum JSONBody {
    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        var out = ""
        JSONValue.quote(text, into: &out)
        return out
    }

    /// An object of string members, in order.
    static func object(_ members: [(String, String)]) -> [UInt8] {
        Array(("{" + members.map { quoted($0.0) + ":" + quoted($0.1) }.joined(separator: ",") + "}").utf8)
    }
}
