/// Writes JSON text into a byte array, with stable field order and raw JSON values passed through.
package struct JSONWriter {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = []

    /// Creates an empty writer.
    package init() {}

    /// Opens an object (as a value, or as the value of the last ``key(_:)``).
    package mutating func beginObject() { value(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    /// Closes the open object.
    package mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma.removeLast() }
    /// Opens an array.
    package mutating func beginArray() { value(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    /// Closes the open array.
    package mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma.removeLast() }

    /// Writes a member name; the next call writes its value.
    package mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        pendingValue = true
    }

    /// Writes a member whose value is a string, or `null`.
    package mutating func field(_ name: String, _ text: String?) { key(name); string(text) }
    /// Writes a member whose value is an integer.
    package mutating func field(_ name: String, _ number: some BinaryInteger) { key(name); integer(number) }
    /// Writes a member whose value is `true` or `false`.
    package mutating func field(_ name: String, _ flag: Bool) { key(name); bool(flag) }

    /// Writes a string value.
    package mutating func string(_ text: String) { value(); appendQuoted(text) }
    /// Writes a string value, or `null`.
    package mutating func string(_ text: String?) { if let text { string(text) } else { null() } }
    /// Writes an integer value.
    package mutating func integer(_ number: some BinaryInteger) { value(); bytes.append(contentsOf: String(number).utf8) }
    /// Writes `true` or `false`.
    package mutating func bool(_ flag: Bool) { value(); bytes.append(contentsOf: (flag ? "true" : "false").utf8) }
    /// Writes `null`.
    package mutating func null() { value(); bytes.append(contentsOf: "null".utf8) }
    /// Writes bytes that are already valid JSON, unchanged.
    package mutating func raw(_ json: some Collection<UInt8>) { value(); bytes.append(contentsOf: json) }
    /// Writes an array of strings.
    package mutating func strings(_ list: [String]) {
        beginArray()
        for item in list { string(item) }
        endArray()
    }

    private var pendingValue = false

    private mutating func value() {
        if pendingValue {
            pendingValue = false
        } else {
            separate()
        }
    }

    private mutating func separate() {
        guard let last = needsComma.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
