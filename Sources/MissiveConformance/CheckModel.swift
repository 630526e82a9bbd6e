import Foundation
import Missive

/// How one check ended.
package enum CheckOutcome: Sendable, Hashable {
    /// The plugin does what the check requires.
    case passed
    /// The plugin does what the check requires, and the check says what it saw (for example, the data files the
    /// plugin declares). It counts and is reported as `passed`, with the note as its detail.
    case noted(String)
    /// The plugin does not: what was expected, and what was seen.
    case failed(expected: String, seen: String)
    /// The process running the check died: the signal or exit code.
    case crashed(String)
    /// The check ran past its time limit and was killed.
    case timedOut(seconds: Double)
    /// The check did not run, and why.
    case skipped(String)
    /// The check ran and found something worth a look that is not a failure (for example, speed).
    case warning(String)

    /// The stable name used in the JSON output: `passed`, `failed`, `crashed`, `timed-out`, `skipped` or `warning`.
    package var name: String {
        switch self {
        case .passed, .noted: "passed"
        case .failed: "failed"
        case .crashed: "crashed"
        case .timedOut: "timed-out"
        case .skipped: "skipped"
        case .warning: "warning"
        }
    }

    /// A one-line explanation; empty for `passed`, the note for `noted`.
    package var detail: String {
        switch self {
        case .passed: ""
        case .noted(let note): note
        case .failed(let expected, let seen): "expected \(expected); saw \(seen)"
        case .crashed(let how): how
        case .timedOut(let seconds): "killed after \(Self.format(seconds)) s"
        case .skipped(let reason): reason
        case .warning(let message): message
        }
    }

    /// Whether this outcome fails a run (unless the check is an expected failure).
    package var isFailure: Bool {
        switch self {
        case .failed, .crashed, .timedOut: true
        case .passed, .noted, .skipped, .warning: false
        }
    }

    static func format(_ seconds: Double) -> String { String(format: "%.3g", seconds) }
}

/// One conformance check: a stable id, the strictness level from which it runs, and what it verifies.
package struct ConformanceCheck: Sendable {
    /// The stable id, for example `abi.version` or `decode.garbage`.
    package let id: String
    /// The lowest strictness (1–10) at which the check runs.
    package let level: Int
    /// What the check verifies, in one line.
    package let summary: String
    /// Checks that must not have failed for this one to be meaningful. When one of them failed or was
    /// skipped, this check is skipped; when one crashed or timed out, this check still runs.
    package let requires: [String]
    let body: @Sendable (CheckContext) -> CheckOutcome
}

/// The result of one check on one plugin.
package struct CheckResult: Sendable, Hashable {
    /// The check's id.
    package let id: String
    /// The check's level.
    package let level: Int
    /// How it ended, after expected failures were applied.
    package var outcome: CheckOutcome
    /// How long it took, in seconds (the child process's whole life, when isolated).
    package let duration: Double
    /// Whether the check is listed as an expected failure and did fail.
    package var isExpectedFailure = false
    /// What is known of the process when the check crashed or timed out in a child process; `nil` otherwise.
    package var crash: CrashContext?
}

/// What a check's child process left behind when it crashed or timed out: the end of what it printed (a
/// panic message, an assertion with its file and line), the input it was given last, and a command that runs
/// the check again on the same input.
package struct CrashContext: Sendable, Hashable {
    /// The last lines the process printed (standard output and error together): at most 20 lines from its last
    /// 2 KiB, each cleaned onto one line. Empty when it printed nothing.
    package let output: [String]
    /// The input the check was giving the plugin: the type, which input it was (an example's index, a
    /// generated input's or a mutation's number) and its first bytes. `nil` when the check had noted none, as
    /// when the plugin crashed while loading.
    package let input: String?
    /// A command that runs this check alone again with the run's seed, which makes the same inputs in the
    /// same order: `missive check FILE --strictness 9 --include '^decode\.mutations$' --seed 42`.
    package let reproduce: String
}

/// What a check can see: the plugin file, the run's options, and the plugin opened lazily.
///
/// A context belongs to one process; in isolated runs each check gets a fresh process and context.
package final class CheckContext: @unchecked Sendable {
    /// The plugin file.
    package let path: String
    /// The seed of the run's pseudo-random inputs.
    package let seed: UInt64
    /// Folders of other plugins to check names against (`--against`).
    package let against: [String]
    /// Whether the check runs in a process of its own, where nothing was loaded before it.
    package let freshProcess: Bool

    private let lock = NSLock()
    private var cachedMetadata: Result<PluginMetadata, MissiveError>?
    private var cachedProbe: Result<PluginProbe, MissiveError>?
    private var cachedActionRegistry: Result<MessageRegistry, CheckFailure>?

    /// Creates the context for one plugin.
    package init(path: String, seed: UInt64, against: [String], freshProcess: Bool = false) {
        self.path = path
        self.seed = seed
        self.against = against
        self.freshProcess = freshProcess
    }

    /// The metadata, read from the file without running it.
    var metadata: Result<PluginMetadata, MissiveError> {
        lock.withLock {
            if let cachedMetadata { return cachedMetadata }
            let result = Result { () throws(MissiveError) in try PluginMetadata.read(fromFile: path) }
            cachedMetadata = result
            return result
        }
    }

    /// The library opened and its descriptor read.
    var probe: Result<PluginProbe, MissiveError> {
        lock.withLock {
            if let cachedProbe { return cachedProbe }
            let result = Result { () throws(MissiveError) in try PluginLoader.probe(path) }
            cachedProbe = result
            return result
        }
    }

    /// A registry of the built-in types and the plugin, loaded as a host loads it, for the action checks; the
    /// outcome to report when the plugin declares no action or cannot be loaded.
    var actionRegistry: Result<MessageRegistry, CheckFailure> {
        let (metadata, probe) = (self.metadata, self.probe)
        return lock.withLock {
            if let cachedActionRegistry { return cachedActionRegistry }
            let result: Result<MessageRegistry, CheckFailure>
            if case .success(let metadata) = metadata, case .success(let probe) = probe, metadata.actions.isEmpty && probe.actions.isEmpty {
                result = .failure(CheckFailure(.skipped("the plugin declares no action")))
            } else {
                do throws(MissiveError) {
                    var builder = MessageRegistry.Builder()
                    builder.register(try PluginLoader.load(path))
                    result = .success(builder.build())
                } catch {
                    result = .failure(CheckFailure(.skipped("the plugin could not be loaded: \(error.message)")))
                }
            }
            cachedActionRegistry = result
            return result
        }
    }

    /// The containers the descriptor declares and that could be read.
    var containers: [MessageContainer] {
        guard case .success(let probe) = probe else { return [] }
        return probe.containers.compactMap { try? $0.get() }
    }

    /// The types that can be called, or the outcome to report when the plugin cannot be opened.
    func callableTypes() -> Result<[PluginType], CheckFailure> {
        switch probe {
        case .failure(let error): return .failure(CheckFailure(.skipped("the plugin could not be opened: \(error.message)")))
        case .success(let probe): return .success(probe.types.compactMap { try? $0.get() })
        }
    }

    /// A pseudo-random generator for one check, derived from the run's seed and the check's id.
    func generator(for id: String) -> SeededGenerator {
        SeededGenerator(seed: seed ^ id.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 })
    }
}

/// An early end of a check with an outcome.
struct CheckFailure: Error {
    let outcome: CheckOutcome
    init(_ outcome: CheckOutcome) { self.outcome = outcome }
}
