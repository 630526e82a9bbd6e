import ArgumentParser
import Foundation
import MissiveCommandLine
import Missive

extension MissiveCommand {
    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new Ed25519 key pair for signing plugins.",
            discussion: """
                Writes the private key to KEY (mode 0600: keep it secret) and the public key to KEY.pub, and prints \
                the key's fingerprint. Never writes over a file: when KEY or KEY.pub exists, it writes neither. \
                Hosts trust plugins signed with the key once KEY.pub is in one of their trusted-key folders \
                (~/.config/missive/trusted-keys or /etc/missive/trusted-keys; docs/TRUST.md). Exit codes: 0 when \
                both files were written, 1 when a file exists or cannot be written, 2 for a usage error.
                """)

        @Argument(help: ArgumentHelp("Where to write the private key; the public key goes to the same path with .pub added.", valueName: "key"))
        var key: String

        @Option(help: "Whose key it is, written in both files (default: user@host).")
        var comment: String?

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        func validate() throws {
            guard !key.hasSuffix(PluginTrustPolicy.keyFileSuffix) else {
                throw ValidationError("name the private key's file; the public key is written to it with .pub added")
            }
        }

        func run() throws {
            let signing = PluginSigningKey.generate(comment: comment ?? "\(ProcessInfo.processInfo.userName)@\(ProcessInfo.processInfo.hostName)")
            let publicPath = key + PluginTrustPolicy.keyFileSuffix
            do {
                try signing.write(privateKeyTo: key, publicKeyTo: publicPath)
            } catch {
                Console.error(error.description)
                throw ExitCode(1)
            }
            let publicKey = signing.publicKey
            switch format {
            case .json:
                try Console.out(json: KeygenJSON(privateKeyFile: key, publicKeyFile: publicPath, key: PublicKeyJSON(publicKey)))
            case .text:
                Console.out("""
                    wrote the private key \(key) (mode 0600: keep it secret) and the public key \(publicPath)
                    fingerprint: \(publicKey.fingerprint)
                    Sign with `missive sign FILE --key \(key)`; hosts trust the signatures once \(publicPath) is in a trusted-key folder.
                    """)
            }
        }
    }
}

/// `missive keygen --format json`: the key files written, and the key.
struct KeygenJSON: CLIJSON {
    static let documentedAs = "keygen"
    let schemaVersion = 1
    var privateKeyFile: String
    var publicKeyFile: String
    var key: PublicKeyJSON
}
