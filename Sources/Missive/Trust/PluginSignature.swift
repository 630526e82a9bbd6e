import Foundation

/// A detached signature of a plugin file, kept beside it as `FILE.sig` (docs/TRUST.md, "Signature files").
///
/// ```
/// missive-signature 1
/// # signed by SHA256:4c1f0e6a9b2d7c3e8f5a1b0c9d2e7f63 (Acme release key)
/// algorithm: ed25519
/// public-key: 7g0j3Yq6N4i0ZPvx1xk0o0iVtX8Lr3sVw3o1lJ3k2mE=
/// signature: lV1x…(88 base64 characters)
///
/// missive-plugin-statement 1
/// sha256: 9f2c0d…
/// name: DemoMessages
/// …
/// ```
///
/// The signature is Ed25519, by the key named in `public-key`, over the exact bytes after the empty line: a
/// ``PluginStatement`` of the file's SHA-256 and metadata. Which keys to believe is the trust policy's
/// business, not the file's.
public struct PluginSignature: Sendable, Hashable {
    /// The first line of a signature file, without its version.
    public static let fileKind = "missive-signature"
    /// The version of the signature file format this Missive writes and reads.
    public static let fileVersion = 1
    /// What is added to a plugin file's path to name its signature file.
    public static let fileSuffix = ".sig"

    /// The key that made the signature, as the file names it (with no comment: the file does not carry one).
    public var key: PluginPublicKey
    /// The Ed25519 signature: 64 bytes.
    public var signature: [UInt8]
    /// The statement signed, byte for byte.
    public var statement: [UInt8]

    /// A signature made of its parts. The key's comment is left out, since the file does not carry one.
    public init(key: PluginPublicKey, signature: [UInt8], statement: [UInt8]) {
        self.key = key
        self.key.comment = ""
        self.signature = signature
        self.statement = statement
    }

    /// The signature file of the plugin file at `path`: `path` with `.sig` added.
    public static func path(for file: String) -> String { file + fileSuffix }

    /// Signs the plugin file at `path`, whose metadata is `metadata`, with `key`.
    ///
    /// - Throws: ``MissiveError`` `ioFailure` when the file cannot be read.
    public static func sign(file path: String, metadata: PluginMetadata, with key: PluginSigningKey) throws(MissiveError) -> PluginSignature {
        let statement = try PluginStatement.of(file: path, metadata: metadata).bytes
        return PluginSignature(key: key.publicKey, signature: try key.signature(of: statement), statement: statement)
    }

    /// Whether ``signature`` is ``key``'s signature of ``statement``.
    public var isValid: Bool { key.isValidSignature(signature, of: statement) }

    /// The signed statement, parsed; `nil` when it is not a canonical statement this Missive reads.
    public var parsedStatement: PluginStatement? { try? PluginStatement.parse(statement) }

    /// The text of the signature file.
    public var fileText: [UInt8] {
        let head = TrustFileText.render(
            kind: Self.fileKind, version: Self.fileVersion,
            [("#", "signed by \(key.fingerprint)"), ("algorithm", "ed25519"), ("public-key", key.base64),
             ("signature", Data(signature).base64EncodedString())])
        return Array((head + "\n").utf8) + statement
    }

    /// Parses the text of a signature file.
    ///
    /// - Throws: ``MissiveError`` `malformedSignature`, with the reason.
    public init(fileText bytes: [UInt8]) throws(MissiveError) {
        let parsed = Result { () throws(TrustFileError) in
            let text = try TrustFileText(bytes, kind: Self.fileKind, version: Self.fileVersion, allowsBody: true)
            guard try text.required("algorithm") == "ed25519" else {
                throw TrustFileError("its algorithm is '\(text.value("algorithm") ?? "")', not ed25519")
            }
            let key = try text.base64("public-key", count: 32)
            let signature = try text.base64("signature", count: 64)
            guard let statement = text.body, !statement.isEmpty else { throw TrustFileError("it has no statement after an empty line") }
            guard let publicKey = try? PluginPublicKey(rawRepresentation: key) else { throw TrustFileError("its public key is not an Ed25519 key") }
            return PluginSignature(key: publicKey, signature: signature, statement: statement)
        }
        switch parsed {
        case .success(let signature): self = signature
        case .failure(let error): throw MissiveError(.malformedSignature, "not a Missive signature file: \(error.reason)")
        }
    }

    /// Reads the signature file at `path`.
    ///
    /// - Throws: ``MissiveError`` `malformedSignature` naming the file.
    public static func read(fromFile path: String) throws(MissiveError) -> PluginSignature {
        switch TrustFiles.read(path) {
        case .failure(let error):
            throw MissiveError(.malformedSignature, "cannot read the signature: \(error.reason)", file: path)
        case .success(let bytes):
            do {
                return try PluginSignature(fileText: bytes)
            } catch {
                throw MissiveError(.malformedSignature, error.message, file: path)
            }
        }
    }

    /// Writes the signature file at `path`, replacing one that is there at once (never half-written).
    ///
    /// - Throws: ``MissiveError`` `ioFailure` naming the file.
    public func write(to path: String) throws(MissiveError) {
        if let failure = TrustFiles.replace(path, fileText) {
            throw MissiveError(.ioFailure, "cannot write the signature: \(failure.reason)", file: path)
        }
    }
}

