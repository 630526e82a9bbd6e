import Foundation
import Missive

/// How a conformance run is set up.
package struct ConformanceOptions: Sendable {
    /// Where checks run.
    package enum Isolation: Sendable, Hashable {
        /// Each check in a fresh child process: `command` (an executable and the arguments that name its check
        /// command, `[path, "check"]` for `missive`) followed by `--child-check ID ...`. A crash, `exit`, hang
        /// or memory flood of the plugin is reported, and the run goes on.
        case childProcess(command: [String])
        /// Everything in this process, for debugging: a crash ends the run, and timeouts are not enforced.
        case inProcess
    }

    /// Checks at or below this level run (1–10).
    package var strictness = 5
    /// Only checks whose id matches this regular expression run.
    package var include: String?
    /// Checks whose id matches this regular expression do not run.
    package var exclude: String?
    /// Seconds a check may take before its process is killed.
    package var timeout: Double = 30
    /// The seed of every pseudo-random input.
    package var seed: UInt64 = 0
    /// Folders of plugins to check names against.
    package var against: [String] = []
    /// Checks known to fail.
    package var expectedFailures = ExpectedFailures()
    /// Where checks run.
    package var isolation = Isolation.inProcess
    /// The command a report tells the reader to run to repeat one check: `missive check`, or `missive-check`.
    package var reproducingCommand = ["missive", "check"]

    /// The default options.
    package init() {}

    /// The checks these options select, in run order.
    package func selectedChecks() throws(ConformanceError) -> [ConformanceCheck] {
        func compile(_ pattern: String?, _ option: String) throws(ConformanceError) -> NSRegularExpression? {
            guard let pattern else { return nil }
            do {
                return try NSRegularExpression(pattern: pattern)
            } catch {
                throw ConformanceError("\(option) '\(pattern)' is not a valid regular expression")
            }
        }
        guard (1...10).contains(strictness) else { throw ConformanceError("strictness must be from 1 to 10, not \(strictness)") }
        let includes = try compile(include, "--include"), excludes = try compile(exclude, "--exclude")
        func matches(_ regex: NSRegularExpression, _ id: String) -> Bool {
            regex.firstMatch(in: id, range: NSRange(id.startIndex..., in: id)) != nil
        }
        return ConformanceCatalog.checks.filter { check in
            check.level <= strictness && includes.map { matches($0, check.id) } ?? true && !(excludes.map { matches($0, check.id) } ?? false)
        }
    }
}

/// The results for one plugin file.
package struct PluginReport: Sendable {
    /// The plugin file.
    package let path: String
    /// The plugin's name, version and vendor from its metadata, when readable.
    package let name: String?, version: String?, vendor: String?
    /// One result per check that was selected, in run order.
    package let results: [CheckResult]

    /// Whether every result is acceptable: no failure, crash or timeout that is not expected.
    package var passed: Bool { !results.contains { $0.outcome.isFailure && !$0.isExpectedFailure } }
}

/// The results of a run.
package struct ConformanceReport: Sendable {
    /// The options the run used.
    package let strictness: Int
    /// The seed of the run, to reproduce it.
    package let seed: UInt64
    /// One report per plugin file, in the order given.
    package let plugins: [PluginReport]

    /// Whether the run passed.
    package var passed: Bool { plugins.allSatisfy(\.passed) }

    /// How many results ended each way, by outcome name, plus `expected-failure`.
    package var counts: [String: Int] { Self.counts(plugins.flatMap(\.results)) }

    /// How many of `results` ended each way, by outcome name, plus `expected-failure`.
    static func counts(_ results: [CheckResult]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for result in results { counts[result.isExpectedFailure ? "expected-failure" : result.outcome.name, default: 0] += 1 }
        return counts
    }
}

