import ArgumentParser
import Foundation
import Logging
import Missive
import MissiveCommandLine

@main
struct MissiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "missive",
        abstract: "Load Missive message-type plugins, inspect them, decode envelopes through them, render conversations, perform actions, keep messages in a store, and sign and verify plugins.",
        version: MissiveVersion.string,
        subcommands: [
            List.self, Inspect.self, Decode.self, Render.self, Actions.self, Act.self, Compose.self, Store.self, Serve.self, Chat.self, Check.self, Install.self, Uninstall.self,
            Quarantine.self, Keygen.self, Sign.self, Verify.self, ScanPlugin.self, JSONExamples.self,
        ]
    )

    /// Runs the command; a usage error exits with code 2 (not ArgumentParser's 64), as `check` documents.
    static func main() async {
        // `missive plugin-worker FILE ...`: this executable as an isolated plugin's worker, when no
        // missive-plugin-worker is beside it. Before anything else runs: a worker starts bare.
        if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "plugin-worker" {
            Foundation.exit(PluginIsolation.runWorker(arguments: Array(CommandLine.arguments.dropFirst(2))))
        }
        // Closed to the user's other processes (tokens, store passwords, plugins' data in memory) before anything is
        // read; MISSIVE_DUMPABLE=1 keeps it open for a debugger.
        ProcessPrivacy.closeToOtherProcesses()
        // Before the first suspension (see CommandMain.run).
        Console.prepare()
        await CommandMain.run(Self.self, finally: LateRefusals.report)
    }
}

extension MissiveCommand {
    /// This executable, to run the conformance checks' and the plugin scanner's child processes.
    static var executablePath: String { CommandMain.executablePath }
}

extension PluginIsolation.Policy: ExpressibleByArgument {}
extension PluginIsolation.Confinement: ExpressibleByArgument {}

/// The output formats every subcommand offers.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text
    case json
}

/// Where to look for plugins.
struct PluginOptions: ParsableArguments {
    @Option(
        name: .customLong("plugin-path"),
        help: ArgumentHelp("A folder to search for plugins, before MISSIVE_PLUGIN_PATH and the default folders. Repeatable.", valueName: "dir"),
        transform: CommandLinePath.resolve)
    var directories: [String] = []

    @Option(
        help: ArgumentHelp(
            "Which plugins run in a worker process of their own: in-process, isolated, or untrusted-isolated (those not signed by a trusted key). "
                + "Default: MISSIVE_ISOLATION, else untrusted-isolated for serve, chat and store (messages from others) and in-process for the "
                + "other commands (docs/PROTECTION.md).",
            valueName: "policy"))
    var isolation: PluginIsolation.Policy?

    @Option(
        name: .customLong("worker-confinement"),
        help: ArgumentHelp(
            "The walls around isolated plugins' workers: namespaces (the default: new namespaces and a file system of only what the worker "
                + "needs; a kernel that refuses them refuses the plugins), namespaces-when-available (the operator accepts workers without "
                + "namespaces where the kernel refuses them; said at every start and by `missive list`), or none. Default: "
                + "MISSIVE_WORKER_CONFINEMENT, else namespaces (docs/PROTECTION.md).",
            valueName: "mode"))
    var confinement: PluginIsolation.Confinement?

    /// Discovers and registers every plugin on the search path, with the standard metadata cache
    /// (`MISSIVE_METADATA_CACHE=off` turns it off), logging refusals and decisions to `logger`.
    ///
    /// New and changed plugin files are scanned first in a child process of this executable
    /// (`MISSIVE_PLUGIN_SCANNER=off` turns it off, or names another scanner), and a plugin that crashes
    /// this process is quarantined at the next start (`MISSIVE_QUARANTINE=off` turns it off).
    ///
    /// Before either, the trust policy (``MissiveCommand/trustPolicy(logger:environment:)``) refuses files
    /// that fail the file-system checks or, as `MISSIVE_TRUST` says, are not signed by a trusted key.
    ///
    /// - Throws: `ExitCode(2)` when `MISSIVE_TRUST` is not a mode.
    ///
    /// Plugins run isolated as `--isolation` (else `MISSIVE_ISOLATION`, else `defaultIsolation`) says, in workers of
    /// `missive-plugin-worker` beside this executable (or `MISSIVE_PLUGIN_WORKER`), else of this executable itself.
    ///
    /// - Throws: `ExitCode(2)` when `MISSIVE_TRUST` is not a mode or `MISSIVE_ISOLATION` is not a policy.
    func discover(logger: Logger, defaultIsolation: PluginIsolation.Policy = .inProcess) throws -> DiscoveryResult {
        let result = MessageRegistry.discover(
            searchPath: .standard(explicitDirectories: directories), metadataCache: .standard(),
            protection: try Self.protection(logger: logger, isolation: isolation, defaultIsolation: defaultIsolation, confinement: confinement), logger: logger)
        LateRefusals.watch(result.registry, logger: logger)
        return result
    }

