/// An error from Missive: what went wrong, and where.
///
/// ``code`` says what kind of failure it is and can grow new values without breaking callers. ``file``
/// names the plugin file, ``objectName`` the type, and ``action`` and ``parameter`` the action and its
/// parameter when they are known, so that a host can report which plugin to blame and go on with every
/// other one.
public struct MissiveError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an error is. New codes may be added at any time; don't switch exhaustively.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case ioFailure = "io-failure"
            case notAPlugin = "not-a-plugin"
            case wrongMachine = "wrong-machine"
            case missingMetadata = "missing-metadata"
            case invalidMetadata = "invalid-metadata"
            case unsupportedABI = "unsupported-abi"
            case incompatibleToolchain = "incompatible-toolchain"
            case loadFailed = "load-failed"
            case missingEntry = "missing-entry"
            case invalidDescriptor = "invalid-descriptor"
            case metadataMismatch = "metadata-mismatch"
            case invalidName = "invalid-name"
            case reservedName = "reserved-name"
            case duplicateName = "duplicate-name"
            case containerConflict = "container-conflict"
            case shadowed = "shadowed"
            case quarantined = "quarantined"
            case changedProcessState = "changed-process-state"
            case malformedEnvelope = "malformed-envelope"
            case malformedContent = "malformed-content"
            case pluginFailure = "plugin-failure"
            case invalidAction = "invalid-action"
            case noSuchAction = "no-such-action"
            case noSuchMessage = "no-such-message"
            case invalidArgument = "invalid-argument"
            case invalidResult = "invalid-result"
            case insecureFile = "insecure-file"
            case unsignedPlugin = "unsigned-plugin"
            case malformedSignature = "malformed-signature"
            case badSignature = "bad-signature"
            case modifiedAfterSigning = "modified-after-signing"
            case untrustedKey = "untrusted-key"
            case invalidKey = "invalid-key"
            case pluginCrashed = "plugin-crashed"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A file could not be read.
        public static let ioFailure = Code(.ioFailure)
        /// The file is not an ELF shared object.
        public static let notAPlugin = Code(.notAPlugin)
        /// The file is ELF, but for another machine or word size.
        public static let wrongMachine = Code(.wrongMachine)
        /// The file is an ELF shared object without a Missive metadata section: not a Missive plugin.
        public static let missingMetadata = Code(.missingMetadata)
        /// The metadata section exists but cannot be parsed or is incomplete.
        public static let invalidMetadata = Code(.invalidMetadata)
        /// The plugin was built for an ABI version this host does not support.
        public static let unsupportedABI = Code(.unsupportedABI)
        /// A Swift plugin was built by a Swift compiler whose major.minor version differs from the host's.
        public static let incompatibleToolchain = Code(.incompatibleToolchain)
        /// `dlopen` failed (for example, a missing symbol or library).
        public static let loadFailed = Code(.loadFailed)
        /// The entry symbol is missing, or the entry returned no descriptor.
        public static let missingEntry = Code(.missingEntry)
        /// The runtime descriptor is malformed: bad size, missing field or function.
        public static let invalidDescriptor = Code(.invalidDescriptor)
        /// The metadata read from the file disagrees with the runtime descriptor.
        public static let metadataMismatch = Code(.metadataMismatch)
        /// An objectName or business identifier breaks the name grammar.
        public static let invalidName = Code(.invalidName)
        /// A plugin used a name reserved for Missive.
        public static let reservedName = Code(.reservedName)
        /// The name is already registered.
        public static let duplicateName = Code(.duplicateName)
        /// A container is declared with another key or key kind than the one already registered under its
        /// objectName; the types under the refused declaration are refused with it.
        public static let containerConflict = Code(.containerConflict)
        /// A file with the same name earlier in the search path takes precedence.
        public static let shadowed = Code(.shadowed)
        /// The plugin is not loaded because it crashed: a host process (see ``PluginQuarantine``) or the plugin
        /// scanner's child (see ``PluginScanner``). Its types' messages decode as unknown, with the reason.
        public static let quarantined = Code(.quarantined)
        /// The plugin changed the process state the host depends on (a standard stream, the working directory,
        /// a fatal-signal handler, the locale or the umask) while loading or in the first call of a kind; the
        /// host put it back. Refused at load, or, after a call, its types' later decodes are refused. The
        /// message names what it changed. See "What a plugin does to the process" in `docs/PROTECTION.md`.
        public static let changedProcessState = Code(.changedProcessState)
        /// An envelope is not valid JSON or lacks a required field.
        public static let malformedEnvelope = Code(.malformedEnvelope)
        /// A type's decoder refused the content.
        public static let malformedContent = Code(.malformedContent)
        /// A plugin function reported a failure.
        public static let pluginFailure = Code(.pluginFailure)
        /// An action's declaration is refused: its signature breaks the grammar, its function cannot be found,
        /// its fields break the rules, or its extension and metadata disagree. The plugin's other actions and
        /// its types still load.
        public static let invalidAction = Code(.invalidAction)
        /// No such action is registered: for the message's type, or among the composer actions.
        public static let noSuchAction = Code(.noSuchAction)
        /// No message has the id given, where a message was looked up by its id.
        public static let noSuchMessage = Code(.noSuchMessage)
        /// An argument does not fit the action's signature (count, JSON kind, range, UTF-8, a NUL in a
        /// string), so the plugin was not called; or the plugin refused the arguments (`MISSIVE_INVALID_CONTENT`).
        public static let invalidArgument = Code(.invalidArgument)
        /// An action returned content its type refuses, or a URL that is not http or https.
        public static let invalidResult = Code(.invalidResult)
        /// The file-system checks refused a plugin file: the file, the folder holding it or a folder above is
        /// writable by its group or by others, or belongs to another user who is not root (docs/TRUST.md).
        public static let insecureFile = Code(.insecureFile)
        /// The trust policy wants a signature, and the plugin file has none beside it (`FILE.sig`).
        public static let unsignedPlugin = Code(.unsignedPlugin)
        /// The signature file cannot be read, or is not in the signature format (or in a version of it this
        /// Missive does not read).
        public static let malformedSignature = Code(.malformedSignature)
        /// The signature does not verify with the key it names: the signature file was altered or damaged.
        public static let badSignature = Code(.badSignature)
        /// The signature is good, but the plugin file (its SHA-256) or its metadata is not what was signed.
        public static let modifiedAfterSigning = Code(.modifiedAfterSigning)
        /// The signature is good and the file unchanged, but the key that signed it is not a trusted key.
        public static let untrustedKey = Code(.untrustedKey)
        /// A key file cannot be read, is not in the key format, or must not be used as it is (a private key
        /// that others can read).
        public static let invalidKey = Code(.invalidKey)
        /// An isolated plugin's worker crashed, hung past its deadline or broke its protocol on this message; the
        /// host went on with a new worker (docs/PROTECTION.md).
        public static let pluginCrashed = Code(.pluginCrashed)

        /// The code spelled `name` (its ``description``), or `nil` for a spelling no code has.
        package init?(wireName name: String) {
            guard let base = Base(rawValue: name) else { return nil }
            self.init(base)
        }

        /// The stable, kebab-case spelling used in JSON output, for example `duplicate-name`.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable reason.
    public var message: String
    /// The plugin file involved, if any.
    public var file: String?
    /// The objectName involved, if any.
    public var objectName: String?
    /// The id of the action involved, if any.
    public var action: String?
    /// The name of the action's parameter involved, if any.
    public var parameter: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, file: String? = nil, objectName: String? = nil, action: String? = nil, parameter: String? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.objectName = objectName
        self.action = action
        self.parameter = parameter
    }

    /// `file: objectName: message`, leaving out what is unknown. Messages about an action name the action
    /// and the parameter themselves.
    public var description: String {
        var parts: [String] = []
        if let file { parts.append(file) }
        if let objectName { parts.append(objectName) }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}