/// Runs the conformance checks on plugin files.
package struct ConformanceRunner: Sendable {
    /// The options.
    package let options: ConformanceOptions

    /// A runner with these options.
    package init(options: ConformanceOptions) {
        self.options = options
    }

    /// Runs the selected checks on every file; `progress` is told of each result as it comes.
    package func run(files: [String], progress: (String, CheckResult) -> Void = { _, _ in }) throws(ConformanceError) -> ConformanceReport {
        let checks = try options.selectedChecks()
        guard !checks.isEmpty else { throw ConformanceError("no check is selected; see `missive check --list` for the ids and levels") }
        let plugins = files.map { file in runPlugin(file, checks: checks) { progress(file, $0) } }
        return ConformanceReport(strictness: options.strictness, seed: options.seed, plugins: plugins)
    }

    private func runPlugin(_ path: String, checks: [ConformanceCheck], progress: (CheckResult) -> Void) -> PluginReport {
        let metadata = try? PluginMetadata.read(fromFile: path)
        let context = CheckContext(path: path, seed: options.seed, against: options.against)
        let fileName = URL(fileURLWithPath: path).lastPathComponent
        var outcomes: [String: CheckOutcome] = [:]
        var results: [CheckResult] = []
        for check in checks {
            let start = ContinuousClock.now
            var outcome: CheckOutcome
            var crash: CrashContext?
            if let blocker = blockingRequirement(of: check, outcomes) {
                outcome = .skipped(blocker)
            } else {
                switch options.isolation {
                case .inProcess: outcome = check.body(context)
                case .childProcess(let command): (outcome, crash) = runIsolated(check, path: path, command: command)
                }
            }
            outcomes[check.id] = outcome
            let elapsed = ContinuousClock.now - start
            var result = CheckResult(
                id: check.id, level: check.level, outcome: outcome,
                duration: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, crash: crash)
            if options.expectedFailures.lists(check.id, pluginName: metadata?.name, fileName: fileName) {
                if outcome.isFailure {
                    result.isExpectedFailure = true
                } else if ({ switch outcome { case .passed, .noted, .warning: true; default: false } })() {
                    result.outcome = .failed(
                        expected: "a failure, as the expected-failures list says",
                        seen: "it passed; remove '\(check.id)' from the list so that it stays true")
                }
            }
            progress(result)
            results.append(result)
        }
        return PluginReport(path: path, name: metadata?.name, version: metadata?.version, vendor: metadata?.vendor, results: results)
    }

    /// Why a check cannot be meaningful: a requirement failed or was skipped. Crashes and timeouts of a
    /// requirement do not skip a check; it runs in a fresh process of its own.
    private func blockingRequirement(of check: ConformanceCheck, _ outcomes: [String: CheckOutcome]) -> String? {
        for requirement in check.requires {
            switch outcomes[requirement] {
            case .failed?: return "requires \(requirement), which failed"
            case .skipped?: return "requires \(requirement), which was skipped"
            default: continue
            }
        }
        return nil
    }

    // MARK: Isolation

    /// Runs `check` in a child process; when the child crashes or times out, also what it left behind.
    private func runIsolated(_ check: ConformanceCheck, path: String, command: [String]) -> (CheckOutcome, CrashContext?) {
        let resultFile = NSTemporaryDirectory() + "missive-check-\(getpid())-\(UUID().uuidString).json"
        let trailFile = InputTrail.path(forResultFile: resultFile)
        defer {
            try? FileManager.default.removeItem(atPath: resultFile)
            try? FileManager.default.removeItem(atPath: trailFile)
        }
        let executable = command.first ?? "missive"
        var arguments = Array(command.dropFirst()) + ["--child-check", check.id, "--child-result", resultFile, "--seed", String(options.seed)]
        for folder in options.against { arguments += ["--against", folder] }
        arguments.append(path)
        let run: ChildProcess.Result
        do {
            run = try ChildProcess.run(
                executable: executable, arguments: arguments, environment: [ResourceChecks.timeoutVariable: String(options.timeout)],
                timeout: options.timeout)
        } catch {
            return (.crashed("could not start \(executable): \(error)"), nil)
        }
        let lastWords = run.lastOutputLine.map { ": \($0)" } ?? ""
        func crash() -> CrashContext {
            CrashContext(output: run.reportedOutput, input: InputTrail.read(at: trailFile).map(TextHygiene.line), reproduce: reproduceCommand(check, path: path))
        }
        switch run.termination {
        case .timedOut: return (.timedOut(seconds: options.timeout), crash())
        case .signal(let number): return (.crashed("killed by \(ChildProcess.signalName(number)) while running \(check.id)\(lastWords)"), crash())
        case .exit(let code):
            guard let data = FileManager.default.contentsOfFile(atPath: resultFile), let outcome = Self.decodeOutcome(data) else {
                return (.crashed("exited with code \(code) without a result while running \(check.id)\(lastWords)"), crash())
            }
            return (outcome, nil)
        }
    }

    /// The command that runs `check` alone on `path` again, with this run's seed (and `--against` folders),
    /// at a strictness that selects it.
    func reproduceCommand(_ check: ConformanceCheck, path: String) -> String {
        var words = options.reproducingCommand + [path]
        if check.level > ConformanceOptions().strictness { words += ["--strictness", String(check.level)] }
        words += ["--include", "^" + NSRegularExpression.escapedPattern(for: check.id) + "$", "--seed", String(options.seed)]
        for folder in options.against { words += ["--against", folder] }
        if options.timeout != ConformanceOptions().timeout { words += ["--timeout", String(format: "%g", options.timeout)] }
        return words.map(Self.shellQuoted).joined(separator: " ")
    }

    /// `word` as a POSIX shell reads it back: unchanged when it is made of safe characters, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%")
        if !word.isEmpty && word.allSatisfy(safe.contains) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Runs one check in this process, as the child of an isolated run, and writes its outcome to
    /// `resultFile`.
    ///
    /// The process first becomes a process-group leader, so that the parent can kill whatever the plugin
    /// starts, asks to be killed when the checker ends (an interrupted checker leaves no child behind), and limits its address space to `MISSIVE_CHECK_MEMORY_LIMIT_MB` megabytes (4096 by default; 0
    /// for no limit), so that a plugin that floods memory fails instead of exhausting the machine.
    package static func runChild(checkID: String, resultFile: String, path: String, seed: UInt64, against: [String]) throws {
        ChildProcess.becomeCheckChild()
        // A check child outlives an interrupted checker only as long as its plugin hangs: never.
        CrashGuard.endWithParent()
        InputTrail.open(at: InputTrail.path(forResultFile: resultFile))
        let outcome: CheckOutcome
        if let check = ConformanceCatalog.check(checkID) {
            outcome = check.body(CheckContext(path: path, seed: seed, against: against, freshProcess: true))
        } else {
            outcome = .skipped("no check has the id \(checkID)")
        }
        try Data(encodeOutcome(outcome).utf8).write(to: URL(fileURLWithPath: resultFile), options: .atomic)
    }

    static func encodeOutcome(_ outcome: CheckOutcome) -> String {
        var fields: [String: String] = ["outcome": outcome.name]
        switch outcome {
        case .failed(let expected, let seen):
            fields["expected"] = expected
            fields["seen"] = seen
        case .passed: break
        default: fields["detail"] = outcome.detail
        }
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeOutcome(_ data: Data) -> CheckOutcome? {
        guard let fields = try? JSONSerialization.jsonObject(with: data) as? [String: String] else { return nil }
        let detail = fields["detail"] ?? ""
        switch fields["outcome"] {
        case "passed": return detail.isEmpty ? .passed : .noted(detail)
        case "failed": return .failed(expected: fields["expected"] ?? "", seen: fields["seen"] ?? "")
        case "skipped": return .skipped(detail)
        case "warning": return .warning(detail)
        case "crashed": return .crashed(detail)
        default: return nil
        }
    }
}

