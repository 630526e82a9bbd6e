import Crypto
import Foundation

/// A public key that plugin signatures are checked with: an Ed25519 public key, and a comment saying whose
/// it is.
///
/// On disk it is a public key file (docs/TRUST.md, "Key files"):
///
/// ```
/// missive-public-key 1
/// # fingerprint: SHA256:4c1f0e6a9b2d7c3e8f5a1b0c9d2e7f63
/// algorithm: ed25519
/// public-key: 7g0j3Yq6N4i0ZPvx1xk0o0iVtX8Lr3sVw3o1lJ3k2mE=
/// comment: Acme release key
/// ```
///
/// Trust compares the whole key; the ``fingerprint`` is a short name of it for people.
public struct PluginPublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The first line of a public key file, without its version.
    public static let fileKind = "missive-public-key"
    /// The version of the public key file format this Missive writes and reads.
    public static let fileVersion = 1

    /// The key's 32 bytes, as Ed25519 defines them.
    public let rawRepresentation: [UInt8]
    /// Whose key it is, in the owner's words; may be empty. Not covered by anything: only a label.
    public var comment: String

    /// A key of these 32 bytes.
    ///
    /// - Throws: ``MissiveError`` `invalidKey` when the bytes are not an Ed25519 public key.
    public init(rawRepresentation: some Collection<UInt8>, comment: String = "") throws(MissiveError) {
        let bytes = Array(rawRepresentation)
        guard bytes.count == 32, (try? Curve25519.Signing.PublicKey(rawRepresentation: bytes)) != nil else {
            throw MissiveError(.invalidKey, "an Ed25519 public key has 32 bytes, not \(bytes.count)")
        }
        self.rawRepresentation = bytes
        self.comment = comment
    }

    /// `SHA256:` and the first 16 bytes of the SHA-256 of ``rawRepresentation`` in lowercase hex: a short
    /// name for people to compare. Two keys with the same fingerprint are, in practice, the same key.
    public var fingerprint: String {
        "SHA256:" + TrustFiles.sha256(rawRepresentation).prefix(16).hex
    }

    /// ``rawRepresentation`` in base64, as key and signature files write it.
    public var base64: String { Data(rawRepresentation).base64EncodedString() }

    /// The fingerprint, and the comment in parentheses when there is one.
    public var description: String { comment.isEmpty ? fingerprint : "\(fingerprint) (\(comment))" }

    /// Whether `signature` is this key's Ed25519 signature of `message`.
    public func isValidSignature(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    /// The text of the key's public key file.
    public var fileText: String {
        TrustFileText.render(
            kind: Self.fileKind, version: Self.fileVersion,
            [("#", "fingerprint: \(fingerprint)"), ("algorithm", "ed25519"), ("public-key", base64),
             ("comment", comment.isEmpty ? nil : TrustText.oneLine(comment))])
    }

    /// Parses the text of a public key file.
    ///
    /// - Throws: ``MissiveError`` `invalidKey`, with the reason.
    public init(fileText bytes: [UInt8]) throws(MissiveError) {
        let parsed = Result { () throws(TrustFileError) in
            let text = try TrustFileText(bytes, kind: Self.fileKind, version: Self.fileVersion)
            guard try text.required("algorithm") == "ed25519" else {
                throw TrustFileError("its algorithm is '\(text.value("algorithm") ?? "")', not ed25519")
            }
            return (try text.base64("public-key", count: 32), text.value("comment") ?? "")
        }
        switch parsed {
        case .success(let (raw, comment)): try self.init(rawRepresentation: raw, comment: comment)
        case .failure(let error): throw MissiveError(.invalidKey, "not a Missive public key file: \(error.reason)")
        }
    }

    /// Reads the public key file at `path`.
    ///
    /// - Throws: ``MissiveError`` `invalidKey` naming the file, when it cannot be read or is not a public key
    ///   file.
    public static func read(fromFile path: String) throws(MissiveError) -> PluginPublicKey {
        switch TrustFiles.read(path) {
        case .failure(let error):
            throw MissiveError(.invalidKey, "cannot read the public key: \(error.reason)", file: path)
        case .success(let bytes):
            do {
                return try PluginPublicKey(fileText: bytes)
            } catch {
                throw MissiveError(.invalidKey, error.message, file: path)
            }
        }
    }
}

/// A private key that signs plugins: an Ed25519 private key and the comment of its public key.
///
/// On disk it is a private key file, which only its owner may read (mode 0600; docs/TRUST.md, "Key files"):
///
/// ```
/// missive-private-key 1
/// # fingerprint: SHA256:4c1f0e6a9b2d7c3e8f5a1b0c9d2e7f63
/// algorithm: ed25519
/// private-key: Wq4c...=
/// comment: Acme release key
/// ```
///
/// `private-key` is the 32-byte Ed25519 seed in base64; the public key is derived from it.
public struct PluginSigningKey: Sendable {
    /// The first line of a private key file, without its version.
    public static let fileKind = "missive-private-key"
    /// The version of the private key file format this Missive writes and reads.
    public static let fileVersion = 1

