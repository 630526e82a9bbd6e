import Foundation

/// How a host protects itself from the plugins it discovers, beyond the loader's own checks.
///
/// - ``trust``: the file-system checks and the signature policy (docs/TRUST.md), applied to each file
///   before any of its code runs, in the scanner or in the host; a file it refuses is refused with the reason.
/// - ``scanner``: new or changed plugin files are first tried in a child process; a file that crashes or
///   hangs there is blacklisted and never loaded.
/// - ``quarantine``: a plugin that crashes the host is recorded as the process dies, and quarantined at the
///   next start.
///
/// A blacklisted or quarantined plugin is reported among the refusals (code `quarantined`) with the reason,
/// and its types stay registered from its metadata, so that their messages decode to ``UnknownMessage``s
/// that keep every byte and say why. ``none`` (the library's default) turns all three off;
/// ``standard(environment:)`` turns them on as the environment says.
public struct PluginProtection: Sendable {
    /// The trust policy, or `nil` for no file-system or signature checks.
    public var trust: PluginTrustPolicy?
    /// The scanner for new and changed files, or `nil` to load them without trying them first.
    public var scanner: PluginScanner?
    /// The crash quarantine, or `nil` to record nothing.
    public var quarantine: PluginQuarantine?
    /// Which plugins run in a worker process of their own, and the workers' limits; ``PluginIsolation/none`` (every
    /// plugin in process) unless set. Neither ``init(trust:scanner:quarantine:)`` nor ``standard(environment:)`` sets it.
    public var isolation: PluginIsolation = .none
    /// Where isolated plugins remember the messages they failed on (a crash, a hang, a forbidden call), so that each
    /// costs its deadline once; `nil` (the default) gives the plugins of each discovery a memory of their own, for as
    /// long as the registry lives (``MessageRegistry/pluginFailureMemories``). Set one to share it between
    /// discoveries, or to fill it from a store before the first decode.
    public var failureMemory: PluginFailureMemory?

    /// Protection with these parts.
    public init(trust: PluginTrustPolicy? = nil, scanner: PluginScanner? = nil, quarantine: PluginQuarantine? = nil) {
        self.trust = trust
        self.scanner = scanner
        self.quarantine = quarantine
    }

    /// No trust policy, scanner or quarantine: plugins load as the loader decides.
    public static let none = PluginProtection()

    /// The standard trust policy, scanner and quarantine for an environment (see
    /// ``PluginTrustPolicy/standard(environment:defaultMode:)``, ``PluginScanner/standard(environment:)`` and
    /// ``PluginQuarantine/standard(environment:)``): the file-system checks on, signatures as `MISSIVE_TRUST`
    /// says (off by default).
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginProtection {
        PluginProtection(
            trust: .standard(environment: environment), scanner: .standard(environment: environment), quarantine: .standard(environment: environment))
    }

    /// The SHA-256 of a file's content in hexadecimal, or `nil` when it cannot be read.
    static func contentHash(of path: String) -> String? {
        try? TrustFiles.sha256(ofFile: path).get().hex
    }
}
