import ArgumentParser
import Foundation
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
            var json = JSONWriter()
            json.beginObject()
            json.field("schemaVersion", 1)
            json.key("trustedKeys")
            json.beginArray()
            for trusted in policy.trustedKeys {
                json.beginObject()
                json.field("fingerprint", trusted.key.fingerprint)
                json.field("comment", trusted.key.comment.isEmpty ? nil : trusted.key.comment)
                json.field("source", trusted.source)
                json.endObject()
            }
            json.endArray()
            json.key("trustedKeyFolders")
            json.strings(policy.trustedKeyFolders)
            json.key("files")
            json.beginArray()
            var allTrusted = true
            for file in files {
                var metadata: PluginMetadata?
                do {
                    let read = try PluginMetadata.read(fromFile: file)
                    metadata = read
                    let verification = try policy.verify(file: file, metadata: read, signatureFile: signature)
                    allTrusted = allTrusted && verification.isTrusted
                    if format == .text { Console.out(text(verification, metadata: read, policy: policy)) }
                    json.verification(verification, metadata: read)
                } catch {
                    allTrusted = false
                    if format == .text { Console.out("\(file): \(error.code): \(error.message)") }
                    json.beginObject()
                    json.field("file", file)
                    json.field("status", error.code.description)
                    json.field("trusted", false)
                    json.field("reason", error.message)
                    json.field("signatureFile", signature ?? PluginSignature.path(for: file))
                    json.key("plugin")
                    if let metadata { json.trustedPlugin(metadata) } else { json.null() }
                    json.key("signer")
                    json.null()
                    json.field("trustedBy", nil)
                    json.key("signed")
                    json.null()
                    json.endObject()
                }
            }
            json.endArray()
            json.endObject()
            if format == .json { Console.out(bytes: json.bytes) }
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

extension JSONWriter {
    /// `{"name", "version", "vendor", "abiVersion", "types"}` of a plugin's metadata, as a statement names it.
    mutating func trustedPlugin(_ metadata: PluginMetadata) {
        beginObject()
        field("name", metadata.name)
        field("version", metadata.version)
        field("vendor", metadata.vendor)
        field("abiVersion", metadata.abiVersion)
        key("types")
        strings(metadata.types.map(\.objectName))
        endObject()
    }

    /// One file of `missive verify --format json`.
    mutating func verification(_ verification: SignatureVerification, metadata: PluginMetadata) {
        beginObject()
        field("file", verification.file)
        field("status", verification.status.rawValue)
        field("trusted", verification.isTrusted)
        field("reason", verification.reason)
        field("signatureFile", verification.signatureFile)
        key("plugin")
        trustedPlugin(metadata)
        key("signer")
        publicKey(verification.signer)
        field("trustedBy", verification.trustedBy?.source)
        key("signed")
        if let signed = verification.signedStatement {
            beginObject()
            field("sha256", signed.sha256Hex)
            field("name", signed.name)
            field("version", signed.version)
            field("vendor", signed.vendor)
            field("abiVersion", signed.abi)
            key("types")
            strings(signed.objectNames)
            endObject()
        } else {
            null()
        }
        endObject()
    }
}
