/// What a plugin signature vouches for: the plugin file's SHA-256 and the identity its metadata declares,
/// written as a canonical text that the signature covers byte for byte (docs/TRUST.md, "The statement").
///
/// ```
/// missive-plugin-statement 1
/// sha256: 9f2c0d…(64 hex digits)
/// name: DemoMessages
/// version: 1.0.0
/// vendor: Missive Samples
/// abi: 1.1
/// type: demo:link
/// type: demo:poll
/// ```
///
/// The same file and metadata always give the same bytes: the fields come in this order, one `type:` line
/// per declared type with the objectNames in byte order, each line ended by a line feed. A value's `%` and
/// control characters (U+0000–U+001F, U+007F) are written as `%` and two uppercase hex digits, so that every
/// value stays on its line. The file's name is not part of it: installing under another name keeps the
/// signature good.
public struct PluginStatement: Sendable, Hashable, CustomStringConvertible {
    /// The first line of a statement, without its version.
    public static let kind = "missive-plugin-statement"
    /// The version of the statement this Missive writes and reads.
    public static let version = 1

    /// The SHA-256 of the whole plugin file: 32 bytes.
    public var sha256: [UInt8]
    /// The plugin's name, from its metadata.
    public var name: String
    /// The plugin's version.
    public var version: String
    /// The plugin's vendor.
    public var vendor: String
    /// The ABI version, `major.minor`.
    public var abi: String
    /// The objectNames of the plugin's types, in byte order.
    public var objectNames: [String]

    /// The statement about a file whose SHA-256 is `sha256` and whose metadata is `metadata`.
    public init(sha256: [UInt8], metadata: PluginMetadata) {
        self.sha256 = sha256
        name = metadata.name
        version = metadata.version
        vendor = metadata.vendor
        abi = metadata.abiVersion
        objectNames = metadata.types.map(\.objectName).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The statement about the plugin file at `path`, whose metadata is `metadata`: reads the whole file to
    /// hash it.
    ///
    /// - Throws: ``MissiveError`` `ioFailure` when the file cannot be read.
    public static func of(file path: String, metadata: PluginMetadata) throws(MissiveError) -> PluginStatement {
        switch TrustFiles.sha256(ofFile: path) {
        case .success(let hash): return PluginStatement(sha256: hash, metadata: metadata)
        case .failure(let error): throw MissiveError(.ioFailure, "cannot read the plugin file to hash it: \(error.reason)", file: path)
        }
    }

    /// ``sha256`` in lowercase hex, as the statement writes it.
    public var sha256Hex: String { sha256.hex }

    /// The canonical text.
    public var text: String {
        var lines = ["\(Self.kind) \(Self.version)", "sha256: \(sha256.hex)", "name: \(Self.escape(name))", "version: \(Self.escape(version))",
                     "vendor: \(Self.escape(vendor))", "abi: \(Self.escape(abi))"]
        lines += objectNames.map { "type: \(Self.escape($0))" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The canonical text's UTF-8 bytes: what a signature signs.
    public var bytes: [UInt8] { Array(text.utf8) }

    /// `DemoMessages 1.0.0 by Missive Samples, ABI 1.1, SHA-256 9f2c0d…`.
    public var description: String {
        "\(name) \(version) by \(vendor), ABI \(abi), SHA-256 \(sha256.hex)"
    }

    /// Parses a statement's text; it must be canonical, so that its text gives back `bytes`.
    ///
    /// - Throws: the reason it is not a canonical statement this Missive reads.
    static func parse(_ bytes: [UInt8]) throws(TrustFileError) -> PluginStatement {
        let text = try TrustFileText(bytes, kind: kind, version: version, repeatable: ["type"])
        var sha: [UInt8] = []
        let hex = try text.required("sha256")
        for index in stride(from: 0, to: hex.utf8.count, by: 2) {
            let pair = hex.utf8.dropFirst(index).prefix(2)
            guard pair.count == 2, let byte = UInt8(String(decoding: pair, as: UTF8.self), radix: 16) else { break }
            sha.append(byte)
        }
        guard sha.count == 32 else { throw TrustFileError("its sha256 is not 64 hex digits") }
        let objectNames = text.fields.filter { $0.name == "type" }.map { unescape($0.value) }
        var metadata = PluginMetadata(
            name: unescape(try text.required("name")), version: unescape(try text.required("version")),
            vendor: unescape(try text.required("vendor")), abiMajor: 0, types: [])
        metadata.types = objectNames.map { PluginMetadata.TypeEntry(objectName: $0, businessID: nil, persistenceValue: 0, isMedia: false) }
        var statement = PluginStatement(sha256: sha, metadata: metadata)
        statement.abi = unescape(try text.required("abi"))
        guard statement.bytes == bytes else { throw TrustFileError("it is not written canonically") }
        return statement
    }

    /// What differs between this statement and `other`, as `what is now X, signed Y` phrases, with `self`
    /// being now and `other` what was signed.
    func differences(from signed: PluginStatement) -> [String] {
        var found: [String] = []
        if sha256 != signed.sha256 { found.append("its SHA-256 is now \(sha256.hex), signed \(signed.sha256.hex)") }
        for (field, now, then) in [("name", name, signed.name), ("version", version, signed.version), ("vendor", vendor, signed.vendor), ("ABI", abi, signed.abi)]
        where now != then {
            found.append("its \(field) is now '\(now)', signed '\(then)'")
        }
        if objectNames != signed.objectNames {
            found.append("its types are now \(objectNames.joined(separator: ", ")), signed \(signed.objectNames.joined(separator: ", "))")
        }
        return found
    }

    /// `%` and control characters as `%XX`.
    private static func escape(_ value: String) -> String {
        var escaped = ""
        for scalar in value.unicodeScalars {
            if scalar == "%" || scalar.value < 0x20 || scalar.value == 0x7F {
                escaped += "%" + String(UInt8(scalar.value) >> 4, radix: 16).uppercased() + String(UInt8(scalar.value) & 0x0F, radix: 16).uppercased()
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// The inverse of ``escape(_:)``; a `%` not followed by two hex digits stays as it is (and the statement
    /// is then not canonical, which ``parse(_:)`` finds).
    private static func unescape(_ value: String) -> String {
        guard value.contains("%") else { return value }
        var bytes: [UInt8] = []
        let utf8 = Array(value.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == 0x25, index + 2 < utf8.count,
                let byte = UInt8(String(decoding: utf8[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                bytes.append(byte)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
