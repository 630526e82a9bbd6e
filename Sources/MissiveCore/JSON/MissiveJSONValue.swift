import Foundation

/// A value with its own JSON coding over ``MissiveJSONReader`` and ``MissiveJSONWriter``, which agrees with its
/// `Codable` coding: the same values from the same bytes, the same bytes from the same value (as
/// ``MissiveJSON/encoder`` writes them).
///
/// `String`, `Bool`, the integer types up to 64 bits, `Double`, `Float`, and optionals, arrays and
/// `[String: T]` dictionaries of such values conform. `@MissiveMessage` and `@MissiveCoding` generate the
/// conformance of a `Codable` struct from its stored properties (and of a `Codable` enum from its raw
/// values).
///
/// The fast path is strict; `JSONDecoder` is more lenient in a few places (a trailing comma, a byte order
/// mark, `1.0` for an integer, control characters or invalid UTF-8 in members nobody reads). So that both
/// paths always agree, ``MissiveJSON/decode(_:from:)-(_,UnsafeRawBufferPointer)`` gives content the fast path
/// refuses to `JSONDecoder`, whose value or reason it returns.
public protocol MissiveJSONValue: Codable {
    /// Reads one value of the type at the reader's offset.
    init(missiveJSON reader: inout MissiveJSONReader) throws

    /// Appends the value's JSON.
    func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws
}

/// A message type whose `init(decoding:)` is the generated one, so that a host may decode its content from
/// bytes it lends for the call, without copying them into `Data`.
///
/// `@MissiveMessage` adds it to a type it generates the coding of, unless the type's body declares its own
/// `init(decoding:)`.
public protocol MissiveDecodesInPlace: MissiveJSONValue {}

extension MissiveJSONReader {
    /// Reads a value with its generated coding.
    @inlinable public mutating func decode<T: MissiveJSONValue>(_ type: T.Type) throws -> T {
        try T(missiveJSON: &self)
    }

    /// Reads a value that has no generated coding with `JSONDecoder`, from the bytes of the value alone.
    @inlinable public mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let range = try skipValueRange()
        return try MissiveJSON.decoder.decode(T.self, from: Data(bytes(range)))
    }

    /// The value of a member that is absent: refused, as `JSONDecoder` refuses a missing key.
    @inlinable public static func absent<T>(_ type: T.Type, key: StaticString) throws -> T {
        throw MissiveJSONError(offset: 0, message: "missing field '\(key)'")
    }

    /// The value of an optional member that is absent: `nil`, as `decodeIfPresent` gives.
    @inlinable public static func absent<T>(_ type: T?.Type, key: StaticString) throws -> T? {
        nil
    }

    /// The error for a member that appears twice: the generated coding leaves the verdict to `JSONDecoder`.
    @inlinable public func duplicate(_ key: MissiveJSONKey) -> MissiveJSONError {
        fail("duplicate key '\(key.string)'")
    }
}

extension MissiveJSONWriter {
    /// Appends a value with its generated coding.
    @inlinable public mutating func encode<T: MissiveJSONValue>(_ value: T) throws {
        try value.writeMissiveJSON(to: &self)
    }

    /// Appends a value that has no generated coding as ``MissiveJSON/encoder`` writes it.
    @inlinable public mutating func encode<T: Encodable>(_ value: T) throws {
        raw(try MissiveJSON.encoder.encode(value))
    }

    /// Appends a member.
    @inlinable public mutating func member<T: MissiveJSONValue>(_ name: StaticString, _ value: T) throws {
        key(name)
        try value.writeMissiveJSON(to: &self)
    }

    /// Appends a member unless it is `nil`, as `encodeIfPresent` does.
    @inlinable public mutating func member<T: MissiveJSONValue>(_ name: StaticString, _ value: T?) throws {
        guard let value else { return }
        key(name)
        try value.writeMissiveJSON(to: &self)
    }

    /// Appends a member that has no generated coding, as ``MissiveJSON/encoder`` writes it.
    @inlinable public mutating func member<T: Encodable>(_ name: StaticString, _ value: T) throws {
        key(name)
        try encode(value)
    }

    /// Appends a member that has no generated coding unless it is `nil`.
    @inlinable public mutating func member<T: Encodable>(_ name: StaticString, _ value: T?) throws {
        guard let value else { return }
        key(name)
        try encode(value)
    }
}

