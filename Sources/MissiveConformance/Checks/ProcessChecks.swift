import CMissivePlugin
import Foundation
import Missive

/// Level 1: what the plugin does to the process that hosts it.
///
/// The loader compares the process state the host depends on (descriptors 0–2, the working directory, the
/// handlers of the fatal signals, the locale, the umask) before the library's initialisers run and after its
/// entry returns, and each type compares it around the first call of each kind. This check loads the plugin in
/// its child, makes the first call of each kind on every example and the first example call of each action, and
/// fails naming what changed and when. A
/// crash on a thread the plugin started, or a call of `exit` inside a call, ends the child: the check is then
/// reported as crashed, with the guard's words (`the plugin FILE called exit() during decode of TYPE`). The check
/// waits ``settleTime`` after the calls, so that a thread woken by one of them crashes here; a thread that
/// crashes later than that, or only on other input, is seen by a later check or not at all.
enum ProcessChecks {
    /// How long, in seconds, the check waits after the calls, so that a thread the plugin started can crash
    /// where this check sees it rather than in a later check, or not at all.
    static let settleTime = 0.3

    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            id: "process.state", level: 1,
            summary: "Loading the plugin and the first call of each kind leave the standard streams, the working directory, the fatal-signal "
                + "handlers, the locale and the umask as they were.",
            requires: ["load.entry"]
        ) { context in
            guard case .success(let probe) = context.probe else { return .skipped("the plugin could not be opened") }
            var problems: [String] = []
            if let change = probe.processStateChange { problems.append("loading it (initialisers and entry) \(change)") }
            for case .success(let type) in probe.types {
                for (index, example) in type.examples.enumerated() {
                    InputTrail.note("\(type.objectName), example \(index): \(preview(example, limit: 64))")
                    guard case .success(let content) = type.decode(bytes: example) else { continue }
                    _ = content.rawEncode()
                    _ = content.rawDigest()
                    _ = content.rawPushContent()
                    _ = content.rawSearchableWords()
                    _ = content.rawTexts()
                    _ = content.rawView()
                    _ = try? content.checkedMedia()
                }
                InputTrail.clear()
                if let refusal = type.processStateRefusal {
                    problems.append(refusal.message)
                    // One refusal covers the plugin's types.
                    break
                }
            }
            // The first call of each action, through a registry as a host makes it (the same loaded types).
            if problems.isEmpty, case .success(let registry) = context.actionRegistry {
                for action in registry.composerActions + registry.messageActions where action.plugin.path == context.path {
                    guard let loaded = try? registry.loadedAction(action), let call = ActionChecks.calls(of: loaded, registry: registry).first else { continue }
                    InputTrail.note(call.description)
                    _ = call.run(registry)
                    InputTrail.clear()
                }
                if let refusal = probe.types.lazy.compactMap({ try? $0.get().processStateRefusal }).first {
                    problems.append(refusal.message)
                }
            }
            // A thread the plugin started may crash a little after the call that woke it: give it time to, here,
            // where the crash is reported under this check (a host would quarantine the plugin at its next start).
            usleep(UInt32(settleTime * 1_000_000))
            return outcome(expected: "the process state as it was before the plugin ran", problems: problems)
        }
    ]
}
