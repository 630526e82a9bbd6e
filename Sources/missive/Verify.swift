import ArgumentParser
import Foundation
import MissiveCommandLine
import Logging
import Missive

extension MissiveCommand {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check plugin files' signatures: by which key, whether it is trusted, or why not.",
            discussion: """
                Reads FILE.sig beside each file and says whether it is a good signature of this very file and \
                metadata, by which key (its fingerprint), and whether that key is trusted: one of the .pub files \
                in the trusted-key folders ($MISSIVE_TRUSTED_KEYS_PATH, else $XDG_CONFIG_HOME/missive/trusted-keys \
                or ~/.config/missive/trusted-keys, and /etc/missive/trusted-keys), or with --key only the keys \
                given. The status is trusted, untrusted-key, modified-after-signing, bad-signature, \
                malformed-signature or unsigned-plugin, or the error code of a file that is not a readable plugin. \
                It verifies whatever MISSIVE_TRUST says, and leaves out the file-system checks, which concern \
                where a plugin is loaded from. Exit codes: 0 when every file is signed by a trusted key and \
                unchanged since, 1 when any is not, 2 for a usage error.
                """)

        @Argument(help: "Plugin files (.so) to verify.")
        var files: [String]

        @Option(name: .customLong("key"), help: ArgumentHelp("Trust only this public key file, instead of the trusted-key folders. Repeatable.", valueName: "pub"))
        var keys: [String] = []

        @Option(help: ArgumentHelp("Read the signature from this file instead of FILE.sig (one file only).", valueName: "file"))
        var signature: String?

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            if signature != nil && files.count != 1 { throw ValidationError("--signature takes one plugin file") }
        }

        func run() throws {
            let policy: PluginTrustPolicy
            if keys.isEmpty {
                policy = try MissiveCommand.trustPolicy(logger: logging.logger())
            } else {
                var trusted: [TrustedKey] = []
                for path in keys {
                    do {
                        trusted.append(TrustedKey(key: try PluginPublicKey.read(fromFile: path), source: path))
                    } catch {
                        Console.error(error.description)
                        throw ExitCode(2)
                    }
                }
                policy = PluginTrustPolicy(mode: .require, trustedKeys: trusted)
            }
            var verified: [VerifyJSON.File] = []
            var allTrusted = true
            for file in files {
                var metadata: PluginMetadata?
                do {
                    let read = try PluginMetadata.read(fromFile: file)
                    metadata = read
                    let verification = try policy.verify(file: file, metadata: read, signatureFile: signature)
                    allTrusted = allTrusted && verification.isTrusted
                    if format == .text { Console.out(text(verification, metadata: read, policy: policy)) }
                    verified.append(VerifyJSON.File(verification, metadata: read))
                } catch {
                    allTrusted = false
                    if format == .text { Console.out("\(file): \(error.code): \(error.message)") }
                    verified.append(VerifyJSON.File(
                        file: file, status: error.code.description, trusted: false, reason: error.message,
                        signatureFile: signature ?? PluginSignature.path(for: file), plugin: metadata.map(VerifyJSON.Plugin.init), signer: nil,
                        trustedBy: nil, signed: nil))
                }
            }
            if format == .json {
                try Console.out(json: VerifyJSON(
                    trustedKeys: policy.trustedKeys.map {
                        VerifyJSON.TrustedKey(fingerprint: $0.key.fingerprint, comment: $0.key.comment.isEmpty ? nil : $0.key.comment, source: $0.source)
                    },
                    trustedKeyFolders: policy.trustedKeyFolders, files: verified))
            }
            if !allTrusted { throw ExitCode(1) }
        }

        /// `FILE: STATUS: reason`, then the plugin and the signature file indented.
        private func text(_ verification: SignatureVerification, metadata: PluginMetadata, policy: PluginTrustPolicy) -> String {
            var reason = verification.reason
            if verification.status == .untrustedKey {
                reason += policy.trustedKeyFolders.isEmpty
                    ? " (trusted: \(policy.trustedKeys.map(\.source).joined(separator: ", ")))"
                    : " (trusted keys are the .pub files in \(policy.trustedKeyFolders.joined(separator: ", ")))"
            }
            return """
                \(verification.file): \(verification.status.rawValue): \(reason)
                  plugin:    \(metadata.name) \(metadata.version) by \(metadata.vendor), ABI \(metadata.abiVersion)
                  signature: \(verification.signatureFile)
                """
        }
    }
}

/// `missive verify --format json`: the keys trusted, and one entry per file.
struct VerifyJSON: CLIJSON {
    static let documentedAs = "verify"
    let schemaVersion = 1
    var trustedKeys: [TrustedKey]
    var trustedKeyFolders: [String]
    var files: [File]

    /// A trusted key, and the `.pub` file it came from.
    struct TrustedKey: Encodable {
        var fingerprint: String
        var comment: String?
        var source: String
    }

    /// One file: its status, the signer and the statement signed.
    struct File: Encodable {
        var file: String
        /// `trusted`, `untrusted-key`, ..., or the error code of a file that is not a readable plugin.
        var status: String
        var trusted: Bool
        var reason: String
        var signatureFile: String
        var plugin: Plugin?
        var signer: PublicKeyJSON?
        /// The `.pub` file that trusts the signer.
        var trustedBy: String?
        var signed: Statement?
    }

    /// A plugin's metadata, as a statement names it.
    struct Plugin: Encodable {
        var name: String
        var version: String
        var vendor: String
        var abiVersion: String
        var types: [String]
    }

    /// The statement a signature signs.
    struct Statement: Encodable {
        var sha256: String
        var name: String
        var version: String
        var vendor: String
        var abiVersion: String
        var types: [String]
    }
}

extension VerifyJSON.Plugin {
    init(_ metadata: PluginMetadata) {
        self.init(name: metadata.name, version: metadata.version, vendor: metadata.vendor, abiVersion: metadata.abiVersion, types: metadata.types.map(\.objectName))
    }
}

extension VerifyJSON.File {
    init(_ verification: SignatureVerification, metadata: PluginMetadata) {
        self.init(
            file: verification.file, status: verification.status.rawValue, trusted: verification.isTrusted, reason: verification.reason,
            signatureFile: verification.signatureFile, plugin: VerifyJSON.Plugin(metadata), signer: verification.signer.map(PublicKeyJSON.init),
            trustedBy: verification.trustedBy?.source,
            signed: verification.signedStatement.map {
                VerifyJSON.Statement(sha256: $0.sha256Hex, name: $0.name, version: $0.version, vendor: $0.vendor, abiVersion: $0.abi, types: $0.objectNames)
            })
    }
}
