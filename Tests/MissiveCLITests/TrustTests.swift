import Foundation
import Missive
import MissiveConformance
import MissiveTestSupport
import Testing

/// Signed plugins, the trust policy and the file-system checks, on copies of the real sample plugins: through
/// the library (``PluginTrustPolicy/admit(file:metadata:)``) and through `missive keygen`, `sign`, `verify`
/// and `install`, run as users run them.
@Suite struct TrustTests {
    /// A private folder that passes the file-system checks, for keys and plugin copies.
    struct Lab {
        let root: String

        init() throws {
            root = try Fixtures.temporaryDirectory()
            // Whatever the umask, the folder must be writable by its owner only.
            chmod(root, 0o755)
            if let group = Self.sharedGroup { chown(root, uid_t.max, group) }
        }

        /// A group that is nobody's private group (`users`), given to the lab's folders and files so that the
        /// group-write rules apply to them whatever the user's own group is; `nil` when this process may not
        /// give files to it.
        static let sharedGroup: gid_t? = {
            guard let group = getgrnam("users") else { return nil }
            let probe = Fixtures.scratchPath("group")
            guard FileManager.default.createFile(atPath: probe, contents: nil) else { return nil }
            defer { unlink(probe) }
            return chown(probe, uid_t.max, group.pointee.gr_gid) == 0 ? group.pointee.gr_gid : nil
        }()

        /// A new folder in the lab, mode 0755, in the shared group.
        func folder(_ name: String) throws -> String {
            let path = root + "/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            chmod(path, 0o755)
            if let group = Self.sharedGroup { chown(path, uid_t.max, group) }
            return path
        }

        /// A copy of a sample plugin (or of a fixture plugin) in `folder`, mode 0755.
        func copy(_ product: String, into folder: String? = nil, as name: String? = nil) throws -> String {
            let source = FileManager.default.fileExists(atPath: Fixtures.library(product)) ? Fixtures.library(product) : try Fixtures.fixtureLibrary(product)
            let path = (folder ?? root) + "/" + (name ?? "lib\(product).so")
            try FileManager.default.copyItem(atPath: source, toPath: path)
            chmod(path, 0o755)
            if let group = Self.sharedGroup { chown(path, uid_t.max, group) }
            return path
        }

        /// A new key pair written as `name` and `name.pub` in the lab.
        func key(_ name: String, comment: String = "") throws -> (signing: PluginSigningKey, privatePath: String, publicPath: String) {
            let key = PluginSigningKey.generate(comment: comment)
            let path = root + "/" + name
            try key.write(privateKeyTo: path, publicKeyTo: path + ".pub")
            return (key, path, path + ".pub")
        }

        /// Signs the plugin file at `path` with `key`, writing `path.sig`.
        func sign(_ path: String, with key: PluginSigningKey) throws {
            try PluginSignature.sign(file: path, metadata: try PluginMetadata.read(fromFile: path), with: key).write(to: path + ".sig")
        }
    }

    /// The mode bits of a file.
    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    /// `admit`'s refusal of `path` under `policy`, or `nil` when it admits the file.
    static func refusal(_ policy: PluginTrustPolicy, _ path: String) throws -> MissiveError? {
        let metadata = try PluginMetadata.read(fromFile: path)
        do {
            _ = try policy.admit(file: path, metadata: metadata)
            return nil
        } catch {
            return error
        }
    }

    /// Environment for `missive` that reads trusted keys from `keys` only, with the given mode.
    static func environment(keys: String, mode: String?) -> [String: String] {
        var environment = [PluginTrustPolicy.keyFoldersVariable: keys]
        environment[PluginTrustPolicy.modeVariable] = mode ?? ""
        return environment
    }

    // MARK: - Keys, signing and verifying through the CLI

