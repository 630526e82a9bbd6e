import Foundation

/// The text layout Missive's key and signature files share (docs/TRUST.md, "File formats"): UTF-8 lines
/// ended by a line feed; a header line `KIND VERSION`; then `name: value` lines, with `#` lines as comments
/// for people; and, in a signature file only, an empty line followed by the signed statement, kept byte for
/// byte.
///
/// Readers ignore fields they do not know, so that a later Missive can add some within a version, and refuse
/// a version they do not know, naming it.
struct TrustFileText {
    /// The fields in file order.
    private(set) var fields: [(name: String, value: String)] = []
    /// The bytes after the first empty line, or `nil` when there is none.
    private(set) var body: [UInt8]?

    /// The value of field `name`, if the file has it.
    func value(_ name: String) -> String? {
        fields.first { $0.name == name }?.value
    }

    /// The value of field `name`, or a reason naming it as missing.
    func required(_ name: String) throws(TrustFileError) -> String {
        guard let value = value(name), !value.isEmpty else { throw TrustFileError("it has no '\(name):' line") }
        return value
    }

    /// The bytes of base64 field `name`, which must decode to exactly `count` bytes.
    func base64(_ name: String, count: Int) throws(TrustFileError) -> [UInt8] {
        let text = try required(name)
        guard let data = Data(base64Encoded: text), data.count == count else {
            throw TrustFileError("its '\(name):' line is not base64 of \(count) bytes")
        }
        return Array(data)
    }

    /// Parses `bytes`, which must start with the header line `kind version`.
    ///
    /// - Parameters:
    ///   - allowsBody: whether an empty line may end the fields, leaving the rest as ``body``.
    ///   - repeatable: the fields that may come more than once; any other is refused the second time.
    init(_ bytes: [UInt8], kind: String, version: Int, allowsBody: Bool = false, repeatable: Set<String> = []) throws(TrustFileError) {
        var lines: [(text: ArraySlice<UInt8>, rest: Int)] = []
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            lines.append((bytes[start..<end], min(end + 1, bytes.count)))
            start = end + 1
        }
        guard let first = lines.first, var header = String(validating: first.text, as: UTF8.self) else {
            throw TrustFileError("it is empty or not UTF-8 text")
        }
        if header.hasSuffix("\r") { header.removeLast() }
        let words = header.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 2, words[0] == kind, let found = Int(words[1]) else {
            throw TrustFileError("its first line is not '\(kind) \(version)' but '\(header.prefix(60))'")
        }
        guard found == version else {
            throw TrustFileError("it is '\(kind)' format version \(found); this Missive reads version \(version)")
        }
        for line in lines.dropFirst() {
            if line.text.isEmpty {
                guard allowsBody else {
                    // Empty lines at the end are left by editors, and mean nothing.
                    if bytes[line.rest...].allSatisfy({ $0 == 0x0A || $0 == 0x0D }) { return }
                    throw TrustFileError("it has an empty line")
                }
                body = Array(bytes[line.rest...])
                return
            }
            guard var text = String(validating: line.text, as: UTF8.self) else { throw TrustFileError("it is not UTF-8 text") }
            // Files edited on another system may end their lines with CR LF.
            if text.hasSuffix("\r") { text.removeLast() }
            if text.hasPrefix("#") { continue }
            guard let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].hasPrefix(" ") else {
                throw TrustFileError("the line '\(text.prefix(60))' is not 'name: value'")
            }
            let name = String(text[..<colon])
            guard !name.isEmpty, name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
                throw TrustFileError("the line '\(text.prefix(60))' does not start with a field name")
            }
            guard repeatable.contains(name) || value(name) == nil else { throw TrustFileError("it has two '\(name):' lines") }
            fields.append((name, String(text[text.index(colon, offsetBy: 2)...])))
        }
    }

    /// A file's text: the header, then each field (`nil` values left out) and comment, in order.
    static func render(kind: String, version: Int, _ lines: [(name: String, value: String?)]) -> String {
        var text = "\(kind) \(version)\n"
        for (name, value) in lines {
            guard let value else { continue }
            text += name == "#" ? "# \(value)\n" : "\(name): \(value)\n"
        }
        return text
    }
}

/// Why a key or signature file is not in its format, or cannot be read or written.
struct TrustFileError: Error {
    let reason: String

    init(_ reason: String) { self.reason = reason }
}
