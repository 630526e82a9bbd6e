/// An `Encoder` that writes an `Encodable` value through a ``MissiveJSONWriter``, as it goes: members in the order
/// the value encodes them (a synthesized `Encodable` gives them in declaration order), strings escaped as the
/// writer escapes them, ``RawJSON`` spliced in verbatim, and an absent optional written as `null` (never
/// left out), so that a struct's JSON has the same members whatever it holds.
///
/// It writes, it never buffers, so a value encodes each member as a value of its own: nested containers
/// (`nestedContainer(keyedBy:forKey:)`, `nestedUnkeyedContainer()`) and `superEncoder()` are programming errors
/// here. Integers, `Bool`, `String`, finite floating-point numbers (their `description`) and `nil` are the
/// values it writes itself; a non-finite number is refused with `EncodingError.invalidValue`.
package enum JSONWriterEncoder {
    /// The JSON of `value`, as bytes.
    package static func encode(_ value: some Encodable) throws -> [UInt8] {
        var writer = MissiveJSONWriter()
        try encode(value, into: &writer)
        return writer.bytes
    }

    /// Writes `value` into `writer` as one JSON value (the value of its last key, or an element).
    package static func encode(_ value: some Encodable, into writer: inout MissiveJSONWriter) throws {
        let state = WriterState(writer)
        defer { writer = state.writer }
        try state.write(value, codingPath: [])
    }
}

/// JSON text that ``JSONWriterEncoder`` writes as it is: the content bytes of a received message, an envelope
/// written by ``Envelope/encoded()``. The bytes must be one valid JSON value; nothing checks them.
package struct RawJSON: Encodable, Sendable, Equatable {
    /// The JSON text.
    package var bytes: [UInt8]

    /// JSON text, written unchanged.
    package init(_ bytes: some Collection<UInt8>) { self.bytes = Array(bytes) }

    /// Writes the bytes unchanged through ``JSONWriterEncoder``; any other encoder cannot splice them in and
    /// gets `EncodingError.invalidValue`.
    package func encode(to encoder: any Encoder) throws {
        guard let frame = encoder as? WriterFrame else {
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "RawJSON is written only by JSONWriterEncoder"))
        }
        frame.state.writer.raw(bytes)
    }
}

/// The writer every frame of one encoding writes into.
private final class WriterState {
    var writer: MissiveJSONWriter

    init(_ writer: MissiveJSONWriter) { self.writer = writer }

    /// Writes one value: a primitive itself, anything else through its `encode(to:)` in a frame of its own,
    /// whose open object or array is closed when it returns.
    func write(_ value: some Encodable, codingPath: [any CodingKey]) throws {
        switch value {
        case let raw as RawJSON: writer.raw(raw.bytes)
        case let text as String: writer.string(text)
        case let flag as Bool: writer.bool(flag)
        case let number as Double: try writeFloatingPoint(number, codingPath: codingPath)
        case let number as Float: try writeFloatingPoint(number, codingPath: codingPath)
        case let number as any FixedWidthInteger: writer.integer(number)
        default:
            let frame = WriterFrame(state: self, codingPath: codingPath)
            try value.encode(to: frame)
            switch frame.opened {
            case .object: writer.endObject()
            case .array: writer.endArray()
            case .single: break
            case nil:
                throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(type(of: value)) encoded no value"))
            }
        }
    }

    func writeFloatingPoint(_ number: some BinaryFloatingPoint & LosslessStringConvertible, codingPath: [any CodingKey]) throws {
        guard number.isFinite else {
            throw EncodingError.invalidValue(number, .init(codingPath: codingPath, debugDescription: "\(number) is not a JSON number"))
        }
        writer.raw(Array(number.description.utf8))
    }
}

/// The `Encoder` one value's `encode(to:)` is given: it opens one object, one array or one single value.
private final class WriterFrame: Encoder {
    enum Opened { case object, array, single }

    let state: WriterState
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// What this value opened; asking again for the same kind of container continues it.
    var opened: Opened?

    init(state: WriterState, codingPath: [any CodingKey]) {
        self.state = state
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        open(.object) { $0.beginObject() }
        return KeyedEncodingContainer(ObjectContainer<Key>(frame: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        open(.array) { $0.beginArray() }
        return ArrayContainer(frame: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        open(.single) { _ in }
        return ValueContainer(frame: self)
    }

    private func open(_ kind: Opened, _ begin: (inout MissiveJSONWriter) -> Void) {
        if let opened {
            precondition(opened == kind && kind != .single, "JSONWriterEncoder: a value encodes one object, one array or one single value")
            return
        }
        opened = kind
        begin(&state.writer)
    }
}

/// The members of an object, written as they come; `nil` is written as `null`.
private struct ObjectContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let frame: WriterFrame
    var codingPath: [any CodingKey] { frame.codingPath }

    private func key(_ key: Key) { frame.state.writer.key(key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws {
        self.key(key)
        frame.state.writer.null()
    }

    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        self.key(key)
        try frame.state.write(value, codingPath: codingPath + [key])
    }

    // The standard library's `encodeIfPresent` leaves a `nil` member out; here it is written as `null`. Every
    // overload is implemented, since the synthesized code calls the one of the member's type.
    mutating func encodeIfPresent(_ value: (some Encodable)?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try present(value, key) }

    private mutating func present(_ value: (some Encodable)?, _ key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        preconditionFailure("JSONWriterEncoder writes as it goes: encode the member as a value, not through a nested container")
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        preconditionFailure("JSONWriterEncoder writes as it goes: encode the member as a value, not through a nested container")
    }

    mutating func superEncoder() -> any Encoder { preconditionFailure("JSONWriterEncoder has no super encoder") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { preconditionFailure("JSONWriterEncoder has no super encoder") }
}

/// The elements of an array, written as they come.
private struct ArrayContainer: UnkeyedEncodingContainer {
    let frame: WriterFrame
    var codingPath: [any CodingKey] { frame.codingPath }
    private(set) var count = 0

    init(frame: WriterFrame) { self.frame = frame }

    mutating func encodeNil() throws {
        frame.state.writer.null()
        count += 1
    }

    mutating func encode(_ value: some Encodable) throws {
        try frame.state.write(value, codingPath: codingPath + [IndexKey(count)])
        count += 1
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        preconditionFailure("JSONWriterEncoder writes as it goes: encode the element as a value, not through a nested container")
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        preconditionFailure("JSONWriterEncoder writes as it goes: encode the element as a value, not through a nested container")
    }

    mutating func superEncoder() -> any Encoder { preconditionFailure("JSONWriterEncoder has no super encoder") }
}

/// The one value of a `singleValueContainer()`.
private struct ValueContainer: SingleValueEncodingContainer {
    let frame: WriterFrame
    var codingPath: [any CodingKey] { frame.codingPath }

    mutating func encodeNil() throws { frame.state.writer.null() }

    mutating func encode(_ value: some Encodable) throws { try frame.state.write(value, codingPath: codingPath) }
}

/// An array element's place in a coding path.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }

    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}
