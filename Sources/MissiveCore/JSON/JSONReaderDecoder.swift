/// A `Decoder` over the project's JSON reader: ``JSONWriterEncoder``'s other half, for the wire types that the
/// server writes and its clients read (`MissiveWire`).
///
/// It reads what `JSONDecoder` reads, with the project's JSON rules (UTF-8 checked, lone surrogates refused, at
/// most ``MissiveJSONReader/maxDepth`` deep), refuses an object that gives one member twice (readers differ
/// on which value wins), and does one thing more: a ``RawJSON``
/// member keeps the bytes of its value exactly as they came, so that a stored message's envelope crosses the wire
/// byte for byte. Members a type does not name are skipped, so a newer server's answers still decode.
package enum JSONReaderDecoder {
    /// The value of type `T` that `bytes` (one JSON document) holds.
    ///
    /// - Throws: `DecodingError`; ``describe(_:)`` words it with the path to the member at fault.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if let problem = JSONScanner.problem(in: bytes) {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not JSON: \(problem)"))
        }
        return try T(from: ValueDecoder(bytes[...], codingPath: []))
    }

    /// A one-line reason for a decoding error: the path to the member at fault (`members[1]`, `message.id`) and
    /// what was wrong there.
    package static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "the document" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

extension RawJSON: Decodable {
    /// The bytes of the value as they came, through ``JSONReaderDecoder``; any other decoder cannot give them and
    /// throws `DecodingError.typeMismatch`.
    package init(from decoder: any Decoder) throws {
        guard let decoder = decoder as? ValueDecoder else {
            throw DecodingError.typeMismatch(
                RawJSON.self, .init(codingPath: decoder.codingPath, debugDescription: "RawJSON is read only by JSONReaderDecoder"))
        }
        self.init(decoder.bytes)
    }
}

/// A JSON key, as a coding key.
private struct MemberKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

/// One JSON value being decoded: its bytes (whitespace around it included) and where it is in the document.
private final class ValueDecoder: Decoder {
    let bytes: ArraySlice<UInt8>
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ bytes: ArraySlice<UInt8>, codingPath: [any CodingKey]) {
        self.bytes = bytes
        self.codingPath = codingPath
    }

    /// The first byte that is not whitespace.
    var firstByte: UInt8? { bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } }

    var isNull: Bool { firstByte == UInt8(ascii: "n") }

    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(kind)"))
    }

    /// What the value is, in words.
    var kind: String {
        switch firstByte {
        case UInt8(ascii: "{"): "an object"
        case UInt8(ascii: "["): "an array"
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "a Boolean"
        case UInt8(ascii: "n"): "null"
        default: "a number"
        }
    }

    /// The value as a tree, for a scalar.
    func scalar() throws -> JSONValue {
        do {
            return try JSONValue.parse(Array(bytes))
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(error)"))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard firstByte == UInt8(ascii: "{") else { throw mismatch([String: Any].self, "an object") }
        var members: [String: Range<Int>] = [:]
        var order: [String] = []
        var repeated: String?
        let start = bytes.startIndex
        do {
            try bytes.withUnsafeBufferPointer { buffer throws(MissiveJSONError) in
                var scanner = JSONScanner(buffer)
                try scanner.scanObject { (key, range) throws(MissiveJSONError) in
                    guard members[key] == nil else {
                        repeated = repeated ?? key
                        return
                    }
                    members[key] = (range.lowerBound + start)..<(range.upperBound + start)
                    order.append(key)
                }
            }
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(error)"))
        }
        // A member given twice is refused, not read as its first or last value: readers differ on which wins, so
        // the two sides of the wire could each act on another value.
        if let repeated {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "the member '\(TextHygiene.line(String(repeated.prefix(64))))' is given twice"))
        }
        return KeyedDecodingContainer(ObjectContainer<Key>(decoder: self, members: members, order: order))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard firstByte == UInt8(ascii: "[") else { throw mismatch([Any].self, "an array") }
        let start = bytes.startIndex
        do {
            let ranges = try bytes.withUnsafeBytes { buffer throws(MissiveJSONError) -> [Range<Int>] in
                var reader = MissiveJSONReader(buffer.bindMemory(to: UInt8.self), checkingUTF8: false, refusingLoneSurrogates: false)
                var cursor = try reader.beginArray()
                var ranges: [Range<Int>] = []
                while try reader.nextElement(&cursor) {
                    let range = try reader.skipValueRange()
                    ranges.append((range.lowerBound + start)..<(range.upperBound + start))
                }
                return ranges
            }
            return ArrayContainer(decoder: self, elements: ranges)
        } catch let error as MissiveJSONError {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(error)"))
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { ScalarContainer(decoder: self) }

    /// Decodes a child value: one of the few types read directly, anything else through its `init(from:)`.
    func decode<T: Decodable>(_ type: T.Type, at range: Range<Int>, key: any CodingKey) throws -> T {
        let child = ValueDecoder(bytes[range], codingPath: codingPath + [key])
        return try T(from: child)
    }
}

/// An object's members.
private struct ObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoder
    let members: [String: Range<Int>]
    let order: [String]

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { order.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func range(_ key: Key) throws -> Range<Int> {
        guard let range = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \(key.stringValue)"))
        }
        return range
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        ValueDecoder(decoder.bytes[try range(key)], codingPath: codingPath + [key]).isNull
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.decode(type, at: try range(key), key: key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let range = members[key.stringValue] else { return nil }
        let child = ValueDecoder(decoder.bytes[range], codingPath: codingPath + [key])
        if child.isNull && !(T.self == RawJSON.self) { return nil }
        return try T(from: child)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(decoder.bytes[try range(key)], codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(decoder.bytes[try range(key)], codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(decoder.bytes[try range(key)], codingPath: codingPath + [key])
    }
}

/// An array's elements, in order.
private struct ArrayContainer: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    let elements: [Range<Int>]
    var currentIndex = 0

    init(decoder: ValueDecoder, elements: [Range<Int>]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "the array has only \(elements.count) elements"))
        }
        defer { currentIndex += 1 }
        return ValueDecoder(decoder.bytes[elements[currentIndex]], codingPath: codingPath + [MemberKey(intValue: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, ValueDecoder(decoder.bytes[elements[currentIndex]], codingPath: codingPath).isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: try next()) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

/// One scalar value.
private struct ScalarContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let flag) = try decoder.scalar() else { throw decoder.mismatch(type, "a Boolean") }
        return flag
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let text) = try decoder.scalar() else { throw decoder.mismatch(type, "a string") }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard case .number(let value, _) = try decoder.scalar() else { throw decoder.mismatch(type, "a number") }
        return value
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    /// An integer of type `T`: a number whose value is a whole number that `T` holds (`2`, `2.0` and `2e0` alike).
    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard case .number(let value, let spelling) = try decoder.scalar() else { throw decoder.mismatch(type, "a whole number") }
        if let exact = T(spelling) { return exact }
        guard value.rounded() == value, let exact = T(exactly: value) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(spelling) is not a whole number that \(T.self) holds"))
        }
        return exact
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: decoder) }
}
