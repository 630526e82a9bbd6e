import Crypto
import Foundation

/// How a host protects itself from the plugins it discovers, beyond the loader's own checks.
///
/// - ``scanner``: new or changed plugin files are first tried in a child process; a file that crashes or
///   hangs there is blacklisted and never loaded.
/// - ``quarantine``: a plugin that crashes the host is recorded as the process dies, and quarantined at the
///   next start.
///
/// A blacklisted or quarantined plugin is reported among the refusals (code `quarantined`) with the reason,
/// and its types stay registered from its metadata, so that their messages decode to ``UnknownMessage``s
/// that keep every byte and say why. ``none`` (the library's default) turns both off; ``standard(environment:)``
/// is what the `missive` command uses.
public struct PluginProtection: Sendable {
    /// The scanner for new and changed files, or `nil` to load them without trying them first.
    public var scanner: PluginScanner?
    /// The crash quarantine, or `nil` to record nothing.
    public var quarantine: PluginQuarantine?

    /// Protection with these parts.
    public init(scanner: PluginScanner? = nil, quarantine: PluginQuarantine? = nil) {
        self.scanner = scanner
        self.quarantine = quarantine
    }

    /// No scanner and no quarantine: plugins load as the loader decides.
    public static let none = PluginProtection()

    /// The standard scanner and quarantine for an environment (see ``PluginScanner/standard(environment:)``
    /// and ``PluginQuarantine/standard(environment:)``).
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginProtection {
        PluginProtection(scanner: .standard(environment: environment), quarantine: .standard(environment: environment))
    }

    /// The SHA-256 of a file's content in hexadecimal, or `nil` when it cannot be read.
    static func contentHash(of path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                hasher.update(data: chunk)
            }
        } catch {
            return nil
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
