import Foundation

/// What a host demands of a plugin file before loading it: the file-system checks, and signatures by trusted
/// keys (docs/TRUST.md).
///
/// One call, ``admit(file:metadata:)``, decides for one file about to be loaded: it refuses the file by
/// throwing, or admits it with warnings for the host to log.
///
/// ```
/// let policy = PluginTrustPolicy.standard()        // MISSIVE_TRUST, the trusted-key folders, the switch
/// for problem in policy.problems { logger.warning("\(problem)") }
/// let admission = try policy.admit(file: path, metadata: metadata)
/// for warning in admission.warnings { logger.warning("\(warning.message)") }
/// ```
///
/// The trusted keys are read once, when the policy is made; make a new policy to read them again.
public struct PluginTrustPolicy: Sendable {
    /// How signatures count.
    public enum Mode: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Signatures are not looked at. The library's default.
        case off
        /// A plugin that is not signed by a trusted key, unchanged since, loads with a warning saying why.
        case warn
        /// A plugin that is not signed by a trusted key, unchanged since, is refused with the reason.
        case require

        /// `off`, `warn` or `require`.
        public var description: String { rawValue }
    }

    /// The environment variable that sets the mode: `MISSIVE_TRUST=off|warn|require`.
    public static let modeVariable = "MISSIVE_TRUST"
    /// The environment variable that replaces the trusted-key folders with its colon-separated folders.
    public static let keyFoldersVariable = "MISSIVE_TRUSTED_KEYS_PATH"
    /// The system's trusted-key folder.
    public static let systemKeyFolder = "/etc/missive/trusted-keys"
    /// What a file in a trusted-key folder must end with to be read as a key.
    public static let keyFileSuffix = ".pub"

    /// How signatures count.
    public var mode: Mode
    /// Whether ``admit(file:metadata:)`` runs the file-system checks (``PluginFileSecurity``) on the plugin
    /// file. On by default; `MISSIVE_INSECURE_PLUGIN_FILES=1` turns it off in ``standard(environment:defaultMode:)``.
    public var checkFilePermissions: Bool
    /// The folders the trusted keys were read from, in order; empty when the host gave the keys.
    public let trustedKeyFolders: [String]
    /// The trusted keys.
    public let trustedKeys: [TrustedKey]
    /// What went wrong while making the policy, for the host to log once: key files that cannot be read or
    /// are not keys, key files or folders others could change (skipped), a `MISSIVE_TRUST` value that is not
    /// a mode.
    public let problems: [MissiveError]

    /// A policy whose trusted keys are the `.pub` files in `trustedKeyFolders`, read now.
    ///
    /// A folder that does not exist holds no keys. When `checkFilePermissions` is true, a key file that fails
    /// the file-system checks (as a plugin file would) is skipped and reported in ``problems``: a key that
    /// others can replace trusts nothing.
    public init(mode: Mode = .off, trustedKeyFolders: [String] = [], checkFilePermissions: Bool = true) {
        let (keys, problems) = Self.readKeys(in: trustedKeyFolders, checkFilePermissions: checkFilePermissions)
        self.init(mode: mode, trustedKeys: keys, folders: trustedKeyFolders, checkFilePermissions: checkFilePermissions, problems: problems)
    }

    /// A policy with the keys the host gives, for example its vendor's key compiled into the host.
    public init(mode: Mode, trustedKeys: [TrustedKey], checkFilePermissions: Bool = true) {
        self.init(mode: mode, trustedKeys: trustedKeys, folders: [], checkFilePermissions: checkFilePermissions, problems: [])
    }

    private init(mode: Mode, trustedKeys: [TrustedKey], folders: [String], checkFilePermissions: Bool, problems: [MissiveError]) {
        self.mode = mode
        self.trustedKeys = trustedKeys
        self.trustedKeyFolders = folders
        self.checkFilePermissions = checkFilePermissions
        self.problems = problems
    }

    /// The policy an environment asks for:
    /// - the mode from `MISSIVE_TRUST` (`off`, `warn` or `require`), else `defaultMode`; any other value
    ///   gives `require`, so that a typo never weakens a policy, and is reported in ``problems``;
    /// - the trusted keys from ``trustedKeyFolders(_:)``;
    /// - the file-system checks, unless `MISSIVE_INSECURE_PLUGIN_FILES` is `1`.
    ///
    /// A host that decides its mode itself sets ``mode`` afterwards.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment, defaultMode: Mode = .off) -> PluginTrustPolicy {
        let insecure = environment[PluginFileSecurity.disablingVariable] == "1"
        var mode = defaultMode
        var problems: [MissiveError] = []
        if let value = environment[modeVariable], !value.isEmpty {
            if let asked = Mode(rawValue: value) {
                mode = asked
            } else {
                mode = .require
                problems.append(MissiveError(.invalidArgument, "\(modeVariable)=\(value) is not off, warn or require; using require"))
            }
        }
        let folders = trustedKeyFolders(environment)
        let (keys, keyProblems) = readKeys(in: folders, checkFilePermissions: !insecure)
        return PluginTrustPolicy(mode: mode, trustedKeys: keys, folders: folders, checkFilePermissions: !insecure, problems: problems + keyProblems)
    }

    /// The keys of the `.pub` files in `folders`, in folder order and then in byte order of their names, and
    /// the key files skipped, with the reason.
    private static func readKeys(in folders: [String], checkFilePermissions: Bool) -> (keys: [TrustedKey], problems: [MissiveError]) {
        var keys: [TrustedKey] = []
        var problems: [MissiveError] = []
        for folder in folders {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.filter({ $0.hasSuffix(keyFileSuffix) }).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                let path = folder + "/" + name
                if checkFilePermissions, let problem = PluginFileSecurity.problem(with: path, user: TrustFiles.effectiveUser) {
                    problems.append(MissiveError(.insecureFile, "trusted key skipped: \(problem)", file: path))
                    continue
                }
                do {
                    keys.append(TrustedKey(key: try PluginPublicKey.read(fromFile: path), source: path))
                } catch {
                    problems.append(MissiveError(.invalidKey, "trusted key skipped: \(error.message)", file: path))
                }
            }
        }
        return (keys, problems)
    }

    /// The trusted-key folders of an environment: the folders of `MISSIVE_TRUSTED_KEYS_PATH` (colon-separated)
    /// when it is set; else the per-user folder, `$XDG_CONFIG_HOME/missive/trusted-keys` (by default
    /// `~/.config/missive/trusted-keys`), then the system folder, `/etc/missive/trusted-keys`.
    public static func trustedKeyFolders(_ environment: [String: String]) -> [String] {
        if let path = environment[keyFoldersVariable] {
            return path.split(separator: ":").map(String.init)
        }
        var folders: [String] = []
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            folders.append(config + "/missive/trusted-keys")
        } else if let home = environment["HOME"], !home.isEmpty {
            folders.append(home + "/.config/missive/trusted-keys")
        }
        return folders + [systemKeyFolder]
    }

    /// Decides whether the plugin file at `path`, whose metadata is `metadata`, may be loaded: call it for
    /// each file after reading its metadata and before loading it.
    ///
    /// First the file-system checks (when ``checkFilePermissions`` is on), which refuse in every mode. Then,
    /// unless the mode is ``Mode/off``, the signature: the whole file is read and hashed, and checked against
    /// `FILE.sig` and the trusted keys. A plugin that is not signed by a trusted key, unchanged since, is
    /// refused under ``Mode/require`` and admitted with a warning under ``Mode/warn``.
    ///
    /// - Returns: the warnings to log, and what the signature check found.
    /// - Throws: ``MissiveError`` naming the file: `insecureFile`; under `require`, `unsignedPlugin`,
    ///   `malformedSignature`, `badSignature`, `modifiedAfterSigning` or `untrustedKey`; `ioFailure` when the
    ///   file cannot be read to hash it.
    public func admit(file path: String, metadata: PluginMetadata) throws(MissiveError) -> PluginAdmission {
        if checkFilePermissions { try PluginFileSecurity.check(path) }
        guard mode != .off else { return PluginAdmission(warnings: [], signature: nil) }
        let verification = try verify(file: path, metadata: metadata)
        guard var refusal = verification.refusal else { return PluginAdmission(warnings: [], signature: verification) }
        if verification.status == .untrustedKey {
            refusal.message += trustedKeyFolders.isEmpty
                ? " (the host trusts \(trustedKeys.count) key\(trustedKeys.count == 1 ? "" : "s"))"
                : " (trusted keys are the .pub files in \(trustedKeyFolders.joined(separator: ", ")))"
        }
        if mode == .require { throw refusal }
        return PluginAdmission(warnings: [refusal], signature: verification)
    }

    /// Checks the signature of the plugin file at `path` against this policy's trusted keys, whatever the
    /// mode: what `missive verify` shows.
    ///
    /// - Throws: ``MissiveError`` `ioFailure` when the plugin file cannot be read.
    public func verify(file path: String, metadata: PluginMetadata, signatureFile: String? = nil) throws(MissiveError) -> SignatureVerification {
        try SignatureVerification.verify(file: path, metadata: metadata, trustedKeys: trustedKeys, signatureFile: signatureFile)
    }
}

/// What ``PluginTrustPolicy/admit(file:metadata:)`` decided for a file it did not refuse.
public struct PluginAdmission: Sendable {
    /// What the host should log as warnings: under ``PluginTrustPolicy/Mode/warn``, why the file would have
    /// been refused under `require`. Each names the file and has the code it would have been refused with.
    public var warnings: [MissiveError]
    /// What the signature check found; `nil` when the mode is ``PluginTrustPolicy/Mode/off``.
    public var signature: SignatureVerification?

    /// An admission.
    public init(warnings: [MissiveError], signature: SignatureVerification?) {
        self.warnings = warnings
        self.signature = signature
    }
}