/// A public key that is trusted, and where the trust comes from.
public struct TrustedKey: Sendable, Hashable, CustomStringConvertible {
    /// The key.
    public var key: PluginPublicKey
    /// Where it was read from (a `.pub` file in a trusted-key folder), or how the host gave it.
    public var source: String

    /// A trusted key.
    public init(key: PluginPublicKey, source: String) {
        self.key = key
        self.source = source
    }

    /// `SHA256:… (comment) from SOURCE`.
    public var description: String { "\(key) from \(source)" }
}

/// What checking a plugin file's signature found: whether it is signed, by which key, whether that key is
/// trusted, and if the file is not admitted, why.
public struct SignatureVerification: Sendable {
    /// The outcome, from best to worst reasons last.
    public enum Status: String, Sendable, CaseIterable {
        /// A good signature of this very file and metadata, by a trusted key.
        case trusted
        /// A good signature of this very file and metadata, by a key that is not trusted.
        case untrustedKey = "untrusted-key"
        /// A good signature, but of another file or other metadata: the file changed after signing.
        case modifiedAfterSigning = "modified-after-signing"
        /// The signature does not verify with the key it names.
        case badSignature = "bad-signature"
        /// The signature file cannot be read or is not a signature file.
        case malformedSignature = "malformed-signature"
        /// There is no signature file.
        case unsigned = "unsigned-plugin"
    }

    /// The plugin file.
    public let file: String
    /// The signature file looked at (or looked for, when there is none).
    public let signatureFile: String
    /// The outcome.
    public let status: Status
    /// The key that made the signature, when the signature file could be read; with the trusted key's
    /// comment when it is trusted.
    public let signer: PluginPublicKey?
    /// The trusted key that matched, when the status is ``Status/trusted``.
    public let trustedBy: TrustedKey?
    /// The statement that was signed, when the signature file holds one this Missive reads.
    public let signedStatement: PluginStatement?
    /// A sentence saying what was found.
    public let reason: String

    /// Whether the signature admits the file: good, of this file, by a trusted key.
    public var isTrusted: Bool { status == .trusted }

    /// The error that refuses the file, naming it, for every status but ``Status/trusted``.
    public var refusal: MissiveError? {
        let code: MissiveError.Code
        switch status {
        case .trusted: return nil
        case .untrustedKey: code = .untrustedKey
        case .modifiedAfterSigning: code = .modifiedAfterSigning
        case .badSignature: code = .badSignature
        case .malformedSignature: code = .malformedSignature
        case .unsigned: code = .unsignedPlugin
        }
        return MissiveError(code, reason, file: file)
    }

    /// Checks the signature of the plugin file at `path`, whose metadata is `metadata`, against `trustedKeys`.
    ///
    /// The signature file is `signatureFile` when given; else `path` with `.sig` added, or, when there is none
    /// and `path` is a symbolic link, the resolved file's with `.sig` added. The whole file is read to hash it.
    ///
    /// - Throws: ``MissiveError`` `ioFailure` when the plugin file itself cannot be read; every problem of the
    ///   signature is a ``status`` instead.
    public static func verify(
        file path: String, metadata: PluginMetadata, trustedKeys: [TrustedKey], signatureFile: String? = nil
    ) throws(MissiveError) -> SignatureVerification {
        var signaturePath = signatureFile ?? PluginSignature.path(for: path)
        if signatureFile == nil, !TrustFiles.exists(signaturePath), let resolved = TrustFiles.resolved(path), resolved != path,
            TrustFiles.exists(PluginSignature.path(for: resolved))
        {
            signaturePath = PluginSignature.path(for: resolved)
        }
        func result(_ status: Status, _ reason: String, signer: PluginPublicKey? = nil, trustedBy: TrustedKey? = nil, signed: PluginStatement? = nil) -> SignatureVerification {
            SignatureVerification(
                file: path, signatureFile: signaturePath, status: status, signer: signer, trustedBy: trustedBy, signedStatement: signed, reason: reason)
        }
        guard TrustFiles.exists(signaturePath) else {
            return result(.unsigned, "not signed: there is no signature file \(signaturePath)")
        }
        let signature: PluginSignature
        do {
            signature = try PluginSignature.read(fromFile: signaturePath)
        } catch {
            return result(.malformedSignature, "the signature file \(signaturePath) is unusable: \(error.message)")
        }
        var signer = signature.key
        let trusted = trustedKeys.first { $0.key.rawRepresentation == signer.rawRepresentation }
        if let trusted { signer.comment = trusted.key.comment }
        guard signature.isValid else {
            return result(
                .badSignature, "bad signature: the signature in \(signaturePath) does not verify with the key it names, \(signer); the signature file was altered or damaged",
                signer: signer)
        }
        let signed = signature.parsedStatement
        let current = try PluginStatement.of(file: path, metadata: metadata)
        guard current.bytes == signature.statement else {
            let changes = signed.map { current.differences(from: $0) } ?? []
            let detail = changes.isEmpty ? "the signed statement is not one this Missive reads" : changes.joined(separator: "; ")
            return result(.modifiedAfterSigning, "the file changed after it was signed by \(signer): \(detail)", signer: signer, signed: signed)
        }
        guard let trusted else {
            return result(.untrustedKey, "signed by \(signer), which is not a trusted key", signer: signer, signed: signed)
        }
        return result(.trusted, "signed by \(signer), trusted by \(trusted.source)", signer: signer, trustedBy: trusted, signed: signed)
    }
}