    @Test func keygenSignAndVerifyRoundTripThroughTheCLI() async throws {
        let lab = try Lab()
        let key = lab.root + "/release"
        let made = try await Fixtures.missive(["keygen", key, "--comment", "Test release key"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try Self.mode(key) == 0o600)
        #expect(try Self.mode(key + ".pub") == 0o644)
        let publicKey = try PluginPublicKey.read(fromFile: key + ".pub")
        #expect(publicKey.comment == "Test release key")
        #expect(made.stdout.contains("fingerprint: \(publicKey.fingerprint)"))
        #expect(publicKey.fingerprint.hasPrefix("SHA256:") && publicKey.fingerprint.count == 7 + 32)
        let privateText = try String(contentsOfFile: key, encoding: .utf8)
        #expect(privateText.hasPrefix("missive-private-key 1\n"))
        #expect(try String(contentsOfFile: key + ".pub", encoding: .utf8).hasPrefix("missive-public-key 1\n"))

        // Never written over: neither file changes, whichever one exists.
        let again = try await Fixtures.missive(["keygen", key])
        #expect(again.status == 1)
        #expect(again.stderr.contains("a key file is never written over"))
        #expect(try String(contentsOfFile: key, encoding: .utf8) == privateText)
        try FileManager.default.removeItem(atPath: key)
        #expect(try await Fixtures.missive(["keygen", key]).status == 1)
        #expect(!FileManager.default.fileExists(atPath: key))

        let plugin = try lab.copy("DemoMessages")
        let signed = try await Fixtures.missive(["sign", plugin, "--key", lab.root + "/release-restored"])
        #expect(signed.status == 2, "a missing key is a usage error")
        try privateText.write(toFile: key, atomically: false, encoding: .utf8)
        chmod(key, 0o600)
        let sign = try await Fixtures.missive(["sign", plugin, "--key", key])
        #expect(sign.status == 0, "\(sign.stderr)")
        #expect(sign.stdout.contains("signed DemoMessages 1.0.0 (\(plugin)) with \(publicKey.fingerprint) (Test release key): wrote \(plugin).sig"))

        // The statement names the file's SHA-256 and its metadata.
        let signature = try PluginSignature.read(fromFile: plugin + ".sig")
        let statement = try #require(signature.parsedStatement)
        let metadata = try PluginMetadata.read(fromFile: plugin)
        #expect(statement == (try PluginStatement.of(file: plugin, metadata: metadata)))
        #expect(statement.name == "DemoMessages" && statement.vendor == metadata.vendor && statement.abi == metadata.abiVersion)
        #expect(statement.objectNames == metadata.types.map(\.objectName).sorted())
        #expect(signature.key.fingerprint == publicKey.fingerprint)

        let verified = try await Fixtures.missive(["verify", plugin, "--key", key + ".pub"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.contains("\(plugin): trusted: signed by \(publicKey.fingerprint) (Test release key), trusted by \(key).pub"))

        // The trusted-key folders, as hosts read them, and JSON.
        let keys = try lab.folder("trusted")
        try FileManager.default.copyItem(atPath: key + ".pub", toPath: keys + "/release.pub")
        let json = try await Fixtures.missive(["verify", plugin, "--format", "json"], environment: Self.environment(keys: keys, mode: nil))
        #expect(json.status == 0, "\(json.stdout)\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let file = try #require((object["files"] as? [[String: Any]])?.first)
        #expect(file["status"] as? String == "trusted")
        #expect(file["trusted"] as? Bool == true)
        #expect(file["trustedBy"] as? String == keys + "/release.pub")
        #expect((file["signer"] as? [String: Any])?["fingerprint"] as? String == publicKey.fingerprint)
        #expect((file["signed"] as? [String: Any])?["sha256"] as? String == statement.sha256Hex)
        #expect(object["trustedKeyFolders"] as? [String] == [keys])

        // Without any trusted key it is a good signature by an untrusted key, exit code 1.
        let empty = try lab.folder("none")
        let untrusted = try await Fixtures.missive(["verify", plugin], environment: Self.environment(keys: empty, mode: nil))
        #expect(untrusted.status == 1)
        #expect(untrusted.stdout.contains("\(plugin): untrusted-key: signed by \(publicKey.fingerprint), which is not a trusted key"))
    }

    @Test func theLibraryAdmitsAPluginSignedByATrustedKey() throws {
        let lab = try Lab()
        let key = try lab.key("vendor", comment: "Vendor")
        let plugin = try lab.copy("CRating")
        try lab.sign(plugin, with: key.signing)
        let keys = try lab.folder("keys")
        try FileManager.default.copyItem(atPath: key.publicPath, toPath: keys + "/vendor.pub")
        let policy = PluginTrustPolicy(mode: .require, trustedKeyFolders: [keys])
        #expect(policy.problems.isEmpty, "\(policy.problems)")
        let admission = try policy.admit(file: plugin, metadata: try PluginMetadata.read(fromFile: plugin))
        #expect(admission.warnings.isEmpty)
        #expect(admission.signature?.status == .trusted)
        #expect(admission.signature?.trustedBy?.source == keys + "/vendor.pub")
        #expect(admission.signature?.signer?.comment == "Vendor")

        // Keys a host compiles in work the same.
        let builtIn = PluginTrustPolicy(mode: .require, trustedKeys: [TrustedKey(key: key.signing.publicKey, source: "compiled in")])
        #expect(try Self.refusal(builtIn, plugin) == nil)
        // And the file is still a plugin that loads.
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(lab.root))
        #expect(result.rejections.isEmpty, "\(result.rejections)")
    }

    // MARK: - Refusals under require, warnings under warn

    @Test func aFileChangedAfterSigningIsRefused() async throws {
        let lab = try Lab()
        let key = try lab.key("vendor")
        let trusted = [TrustedKey(key: key.signing.publicKey, source: "test")]
        let plugin = try lab.copy("DemoMessages")
        try lab.sign(plugin, with: key.signing)
        #expect(try Self.refusal(PluginTrustPolicy(mode: .require, trustedKeys: trusted), plugin) == nil)

        // One byte more at the end: the metadata is the same, the SHA-256 is not.
        let handle = try #require(FileHandle(forWritingAtPath: plugin))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        let refused = try #require(try Self.refusal(PluginTrustPolicy(mode: .require, trustedKeys: trusted), plugin))
        #expect(refused.code == .modifiedAfterSigning)
        #expect(refused.file == plugin)
        #expect(refused.message.contains("the file changed after it was signed by \(key.signing.publicKey.fingerprint): its SHA-256 is now"))
        #expect(!refused.message.contains("version"))

        let warned = try PluginTrustPolicy(mode: .warn, trustedKeys: trusted).admit(file: plugin, metadata: try PluginMetadata.read(fromFile: plugin))
        #expect(warned.warnings.map(\.code) == [.modifiedAfterSigning])

        let verified = try await Fixtures.missive(["verify", plugin, "--key", key.publicPath])
        #expect(verified.status == 1)
        #expect(verified.stdout.contains("\(plugin): modified-after-signing: the file changed after it was signed"))

        // Another version of the plugin put in place of the signed one: the statement says what changed.
        let rating = try lab.copy("CRating")
        try lab.sign(rating, with: key.signing)
        let signature = try Data(contentsOf: URL(fileURLWithPath: rating + ".sig"))
        try FileManager.default.removeItem(atPath: rating)
        try FileManager.default.removeItem(atPath: rating + ".sig")
        let older = try lab.copy("RatingOlder", as: "libCRating.so")
        try signature.write(to: URL(fileURLWithPath: older + ".sig"))
        let replaced = try #require(try Self.refusal(PluginTrustPolicy(mode: .require, trustedKeys: trusted), older))
        #expect(replaced.code == .modifiedAfterSigning)
        #expect(replaced.message.contains("its version is now '0.9.0', signed '1.0.0'"), "\(replaced.message)")
    }

    @Test func aKeyThatIsNotTrustedIsRefusedUnderRequire() async throws {
        let lab = try Lab()
        let signer = try lab.key("stranger", comment: "Stranger")
        let vendor = try lab.key("vendor", comment: "Vendor")
        let plugin = try lab.copy("CRating")
        try lab.sign(plugin, with: signer.signing)
        let keys = try lab.folder("keys")
        try FileManager.default.copyItem(atPath: vendor.publicPath, toPath: keys + "/vendor.pub")

        let policy = PluginTrustPolicy(mode: .require, trustedKeyFolders: [keys])
        #expect(policy.trustedKeys.map(\.key.fingerprint) == [vendor.signing.publicKey.fingerprint])
        let refused = try #require(try Self.refusal(policy, plugin))
        #expect(refused.code == .untrustedKey)
        #expect(refused.message.contains("signed by \(signer.signing.publicKey.fingerprint), which is not a trusted key"))
        #expect(refused.message.contains("(trusted keys are the .pub files in \(keys))"))
        // Under warn it loads, with the same reason.
        var warn = policy
        warn.mode = .warn
        let admission = try warn.admit(file: plugin, metadata: try PluginMetadata.read(fromFile: plugin))
        #expect(admission.warnings.map(\.code) == [.untrustedKey])
        #expect(admission.signature?.signer?.fingerprint == signer.signing.publicKey.fingerprint)

        let verified = try await Fixtures.missive(["verify", plugin, "--key", vendor.publicPath])
        #expect(verified.status == 1)
        #expect(verified.stdout.contains("untrusted-key: signed by \(signer.signing.publicKey.fingerprint)"))
        // Trusting the signer's key as well admits it.
        try FileManager.default.copyItem(atPath: signer.publicPath, toPath: keys + "/stranger.pub")
        #expect(try Self.refusal(PluginTrustPolicy(mode: .require, trustedKeyFolders: [keys]), plugin) == nil)
    }

    @Test func anUnsignedPluginIsRefusedUnderRequireWarnedUnderWarnAndLoadsUnderOff() async throws {
        let lab = try Lab()
        let key = try lab.key("vendor")
        let trusted = [TrustedKey(key: key.signing.publicKey, source: "test")]
        let plugin = try lab.copy("DemoMedia")
        let metadata = try PluginMetadata.read(fromFile: plugin)

        let refused = try #require(try Self.refusal(PluginTrustPolicy(mode: .require, trustedKeys: trusted), plugin))
        #expect(refused.code == .unsignedPlugin)
        #expect(refused.file == plugin)
        #expect(refused.message == "not signed: there is no signature file \(plugin).sig")

        let warned = try PluginTrustPolicy(mode: .warn, trustedKeys: trusted).admit(file: plugin, metadata: metadata)
        #expect(warned.warnings.map(\.code) == [.unsignedPlugin])
        #expect(warned.signature?.status == .unsigned)

        let off = try PluginTrustPolicy(mode: .off, trustedKeys: trusted).admit(file: plugin, metadata: metadata)
        #expect(off.warnings.isEmpty)
        #expect(off.signature == nil)
        // The library's default is off.
        #expect(PluginTrustPolicy().mode == .off)
        #expect(PluginTrustPolicy.standard(environment: [:]).mode == .off)

        let verified = try await Fixtures.missive(["verify", plugin, "--key", key.publicPath, "--format", "json"])
        #expect(verified.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout.utf8)) as? [String: Any])
        let file = try #require((object["files"] as? [[String: Any]])?.first)
        #expect(file["status"] as? String == "unsigned-plugin")
        #expect(file["signer"] is NSNull)
    }

    @Test func discoveryRefusesWhatThePolicyRefusesBeforeRunningItAndLoadsTheRest() throws {
        let lab = try Lab()
        let key = try lab.key("vendor")
        let plugins = try lab.folder("plugins")
        let signed = try lab.copy("CRating", into: plugins)
        try lab.sign(signed, with: key.signing)
        // Unsigned, and its entry would crash the process: refused before any of its code runs, even in a scanner.
        let unsigned = try lab.copy("BrokenCrashInEntry", into: plugins)
        let policy = PluginTrustPolicy(mode: .require, trustedKeys: [TrustedKey(key: key.signing.publicKey, source: "test")])
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(plugins), protection: PluginProtection(trust: policy))
        #expect(result.rejections.map(\.code) == [.unsignedPlugin], "\(result.rejections)")
        #expect(result.rejections.first?.file == unsigned)
        #expect(result.registry.type(objectName: "demo:rating") != nil)
        #expect(result.registry.type(objectName: "fixture:entry-crash") == nil)

        // A file others can write to is refused in every mode, signed or not.
        try FileManager.default.removeItem(atPath: unsigned)
        chmod(signed, 0o757)
        let insecure = MessageRegistry.discover(
            searchPath: Fixtures.searchPath(plugins), protection: PluginProtection(trust: PluginTrustPolicy(mode: .off, trustedKeys: [])))
        #expect(insecure.rejections.first { $0.file == signed }?.code == .insecureFile)
        #expect(insecure.registry.type(objectName: "demo:rating") == nil)
    }

