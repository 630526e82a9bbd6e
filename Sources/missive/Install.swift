import ArgumentParser
import Foundation
import MissiveCommandLine
import Logging
import Missive
import MissiveConformance

extension MissiveCommand {
    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check plugin files with the conformance suite and install those that pass.",
            discussion: """
                Each file is checked at the chosen strictness (each check in a child process, as `missive check` \
                does), then copied into the per-user plugin folder ($XDG_DATA_HOME/missive/plugins, by default \
                ~/.local/share/missive/plugins), which is created if needed; --system installs into the system \
                folder instead (/usr/local/lib/missive/plugins, or $MISSIVE_SYSTEM_PLUGIN_DIR). \
                An installed copy of the same plugin is replaced atomically. A plugin that fails a check, whose \
                names clash with another installed plugin, or that is older than the installed copy (without \
                --allow-downgrade) is refused with the reason. Exit codes: 0 when every file was installed, 1 when \
                any was refused, 2 for a usage error. \
                Before anything of a file runs, its signature is verified under the trust policy (MISSIVE_TRUST; \
                by default warn once a trusted key is installed, off before; docs/TRUST.md): under require a \
                plugin that is not signed by a trusted key, unchanged since, is refused with the reason, under \
                warn the reason is logged and the plugin installed. A signature beside the file (FILE.sig) is \
                installed with it; install signs nothing itself (`missive sign` does). The data files a plugin \
                declares are copied with it, to the same paths relative to the folder, and removed by uninstall; \
                a plugin whose declared file is missing, or would replace another plugin's, is refused.
                """)

        @Argument(help: "Plugin files (.so) to install.", transform: CommandLinePath.resolve)
        var files: [String]

        @Option(help: "Run the conformance checks up to this level, 1–10.")
        var strictness = 5

        @Flag(help: "Install into the system folder instead of the per-user folder.")
        var system = false

        @Flag(name: .customLong("allow-downgrade"), help: "Replace an installed copy even with an older version.")
        var allowDowngrade = false

        @Option(help: "Seconds a check may run before its process is killed.")
        var timeout: Double = 30

        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            guard (1...10).contains(strictness) else { throw ValidationError("--strictness must be from 1 to 10") }
            guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        }

        func run() throws {
            let installer = try MissiveCommand.installer(system: system)
            let logger = logging.logger()
            let trust = try MissiveCommand.trustPolicy(logger: logger)
            var refused = 0
            for file in files {
                let path = URL(fileURLWithPath: file).standardizedFileURL.path
                guard FileManager.default.isReadableFile(atPath: path) else {
                    Console.error("\(file): no such readable file")
                    refused += 1
                    continue
                }
                do {
                    let plan = try installer.plan(path, allowDowngrade: allowDowngrade, trust: trust)
                    for warning in plan.trustWarnings {
                        logger.warning("plugin not trusted: \(warning.message)", metadata: ["missive.file": "\(file)", "missive.code": "\(warning.code)"])
                    }
                    let failures = try check(plan, logger: logger)
                    guard failures.isEmpty else {
                        Console.error("\(file): refused: it fails the conformance checks at strictness \(strictness):")
                        for failure in failures { Console.error("  \(failure)") }
                        Console.error("  (`missive check \(file) --strictness \(strictness)` shows every check)")
                        refused += 1
                        continue
                    }
                    try installer.install(plan)
                    Console.out(summary(of: plan))
                    if trust.checkFilePermissions, let problem = PluginFileSecurity.problem(with: plan.target, user: geteuid()) {
                        logger.warning("installed, but hosts will refuse to load it: \(problem)", metadata: ["missive.file": "\(plan.target)"])
                    }
                    for copy in plan.otherCopies {
                        logger.notice("another copy of the plugin is installed elsewhere; the first in the search path is used",
                                      metadata: ["missive.file": "\(copy.path)", "missive.version": "\(copy.metadata.version)"])
                    }
                } catch let error as PluginInstallError {
                    Console.error("\(error.subject): refused: \(error.reason)")
                    refused += 1
                }
            }
            if refused > 0 { throw ExitCode(1) }
        }

        /// Runs the conformance suite on the plan's file and returns one line per failed check.
        private func check(_ plan: PluginInstaller.Plan, logger: Logger) throws -> [String] {
            var options = ConformanceOptions()
            options.strictness = strictness
            options.timeout = timeout
            options.seed = UInt64.random(in: 0...UInt64.max)
            options.isolation = .childProcess(command: [MissiveCommand.executablePath, "check"])
            let progress = Progress(label: "checking \(URL(fileURLWithPath: plan.source).lastPathComponent)")
            let report: ConformanceReport
            do {
                report = try ConformanceRunner(options: options).run(files: [plan.source]) { file, result in
                    progress.step(result.id)
                    logger.debug("\(result.id): \(result.outcome.name)", metadata: ["missive.file": "\(file)", "missive.detail": "\(result.outcome.detail)"])
                }
            } catch {
                progress.finish()
                Console.error(error.description)
                throw ExitCode(2)
            }
            progress.finish()
            let results = report.plugins.flatMap(\.results).filter { $0.outcome.isFailure && !$0.isExpectedFailure }
            return results.map { "\($0.id): \($0.outcome.name): \($0.outcome.detail)" } + (results.isEmpty ? [] : ["(seed \(report.seed))"])
        }

        private func summary(of plan: PluginInstaller.Plan) -> String {
            let name = "\(plan.metadata.name) \(plan.metadata.version)"
            var with: [String] = []
            if plan.signature != nil { with.append("its signature") }
            if !plan.dataFiles.isEmpty { with.append("its data file\(plan.dataFiles.count == 1 ? "" : "s") \(plan.dataFiles.joined(separator: ", "))") }
            let signed = with.isEmpty ? "" : " (with \(with.joined(separator: " and ")))"
            guard let old = plan.replacing else { return "installed \(name) as \(plan.target)\(signed)" }
            if old.metadata.version == plan.metadata.version { return "reinstalled \(name) as \(plan.target)\(signed)" }
            let direction = PluginInstaller.isVersion(plan.metadata.version, olderThan: old.metadata.version) ? "downgraded" : "upgraded"
            return "\(direction) \(plan.metadata.name) \(old.metadata.version) → \(plan.metadata.version) as \(plan.target)\(signed)"
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an installed plugin, by its plugin name or its file name.",
            discussion: """
                Removes the plugin from the per-user plugin folder, or with --system from the system folder. \
                Exit code 1 when no installed plugin has that name.
                """)

        @Argument(help: "The plugin's name (as `missive list` shows it) or file name.")
        var names: [String]

        @Flag(help: "Remove from the system folder instead of the per-user folder.")
        var system = false

        @OptionGroup var logging: LoggingOptions

        func run() throws {
            let installer = try MissiveCommand.installer(system: system)
            var failed = false
            for name in names {
                do {
                    let removed = try installer.uninstall(name)
                    Console.out("removed " + (removed.plugin.map { "\($0.metadata.name) \($0.metadata.version) " } ?? "") + removed.path)
                } catch {
                    Console.error("\(error.subject): \(error.reason)")
                    failed = true
                }
            }
            if failed { throw ExitCode(1) }
        }
    }
}