// MARK: - Standard types

extension String: MissiveJSONValue {
    /// Reads a string.
    @inlinable public init(missiveJSON reader: inout MissiveJSONReader) throws { self = try reader.readString() }
    /// Writes the string, escaped.
    @inlinable public func writeMissiveJSON(to writer: inout MissiveJSONWriter) { writer.string(self) }
}

extension Bool: MissiveJSONValue {
    /// Reads `true` or `false`.
    @inlinable public init(missiveJSON reader: inout MissiveJSONReader) throws { self = try reader.readBool() }
    /// Writes `true` or `false`.
    @inlinable public func writeMissiveJSON(to writer: inout MissiveJSONWriter) { writer.bool(self) }
}

extension Double: MissiveJSONValue {
    /// Reads a finite number.
    @inlinable public init(missiveJSON reader: inout MissiveJSONReader) throws { self = try reader.readDouble() }
    /// Writes the number; throws for a value that is not finite.
    @inlinable public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws { try writer.double(self) }
}

extension Float: MissiveJSONValue {
    /// Reads a finite number.
    @inlinable public init(missiveJSON reader: inout MissiveJSONReader) throws { self = try reader.readFloat() }
    /// Writes the number; throws for a value that is not finite.
    @inlinable public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws { try writer.float(self) }
}

/// The integer types: read with a range check, written in decimal.
public protocol MissiveJSONInteger: FixedWidthInteger, MissiveJSONValue {}

extension MissiveJSONInteger {
    /// Reads an integer in the type's range.
    @inlinable public init(missiveJSON reader: inout MissiveJSONReader) throws { self = try reader.readInteger(Self.self) }
    /// Writes the integer in decimal.
    @inlinable public func writeMissiveJSON(to writer: inout MissiveJSONWriter) { writer.integer(self) }
}

extension Int: MissiveJSONInteger {}
extension Int8: MissiveJSONInteger {}
extension Int16: MissiveJSONInteger {}
extension Int32: MissiveJSONInteger {}
extension Int64: MissiveJSONInteger {}
extension UInt: MissiveJSONInteger {}
extension UInt8: MissiveJSONInteger {}
extension UInt16: MissiveJSONInteger {}
extension UInt32: MissiveJSONInteger {}
extension UInt64: MissiveJSONInteger {}

extension Optional: MissiveJSONValue where Wrapped: MissiveJSONValue {
    /// Reads `null` as `nil`, anything else as the wrapped type.
    @inlinable public init(missiveJSON reader: inout MissiveJSONReader) throws {
        self = try reader.readNull() ? nil : try Wrapped(missiveJSON: &reader)
    }
    /// Writes `null` for `nil`.
    @inlinable public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        if let self { try self.writeMissiveJSON(to: &writer) } else { writer.null() }
    }
}

extension Array: MissiveJSONValue where Element: MissiveJSONValue {
    /// Reads an array.
    @inlinable public init(missiveJSON reader: inout MissiveJSONReader) throws {
        self = []
        var cursor = try reader.beginArray()
        while try reader.nextElement(&cursor) { append(try Element(missiveJSON: &reader)) }
    }
    /// Writes an array.
    @inlinable public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        writer.beginArray()
        for element in self {
            writer.separate()
            try element.writeMissiveJSON(to: &writer)
        }
        writer.endArray()
    }
}

extension Dictionary: MissiveJSONValue where Key == String, Value: MissiveJSONValue {
    /// Reads an object; a key that appears twice (or two keys `String` holds equal) is left to `JSONDecoder`.
    @inlinable public init(missiveJSON reader: inout MissiveJSONReader) throws {
        self = [:]
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor) {
            let value = try Value(missiveJSON: &reader)
            guard updateValue(value, forKey: key.string) == nil else { throw reader.duplicate(key) }
        }
    }
    /// Writes an object with its keys in the order of their UTF-8 bytes, as `.sortedKeys` does.
    @inlinable public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        writer.beginObject()
        for key in keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            writer.key(key)
            try self[key].unsafelyUnwrapped.writeMissiveJSON(to: &writer)
        }
        writer.endObject()
    }
}
