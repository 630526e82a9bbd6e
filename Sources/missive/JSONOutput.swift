import Missive
import MissiveCommandLine

/// The JSON a subcommand writes with `--format json`, or a shape several of them share: an `Encodable` value
/// whose members, in declaration order, are the fields docs/CLI-JSON.md documents in its block named
/// ``documentedAs`` (CLIJSONContractTests holds the two together). ``JSONWriterEncoder`` writes it: an absent
/// optional is `null`, never left out, and a ``RawJSON`` member (bytes received) is written unchanged.
protocol CLIJSON: Encodable, Sendable {
    /// The name of its JSON block in docs/CLI-JSON.md (`<!-- json: NAME -->`).
    static var documentedAs: String { get }
    /// A value with every optional present and one element in every array, so that every field shows in its
    /// JSON: what `missive json-examples` prints, and the contract test compares with the document.
    static var example: Self { get }
}

extension Console {
    /// Writes the JSON of `output` on standard output, with unsafe code points escaped (``out(bytes:)``).
    static func out(json output: some CLIJSON) throws {
        out(bytes: try JSONWriterEncoder.encode(output))
    }
}

/// **persistence**: `{"name": "counted", "value": 3}`.
extension PersistenceJSON: CLIJSON {
    static let documentedAs = "persistence"
}

/// **container**: what a container dispatches on.
struct ContainerJSON: CLIJSON {
    static let documentedAs = "container"
    var objectName: String
    var key: String
    /// `string` or `integer`.
    var keyKind: String
}

extension ContainerJSON {
    init(_ container: MessageContainer) { self.init(objectName: container.objectName, key: container.key, keyKind: container.keyKind.rawValue) }

    /// The shape of `container`, or `nil` (written `null`).
    static func of(_ container: MessageContainer?) -> Self? { container.map(Self.init) }
}

/// **rejection**: a refused file, type or action, with its refusal code.
struct RejectionJSON: CLIJSON {
    static let documentedAs = "rejection"
    var file: String?
    var objectName: String?
    var action: String?
    var code: String
    var reason: String
}

extension RejectionJSON {
    init(_ error: MissiveError) {
        self.init(file: error.file, objectName: error.objectName, action: error.action, code: error.code.description, reason: error.message)
    }
}

/// **plugin**: a loaded plugin; `abi` is the older name of `abiVersion`, kept for scripts that read it.
struct PluginJSON: CLIJSON {
    static let documentedAs = "plugin"
    var name: String
    var version: String
    var vendor: String
    var abi: String
    var abiVersion: String
    var file: String
}

extension PluginJSON {
    init(_ info: PluginInfo) {
        self.init(name: info.name, version: info.version, vendor: info.vendor, abi: info.abiVersion, abiVersion: info.abiVersion, file: info.path)
    }
}

/// **media**: a media reference.
struct MediaJSON: CLIJSON {
    static let documentedAs = "media"
    var remoteURL: String?
    var localPath: String?
    var mimeType: String
    var sizeBytes: Int64?
}

extension MediaJSON {
    init(_ media: MediaReference) { self.init(remoteURL: media.remoteURL, localPath: media.localPath, mimeType: media.mimeType, sizeBytes: media.sizeBytes) }
}

/// **key**: a public key, by its fingerprint; `comment` is `null` when the key has none.
struct PublicKeyJSON: CLIJSON {
    static let documentedAs = "key"
    var fingerprint: String
    var publicKey: String
    var comment: String?
}

extension PublicKeyJSON {
    init(_ key: PluginPublicKey) { self.init(fingerprint: key.fingerprint, publicKey: key.base64, comment: key.comment.isEmpty ? nil : key.comment) }
}