    /// The walls isolated plugins' workers get on this machine, as `--worker-confinement` (else
    /// `MISSIVE_WORKER_CONFINEMENT`) asks: ``PluginIsolation/Confinement/namespaces`` or
    /// ``PluginIsolation/Confinement/none``.
    ///
    /// - Throws: `ExitCode(2)` when `MISSIVE_WORKER_CONFINEMENT` is not a mode.
    func effectiveConfinement(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PluginIsolation.Confinement {
        var isolation = PluginIsolation(policy: .isolated, workerCommand: nil)
        isolation.confinement = try confinement ?? Self.confinementSetting(environment) ?? .namespaces
        return isolation.effectiveConfinement
    }

    /// `MISSIVE_WORKER_CONFINEMENT`, or `nil` when unset.
    ///
    /// - Throws: `ExitCode(2)` when it is not a mode.
    static func confinementSetting(_ environment: [String: String]) throws -> PluginIsolation.Confinement? {
        guard let setting = environment["MISSIVE_WORKER_CONFINEMENT"], !setting.isEmpty else { return nil }
        guard let mode = PluginIsolation.Confinement(rawValue: setting) else {
            Console.error("MISSIVE_WORKER_CONFINEMENT is '\(setting)'; it must be one of \(PluginIsolation.Confinement.allCases.map(\.rawValue).joined(separator: ", "))")
            throw ExitCode(2)
        }
        return mode
    }

    /// The CLI's protection: its trust policy, the standard quarantine, this executable as the scanner unless
    /// `MISSIVE_PLUGIN_SCANNER` says otherwise, and the isolation `policy` (else `MISSIVE_ISOLATION`, else
    /// `defaultIsolation`).
    static func protection(
        logger: Logger, isolation policy: PluginIsolation.Policy? = nil, defaultIsolation: PluginIsolation.Policy = .inProcess,
        confinement: PluginIsolation.Confinement? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PluginProtection {
        var protection = PluginProtection.standard(environment: environment)
        protection.trust = try MissiveCommand.trustPolicy(logger: logger, environment: environment)
        if environment["MISSIVE_PLUGIN_SCANNER", default: ""].isEmpty {
            protection.scanner = PluginScanner(
                command: [MissiveCommand.executablePath, "scan-plugin"], timeout: PluginScanner.standardTimeout(environment: environment))
        }
        var chosen = defaultIsolation
        if let policy {
            chosen = policy
        } else if let setting = environment["MISSIVE_ISOLATION"], !setting.isEmpty {
            guard let policy = PluginIsolation.Policy(rawValue: setting) else {
                Console.error("MISSIVE_ISOLATION is '\(setting)'; it must be one of \(PluginIsolation.Policy.allCases.map(\.rawValue).joined(separator: ", "))")
                throw ExitCode(2)
            }
            chosen = policy
        }
        protection.isolation = .standard(policy: chosen, environment: environment)
        if chosen != .inProcess && protection.isolation.workerCommand == nil {
            protection.isolation.workerCommand = [MissiveCommand.executablePath, "plugin-worker"]
        }
        protection.isolation.confinement = try confinement ?? confinementSetting(environment) ?? .namespaces
        if chosen != .inProcess {
            let isolation = protection.isolation
            switch isolation.confinement {
            case .namespaces:
                if let refusal = PluginIsolation.namespaceRefusal {
                    logger.error(
                        "isolated plugins will not start: \(refusal); --worker-confinement namespaces-when-available accepts workers without namespaces",
                        metadata: ["missive.confinement": "\(isolation.confinement)"])
                }
            case .namespacesWhenAvailable where isolation.effectiveConfinement == .none:
                logger.warning(
                    """
                    isolated plugins run WITHOUT namespaces, as --worker-confinement namespaces-when-available allows: \
                    \(PluginIsolation.namespaceRefusal ?? ""); their workers can read what this user can read
                    """,
                    metadata: ["missive.confinement": "\(isolation.confinement)"])
            case .none:
                logger.warning(
                    "isolated plugins run without namespaces (--worker-confinement none): their workers can read what this user can read",
                    metadata: ["missive.confinement": "\(isolation.confinement)"])
            default:
                break
            }
        }
        return protection
    }
}

/// Plugins refused after discovery, while the command ran (a first call that changed the process state), logged
/// as warnings when the command ends, as discovery logs the plugins it refuses.
enum LateRefusals {
    private static let watched = Locked<(registry: MessageRegistry, logger: Logger)?>(nil)

    /// Watches the registry the command discovered.
    static func watch(_ registry: MessageRegistry, logger: Logger) {
        watched.withLock { $0 = (registry, logger) }
    }

    /// Logs each plugin the registry refused after discovery.
    static func report() {
        guard let (registry, logger) = watched.withLock({ $0 }) else { return }
        for error in registry.refusalsAfterRegistration {
            var metadata: Logger.Metadata = ["missive.code": "\(error.code)"]
            if let file = error.file { metadata["missive.file"] = "\(file)" }
            if let objectName = error.objectName { metadata["missive.objectName"] = "\(objectName)" }
            logger.warning("refused plugin: \(error.message)", metadata: metadata)
        }
    }
}
