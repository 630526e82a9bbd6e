import ArgumentParser
import Missive
import MissiveCommandLine

extension MissiveCommand {
    struct Sign: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign plugin files with a private key from `missive keygen`.",
            discussion: """
                Writes a detached signature beside each file, FILE.sig (replacing one that is there), over the \
                file's SHA-256 and the identity its metadata declares: name, version, vendor, ABI and the \
                objectNames of its types (docs/TRUST.md, "The statement"). Sign the file exactly as it is shipped: \
                any change to it afterwards, stripping included, breaks the signature. A private key that its group \
                or others may read is refused. Exit codes: 0 when every file was signed, 1 when a file is not a \
                readable plugin or its signature cannot be written, 2 for a usage error or an unusable key.
                """)

        @Argument(help: "Plugin files (.so) to sign.")
        var files: [String]

        @Option(help: ArgumentHelp("The private key file.", valueName: "key"))
        var key: String

        @Option(help: ArgumentHelp("Write the signature here instead of FILE.sig (one file only).", valueName: "file"))
        var output: String?

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        func validate() throws {
            if output != nil && files.count != 1 { throw ValidationError("--output takes one plugin file") }
        }

        func run() throws {
            let signing: PluginSigningKey
            do {
                signing = try PluginSigningKey.read(fromFile: key)
            } catch {
                Console.error(error.description)
                throw ExitCode(2)
            }
            var signed: [SignJSON.File] = []
            var failed = false
            for file in files {
                let target = output ?? PluginSignature.path(for: file)
                var metadata: PluginMetadata?
                do {
                    let read = try PluginMetadata.read(fromFile: file)
                    metadata = read
                    try PluginSignature.sign(file: file, metadata: read, with: signing).write(to: target)
                    if format == .text {
                        Console.out("signed \(read.name) \(read.version) (\(file)) with \(signing.publicKey): wrote \(target)")
                    }
                    signed.append(SignJSON.File(file: file, signatureFile: target, name: read.name, version: read.version, error: nil))
                } catch {
                    failed = true
                    Console.error("\(file): not signed: [\(error.code)] \(error.message)")
                    signed.append(SignJSON.File(file: file, signatureFile: nil, name: metadata?.name, version: metadata?.version, error: RejectionJSON(error)))
                }
            }
            if format == .json { try Console.out(json: SignJSON(signer: PublicKeyJSON(signing.publicKey), files: signed)) }
            if failed { throw ExitCode(1) }
        }
    }
}

/// `missive sign --format json`: the signer's key, and one entry per file.
struct SignJSON: CLIJSON {
    static let documentedAs = "sign"
    let schemaVersion = 1
    var signer: PublicKeyJSON
    var files: [File]

    /// One file: its signature, or why it was not signed.
    struct File: Encodable {
        var file: String
        var signatureFile: String?
        var name: String?
        var version: String?
        var error: RejectionJSON?
    }
}
