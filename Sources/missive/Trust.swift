import ArgumentParser
import Foundation
import MissiveCommandLine
import Logging
import Missive

extension MissiveCommand {
    /// The trust policy of every `missive` command that loads or installs plugins (docs/TRUST.md, "The
    /// `missive` command").
    ///
    /// The mode is `MISSIVE_TRUST` when it is set. Otherwise it is `warn` when at least one trusted key is
    /// installed and `off` when none is: warnings about unsigned plugins mean something only once the user
    /// has chosen keys to trust, and the plugins built beside the CLI are not signed. Trusted keys, the
    /// file-system checks and `MISSIVE_INSECURE_PLUGIN_FILES` are the library's
    /// (``PluginTrustPolicy/standard(environment:defaultMode:)``). The policy's problems (key files skipped)
    /// are logged as warnings.
    ///
    /// A `MISSIVE_TRUST` value other than `off`, `warn` and `require` is a usage error, exit code 2.
    static func trustPolicy(logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PluginTrustPolicy {
        let asked = environment[PluginTrustPolicy.modeVariable].flatMap { $0.isEmpty ? nil : $0 }
        if let asked, PluginTrustPolicy.Mode(rawValue: asked) == nil {
            Console.error("\(PluginTrustPolicy.modeVariable)=\(asked) is not off, warn or require")
            throw ExitCode(2)
        }
        var policy = PluginTrustPolicy.standard(environment: environment)
        if asked == nil { policy.mode = policy.trustedKeys.isEmpty ? .off : .warn }
        for problem in policy.problems {
            logger.warning("\(problem.message)", metadata: ["missive.file": "\(problem.file ?? "-")", "missive.code": "\(problem.code)"])
        }
        return policy
    }
}