extension MissiveCommand {
    /// The installer for the per-user folder, or the system folder; a usage error when there is no per-user folder.
    static func installer(system: Bool) throws -> PluginInstaller {
        guard let installer = PluginInstaller.standard(system: system) else {
            Console.error("no per-user plugin folder: set HOME or XDG_DATA_HOME, or use --system")
            throw ExitCode(2)
        }
        return installer
    }
}

/// A one-line progress display on standard error, shown only when standard error is a terminal, so that
/// piped and JSON output stay clean. Safe to update from any thread (a store reports progress from its
/// database queue).
final class Progress: Sendable {
    private struct State {
        var count = 0
        var shown = false
    }

    private let label: String
    private let unit: String
    private let enabled = isatty(STDERR_FILENO) == 1
    private let state = Locked(State())

    /// A display of `label: COUNT UNIT`.
    init(label: String, unit: String = "checks done") {
        self.label = label
        self.unit = unit
    }

    /// Counts one step, showing its name.
    func step(_ name: String) {
        let count = state.withLock { state in
            state.count += 1
            state.shown = state.shown || enabled
            return state.count
        }
        guard enabled else { return }
        Console.progress("\r\u{1B}[K\(TextHygiene.line("\(label): \(count) \(unit), last \(name)"))")
    }

    /// Shows a count reached, every `interval` steps.
    func count(_ reached: Int, every interval: Int) {
        guard enabled, reached % interval == 0 else { return }
        state.withLock { $0.shown = true }
        Console.progress("\r\u{1B}[K\(TextHygiene.line("\(label): \(reached) \(unit)"))")
    }

    /// Clears the line, if anything was shown on it.
    func finish() {
        guard enabled, state.withLock({ state in defer { state.shown = false }; return state.shown }) else { return }
        Console.progress("\r\u{1B}[K")
    }
}