    @Test func theCommandsThatLoadPluginsApplyThePolicy() async throws {
        let lab = try Lab()
        let key = try lab.key("vendor")
        let keys = try lab.folder("keys")
        try FileManager.default.copyItem(atPath: key.publicPath, toPath: keys + "/vendor.pub")
        let plugins = try lab.folder("plugins")
        let signed = try lab.copy("DemoMessages", into: plugins)
        try lab.sign(signed, with: key.signing)
        let unsigned = try lab.copy("CRating", into: plugins)
        let line = #"{"objectName":"demo:rating","id":"m1","conversationID":"c","senderID":"s","sentAt":1,"content":{"score":4}}"# + "\n"

        let required = try await Fixtures.missive(
            ["decode", "-", "--plugin-path", plugins, "--format", "json"], input: line, environment: Self.environment(keys: keys, mode: "require"))
        #expect(required.status == 0, "\(required.stderr)")
        #expect(required.stderr.contains("refused plugin: not signed: there is no signature file \(unsigned).sig"), "\(required.stderr)")
        #expect(required.stdout.contains(#""known":false"#))

        // With a trusted key installed and MISSIVE_TRUST unset, the CLI warns and loads.
        let warned = try await Fixtures.missive(
            ["decode", "-", "--plugin-path", plugins, "--format", "json"], input: line, environment: Self.environment(keys: keys, mode: nil))
        #expect(warned.stderr.contains("plugin not trusted: not signed"), "\(warned.stderr)")
        #expect(warned.stdout.contains(#""known":true"#))

        let list = try await Fixtures.missive(["list", "--plugin-path", plugins, "--format", "json"], environment: Self.environment(keys: keys, mode: "require"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let rejected = try #require(object["rejected"] as? [[String: Any]])
        #expect(rejected.contains { $0["file"] as? String == unsigned && $0["code"] as? String == "unsigned-plugin" })
        #expect(!rejected.contains { $0["file"] as? String == signed })

        let typo = try await Fixtures.missive(["list", "--plugin-path", plugins], environment: Self.environment(keys: keys, mode: "requier"))
        #expect(typo.status == 2)
    }

    @Test func aBadOrMalformedSignatureIsRefused() async throws {
        let lab = try Lab()
        let key = try lab.key("vendor")
        let policy = PluginTrustPolicy(mode: .require, trustedKeys: [TrustedKey(key: key.signing.publicKey, source: "test")])
        let plugin = try lab.copy("CRating")
        try lab.sign(plugin, with: key.signing)
        let good = try String(contentsOfFile: plugin + ".sig", encoding: .utf8)
        #expect(try Self.refusal(policy, plugin) == nil)

        // Another signature in its place: still base64 of 64 bytes, but not the key's signature of the statement.
        var signature = try PluginSignature.read(fromFile: plugin + ".sig")
        signature.signature[10] ^= 0x01
        try signature.write(to: plugin + ".sig")
        let flipped = try #require(try Self.refusal(policy, plugin))
        #expect(flipped.code == .badSignature)
        #expect(flipped.message.contains("does not verify with the key it names, \(key.signing.publicKey.fingerprint)"))

        // The signed statement edited to claim another version: the signature no longer covers it.
        try good.replacingOccurrences(of: "version: 1.0.0", with: "version: 9.9.9").write(toFile: plugin + ".sig", atomically: true, encoding: .utf8)
        #expect(try Self.refusal(policy, plugin)?.code == .badSignature)

        // Not a signature file at all, or one of a later format.
        try "hello\n".write(toFile: plugin + ".sig", atomically: true, encoding: .utf8)
        let garbage = try #require(try Self.refusal(policy, plugin))
        #expect(garbage.code == .malformedSignature)
        #expect(garbage.message.contains("its first line is not 'missive-signature 1' but 'hello'"))
        try good.replacingOccurrences(of: "missive-signature 1", with: "missive-signature 2").write(toFile: plugin + ".sig", atomically: true, encoding: .utf8)
        #expect(try Self.refusal(policy, plugin)?.message.contains("format version 2; this Missive reads version 1") == true)

        // The good one back: admitted again.
        try good.write(toFile: plugin + ".sig", atomically: true, encoding: .utf8)
        #expect(try Self.refusal(policy, plugin) == nil)
        let verified = try await Fixtures.missive(["verify", plugin, "--key", key.publicPath])
        #expect(verified.status == 0, "\(verified.stdout)")
    }

    @Test func aPrivateKeyOthersCanReadSignsNothing() async throws {
        let lab = try Lab()
        let key = try lab.key("vendor")
        chmod(key.privatePath, 0o644)
        let plugin = try lab.copy("CRating")
        let run = try await Fixtures.missive(["sign", plugin, "--key", key.privatePath])
        #expect(run.status == 2)
        #expect(run.stderr.contains("the private key may be read by its group or others (mode 0644)"))
        #expect(!FileManager.default.fileExists(atPath: plugin + ".sig"))
        chmod(key.privatePath, 0o600)
        #expect(try await Fixtures.missive(["sign", plugin, "--key", key.privatePath]).status == 0)
        // A public key where the private one belongs is refused by what it is.
        let wrong = try await Fixtures.missive(["sign", plugin, "--key", key.publicPath])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("not a Missive private key file: its first line is not 'missive-private-key 1' but 'missive-public-key 1'"))
    }

    @Test func keyAndStatementFormatsAreCanonicalText() throws {
        let key = PluginSigningKey.generate(comment: "two\nlines")
        let publicKey = try PluginPublicKey(fileText: Array(key.publicKey.fileText.utf8))
        #expect(publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(publicKey.comment == "two lines")
        let restored = try PluginSigningKey(fileText: Array(key.fileText.utf8))
        #expect(restored.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        // CR LF line ends from another system read the same.
        let crlf = key.publicKey.fileText.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try PluginPublicKey(fileText: Array(crlf.utf8)).rawRepresentation == key.publicKey.rawRepresentation)
        #expect(throws: MissiveError.self) { try PluginPublicKey(fileText: Array("missive-public-key 1\nalgorithm: rsa\n".utf8)) }

        // Every value stays on its line; the same metadata gives the same bytes, whatever the order of types.
        let metadata = PluginMetadata(
            name: "Odd", version: "1.0", vendor: "A%B\nC", abiMajor: 1, abiMinor: 1,
            types: ["z:last", "a:first"].map { PluginMetadata.TypeEntry(objectName: $0, businessID: nil, persistenceValue: 3, isMedia: false) })
        let statement = PluginStatement(sha256: Array(repeating: 0xAB, count: 32), metadata: metadata)
        #expect(statement.text == """
            missive-plugin-statement 1
            sha256: \(String(repeating: "ab", count: 32))
            name: Odd
            version: 1.0
            vendor: A%25B%0AC
            abi: 1.1
            type: a:first
            type: z:last

            """)
        let signature = PluginSignature(key: key.publicKey, signature: try key.signature(of: statement.bytes), statement: statement.bytes)
        #expect(signature.isValid)
        #expect(signature.parsedStatement == statement)
        #expect(signature.parsedStatement?.vendor == "A%B\nC")
        #expect(try PluginSignature(fileText: signature.fileText) == signature)
    }

    // MARK: - File-system checks

    @Test(.enabled(if: Lab.sharedGroup != nil, "needs a group shared by several users (users) to give files to"))
    func aPluginOrFolderOthersCanWriteToIsRefusedAndTheSwitchTurnsTheCheckOff() throws {
        let lab = try Lab()
        let folder = try lab.folder("plugins")
        let plugin = try lab.copy("CRating", into: folder)
        let strict = PluginTrustPolicy()
        #expect(strict.checkFilePermissions)
        #expect(try Self.refusal(strict, plugin) == nil)

        chmod(plugin, 0o775)
        let group = try #require(try Self.refusal(strict, plugin))
        #expect(group.code == .insecureFile)
        #expect(group.file == plugin)
        #expect(group.message.contains("insecure plugin file: the file is writable by its group (mode 0775)"))
        #expect(group.message.contains("MISSIVE_INSECURE_PLUGIN_FILES=1"))
        chmod(plugin, 0o757)
        #expect(try Self.refusal(strict, plugin)?.message.contains("the file is writable by others (mode 0757)") == true)
        chmod(plugin, 0o755)

        chmod(folder, 0o775)
        #expect(try Self.refusal(strict, plugin)?.message.contains("its folder \(folder) is writable by its group (mode 0775)") == true)
        // The sticky bit keeps others from replacing the file, not from adding a plugin beside it.
        chmod(folder, 0o1777)
        let sticky = try #require(try Self.refusal(strict, plugin))
        #expect(sticky.message.contains("its folder \(folder) is writable by its group and others (mode 1777); the sticky bit does not help"))

        // The switch: the API flag, and the environment variable that sets it.
        var relaxed = strict
        relaxed.checkFilePermissions = false
        #expect(try Self.refusal(relaxed, plugin) == nil)
        #expect(!PluginTrustPolicy.standard(environment: [PluginFileSecurity.disablingVariable: "1"]).checkFilePermissions)
        #expect(PluginTrustPolicy.standard(environment: [PluginFileSecurity.disablingVariable: "0"]).checkFilePermissions)
        chmod(folder, 0o755)
        #expect(try Self.refusal(strict, plugin) == nil)

        // A folder above that others can write to, without the sticky bit, is refused too; with it, it is not.
        chmod(lab.root, 0o777)
        #expect(try Self.refusal(strict, plugin)?.message.contains("the folder \(lab.root) above it is writable by its group and others (mode 0777) without the sticky bit") == true)
        chmod(lab.root, 0o1777)
        #expect(try Self.refusal(strict, plugin) == nil)
        chmod(lab.root, 0o755)
    }

    @Test func aPluginDirectlyInTmpIsRefused() throws {
        // The system's temporary folder is world-writable and sticky.
        let plugin = "/tmp/libMissiveTrustTest-\(UUID().uuidString).so"
        try FileManager.default.copyItem(atPath: Fixtures.library("CRating"), toPath: plugin)
        defer { try? FileManager.default.removeItem(atPath: plugin) }
        chmod(plugin, 0o755)
        let refused = try #require(try Self.refusal(PluginTrustPolicy(), plugin))
        #expect(refused.code == .insecureFile)
        // Others may write to it; its group (root's own, usually) may not count as others.
        #expect(refused.message.contains("its folder /tmp is writable by "), "\(refused.message)")
        #expect(refused.message.contains("others (mode 1777); the sticky bit does not help"), "\(refused.message)")
    }

    @Test func aUsersPrivateGroupMayWrite() throws {
        let lab = try Lab()
        let folder = try lab.folder("plugins")
        let plugin = try lab.copy("CRating", into: folder)
        // The user's own group, when it is private (Debian's user-private groups, and root's group).
        let user = try #require(getpwuid(geteuid()))
        let own = user.pointee.pw_gid
        let ownGroup = try #require(getgrgid(own))
        let isPrivate = String(cString: ownGroup.pointee.gr_name) == String(cString: user.pointee.pw_name) && ownGroup.pointee.gr_mem.pointee == nil
        try #require(isPrivate, "this user's primary group is not a private group")
        chown(plugin, uid_t.max, own)
        chown(folder, uid_t.max, own)
        chmod(plugin, 0o775)
        chmod(folder, 0o775)
        #expect(try Self.refusal(PluginTrustPolicy(), plugin) == nil)
        // Others still may not.
        chmod(plugin, 0o777)
        #expect(try Self.refusal(PluginTrustPolicy(), plugin)?.message.contains("the file is writable by others (mode 0777)") == true)
    }

    @Test(.enabled(if: Lab.sharedGroup != nil, "needs a group shared by several users (users) to give files to"))
    func symbolicLinksAreCheckedAllTheWayToTheFile() throws {
        let lab = try Lab()
        let plugins = try lab.folder("plugins")
        let elsewhere = try lab.folder("elsewhere")
        let target = try lab.copy("CRating", into: elsewhere)
        let link = plugins + "/libCRating.so"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "../elsewhere/libCRating.so")
        #expect(try Self.refusal(PluginTrustPolicy(), link) == nil)

        chmod(target, 0o666)
        let file = try #require(try Self.refusal(PluginTrustPolicy(), link))
        #expect(file.message.contains("the file \(elsewhere)/libCRating.so that it links to is writable by its group and others (mode 0666)"), "\(file.message)")
        chmod(target, 0o755)
        chmod(elsewhere, 0o777)
        let folder = try #require(try Self.refusal(PluginTrustPolicy(), link))
        #expect(folder.message.contains("its folder \(elsewhere) is writable by its group and others (mode 0777) (reached through the symbolic link \(link))"), "\(folder.message)")
        chmod(elsewhere, 0o755)

        // The signature is looked for beside the link, then beside the file it resolves to.
        let key = try lab.key("vendor")
        try lab.sign(target, with: key.signing)
        let policy = PluginTrustPolicy(mode: .require, trustedKeys: [TrustedKey(key: key.signing.publicKey, source: "test")])
        #expect(try Self.refusal(policy, link) == nil)
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give a file to another user"))
    func aPluginOfAnotherUserIsRefused() throws {
        let lab = try Lab()
        let plugin = try lab.copy("CRating")
        chown(plugin, 4242, 4242)
        let refused = try #require(try Self.refusal(PluginTrustPolicy(), plugin))
        #expect(refused.message.contains("the file belongs to user 4242, not to this process's user (user root (0)) or root"), "\(refused.message)")
        chown(plugin, 0, 0)
        chown(lab.root, 4242, 4242)
        #expect(try Self.refusal(PluginTrustPolicy(), plugin)?.message.contains("its folder \(lab.root) belongs to user 4242") == true)
        chown(lab.root, 0, 0)
        #expect(try Self.refusal(PluginTrustPolicy(), plugin) == nil)
    }

    @Test func trustedKeysOthersCanReplaceAreSkippedAndReported() throws {
        let lab = try Lab()
        let keys = try lab.folder("keys")
        let key = try lab.key("vendor")
        try FileManager.default.copyItem(atPath: key.publicPath, toPath: keys + "/vendor.pub")
        try "not a key\n".write(toFile: keys + "/broken.pub", atomically: true, encoding: .utf8)
        try "ignored: no .pub\n".write(toFile: keys + "/README", atomically: true, encoding: .utf8)
        let policy = PluginTrustPolicy(mode: .require, trustedKeyFolders: [keys, lab.root + "/missing"])
        #expect(policy.trustedKeys.map(\.source) == [keys + "/vendor.pub"])
        #expect(policy.problems.map(\.code) == [.invalidKey])
        #expect(policy.problems.first?.file == keys + "/broken.pub")

        chmod(keys + "/vendor.pub", 0o666)
        let insecure = PluginTrustPolicy(mode: .require, trustedKeyFolders: [keys])
        #expect(insecure.trustedKeys.isEmpty)
        #expect(insecure.problems.contains { $0.code == .insecureFile && $0.file == keys + "/vendor.pub" })
        #expect(PluginTrustPolicy(mode: .require, trustedKeyFolders: [keys], checkFilePermissions: false).trustedKeys.count == 1)
    }

    @Test func theEnvironmentNamesTheModeAndTheKeyFolders() {
        #expect(PluginTrustPolicy.trustedKeyFolders(["HOME": "/home/a"]) == ["/home/a/.config/missive/trusted-keys", "/etc/missive/trusted-keys"])
        #expect(PluginTrustPolicy.trustedKeyFolders(["HOME": "/home/a", "XDG_CONFIG_HOME": "/cfg"]) == ["/cfg/missive/trusted-keys", "/etc/missive/trusted-keys"])
        #expect(PluginTrustPolicy.trustedKeyFolders(["HOME": "/home/a", "MISSIVE_TRUSTED_KEYS_PATH": "/k1:/k2"]) == ["/k1", "/k2"])
        #expect(PluginTrustPolicy.standard(environment: ["MISSIVE_TRUST": "warn", "MISSIVE_TRUSTED_KEYS_PATH": ""]).mode == .warn)
        // A typo never weakens the policy.
        let typo = PluginTrustPolicy.standard(environment: ["MISSIVE_TRUST": "requre", "MISSIVE_TRUSTED_KEYS_PATH": ""])
        #expect(typo.mode == .require)
        #expect(typo.problems.first?.message.contains("MISSIVE_TRUST=requre is not off, warn or require; using require") == true)
    }

    // MARK: - Install under the host's policy

    @Test func installVerifiesUnderTheHostsPolicy() async throws {
        let lab = try Lab()
        let home = try InstallTests.Home()
        let keys = try lab.folder("keys")
        let key = try lab.key("vendor")
        let unsigned = try lab.copy("CRating")
        func install(_ mode: String?, _ file: String) async throws -> Fixtures.Run {
            try await Fixtures.missive(
                ["install", file, "--strictness", "1"], environment: home.environment.merging(Self.environment(keys: keys, mode: mode)) { _, new in new })
        }

        // Under require an unsigned plugin is refused before anything of it runs, and nothing is installed.
        let refused = try await install("require", unsigned)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(unsigned): refused: [unsigned-plugin] not signed: there is no signature file \(unsigned).sig"), "\(refused.stderr)")
        #expect(home.files(home.userFolder).isEmpty)
        #expect(try await Fixtures.missive(["install", unsigned, "--strictness", "1"], environment: home.environment.merging(["MISSIVE_TRUST": "sometimes"]) { _, new in new }).status == 2)

        // Signed by a key that is not trusted yet: refused with that reason.
        try lab.sign(unsigned, with: key.signing)
        let untrusted = try await install("require", unsigned)
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.contains("refused: [untrusted-key]"))

        // Trusted: installed with its signature, which stays good under the installed name.
        try FileManager.default.copyItem(atPath: key.publicPath, toPath: keys + "/vendor.pub")
        let installed = try await install("require", unsigned)
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("(with its signature)"))
        #expect(home.files(home.userFolder) == ["libCRating.so", "libCRating.so.sig"])
        let policy = PluginTrustPolicy(mode: .require, trustedKeyFolders: [keys])
        #expect(try Self.refusal(policy, home.userFolder + "/libCRating.so") == nil)

        // Under warn (the default once a key is trusted) an unsigned plugin installs with a warning, and the
        // earlier copy's signature goes.
        let bare = try lab.copy("CRating", into: try lab.folder("bare"))
        let warned = try await install(nil, bare)
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.contains("warning: plugin not trusted: not signed: there is no signature file \(bare).sig"), "\(warned.stderr)")
        #expect(home.files(home.userFolder) == ["libCRating.so"])

        // Uninstalling removes a signature with its plugin.
        await #expect(try install("require", unsigned).status == 0)
        await #expect(try home.missive("uninstall", "CRating").status == 0)
        #expect(home.files(home.userFolder).isEmpty)
    }
}