    private let key: Curve25519.Signing.PrivateKey
    /// Whose key it is; written in both key files.
    public var comment: String

    private init(key: Curve25519.Signing.PrivateKey, comment: String) {
        self.key = key
        self.comment = comment
    }

    /// A new key from the system's random source.
    public static func generate(comment: String = "") -> PluginSigningKey {
        PluginSigningKey(key: Curve25519.Signing.PrivateKey(), comment: comment)
    }

    /// The public key that checks this key's signatures, with the same comment.
    public var publicKey: PluginPublicKey {
        // 32 bytes of a real key: cannot fail.
        (try? PluginPublicKey(rawRepresentation: key.publicKey.rawRepresentation, comment: comment))!
    }

    /// The Ed25519 signature of `message`: 64 bytes.
    public func signature(of message: [UInt8]) throws(MissiveError) -> [UInt8] {
        do {
            return Array(try key.signature(for: message))
        } catch {
            throw MissiveError(.invalidKey, "cannot sign: \(error)")
        }
    }

    /// The text of the private key file.
    public var fileText: String {
        TrustFileText.render(
            kind: Self.fileKind, version: Self.fileVersion,
            [("#", "fingerprint: \(publicKey.fingerprint)"), ("#", "keep this file secret: it signs plugins in your name"),
             ("algorithm", "ed25519"), ("private-key", Data(key.rawRepresentation).base64EncodedString()),
             ("comment", comment.isEmpty ? nil : TrustText.oneLine(comment))])
    }

    /// Parses the text of a private key file.
    ///
    /// - Throws: ``MissiveError`` `invalidKey`, with the reason.
    public init(fileText bytes: [UInt8]) throws(MissiveError) {
        switch Self.parse(bytes) {
        case .success(let (key, comment)): self.init(key: key, comment: comment)
        case .failure(let error): throw MissiveError(.invalidKey, "not a Missive private key file: \(error.reason)")
        }
    }

    private static func parse(_ bytes: [UInt8]) -> Result<(Curve25519.Signing.PrivateKey, String), TrustFileError> {
        Result { () throws(TrustFileError) in
            let text = try TrustFileText(bytes, kind: Self.fileKind, version: Self.fileVersion)
            guard try text.required("algorithm") == "ed25519" else {
                throw TrustFileError("its algorithm is '\(text.value("algorithm") ?? "")', not ed25519")
            }
            let seed = try text.base64("private-key", count: 32)
            guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else {
                throw TrustFileError("its private key is not an Ed25519 key")
            }
            return (key, text.value("comment") ?? "")
        }
    }

    /// Reads the private key file at `path`, refusing one that its group or others may read, as ssh does:
    /// such a key may be known to others, and signatures made with it prove nothing.
    ///
    /// - Throws: ``MissiveError`` `invalidKey` naming the file.
    public static func read(fromFile path: String) throws(MissiveError) -> PluginSigningKey {
        let key: PluginSigningKey
        switch TrustFiles.read(path) {
        case .failure(let error):
            throw MissiveError(.invalidKey, "cannot read the private key: \(error.reason)", file: path)
        case .success(let bytes):
            do {
                key = try PluginSigningKey(fileText: bytes)
            } catch {
                throw MissiveError(.invalidKey, error.message, file: path)
            }
        }
        if case .success(let status) = TrustFiles.status(TrustFiles.resolved(path) ?? path), status.readableByOthers {
            throw MissiveError(
                .invalidKey, "the private key may be read by its group or others (mode \(status.octal)); `chmod 600` it, since a key others can read signs nothing",
                file: path)
        }
        return key
    }

    /// Writes the private key file (mode 0600) and the public key file (mode 0644). Writes over nothing: when
    /// either path is taken, it writes neither.
    ///
    /// - Throws: ``MissiveError`` `ioFailure` naming the file that exists or cannot be written.
    public func write(privateKeyTo privatePath: String, publicKeyTo publicPath: String) throws(MissiveError) {
        for path in [privatePath, publicPath] where TrustFiles.exists(path) {
            throw MissiveError(.ioFailure, "the file exists; a key file is never written over", file: path)
        }
        if let failure = TrustFiles.create(privatePath, Array(fileText.utf8), mode: 0o600) {
            throw MissiveError(.ioFailure, "cannot write the private key: \(failure.reason)", file: privatePath)
        }
        if let failure = TrustFiles.create(publicPath, Array(publicKey.fileText.utf8), mode: 0o644) {
            TrustFiles.remove(privatePath)
            throw MissiveError(.ioFailure, "cannot write the public key: \(failure.reason)", file: publicPath)
        }
    }
}

/// Text rules of the trust files.
enum TrustText {
    /// `text` with every control character (U+0000–U+001F, U+007F–U+009F) replaced by a space, to keep a
    /// comment on its line.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? " " : $0 }))
    }
}

extension Sequence<UInt8> {
    /// The bytes in lowercase hex, two digits each.
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}
