/// Reads little-endian fields from a part of a byte array, checking every length against the part's end: the fields
/// of the metadata snapshot's entries and of the plugin worker's frames. A read past the end gives `nil`.
struct ByteFieldReader {
    private let bytes: [UInt8]
    /// Where the next field starts.
    private(set) var position: Int
    private let end: Int

    /// A reader of `bytes[start..<end]`.
    init(_ bytes: [UInt8], from start: Int, to end: Int) {
        self.bytes = bytes
        self.position = start
        self.end = end
    }

    /// Whether every byte of the part was read.
    var isAtEnd: Bool { position == end }

    /// The offset of the next `count` bytes, which the reader then skips; `nil` when the part holds fewer.
    mutating func take(_ count: Int) -> Int? {
        guard count >= 0, count <= end - position else { return nil }
        defer { position += count }
        return position
    }

    /// Goes back to `position`, an offset this reader gave.
    mutating func rewind(to position: Int) {
        self.position = position
    }

    mutating func u8() -> UInt8? { take(1).map { bytes[$0] } }

    /// A little-endian integer of the type's size.
    mutating func integer<T: FixedWidthInteger>(_ type: T.Type = T.self) -> T? {
        guard let at = take(MemoryLayout<T>.size) else { return nil }
        return bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: T.self)) }
    }

    /// A run of bytes: a 4-byte length, then that many bytes.
    mutating func run() -> ArraySlice<UInt8>? {
        guard let count = integer(UInt32.self), let at = take(Int(count)) else { return nil }
        return bytes[at..<(at + Int(count))]
    }
}

/// Appends little-endian fields to a byte array: what ``ByteFieldReader`` reads.
struct ByteFieldWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    /// A little-endian integer of the type's size.
    mutating func integer<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A run of bytes: a 4-byte length, then the bytes.
    mutating func run(_ value: some Collection<UInt8>) {
        integer(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    /// A string's UTF-8 bytes as a run.
    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { run($0) }
    }
}
