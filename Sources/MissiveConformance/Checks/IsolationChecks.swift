import Foundation
import Missive

/// Level 2: what a host that runs the plugin isolated sees (docs/PROTECTION.md, "Isolated plugins").
///
/// The check starts the plugin in a real worker process, with the standard limits, the seccomp filter and the
/// namespaces with their view, as a host with ``PluginIsolation`` does (it names the missing paths the plugin tried to
/// open while it loaded), and decodes every example through it, with its view, and runs each action's first
/// example there. What decodes in process must decode there (what the answers hold, the other checks judge). A worker that crashes, hangs or is stopped
/// by the filter (a plugin that opens a file, say) is reported with what it did: such a plugin cannot run isolated.
enum IsolationChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            id: "isolation.worker", level: 2,
            summary: "Run isolated (a worker process of its own, under the memory limit and the seccomp filter), the plugin loads, and its examples "
                + "decode, draw and act as in process.",
            requires: ["process.state"]
        ) { context in
            guard let command = workerCommand() else {
                return .skipped("no plugin worker executable: missive-plugin-worker beside this executable, or MISSIVE_PLUGIN_WORKER")
            }
            // The walls a host puts up; where the kernel refuses namespaces, the check runs the worker without them (it
            // judges the plugin, not the machine) and says so.
            var settings = PluginIsolation(policy: .isolated, workerCommand: command)
            settings.confinement = .namespacesWhenAvailable
            var builder = MessageRegistry.Builder()
            var attempts: [String] = []
            let refusals = builder.registerIsolated(file: context.path, settings: settings, attempts: &attempts)
            if let load = refusals.first(where: { $0.action == nil && $0.objectName == nil }) {
                // A call the filter forbids: the plugin cannot run isolated. A worker that died loading it otherwise: in
                // process, the same load or example crashes.
                // The loader's own refusal is the same in process, and other checks report it.
                guard load.code == .loadFailed else { return .skipped("the loader refuses the plugin, isolated or not: \(load.message)") }
                if load.message.contains(PluginIsolation.forbiddenCallPhrase) {
                    return .failed(expected: "the plugin to load in a worker, under its limits and filter", seen: load.message)
                }
                return .crashed("isolated, \(load.message)")
            }
            let registry = builder.build()
            var problems: [String] = []
            var crashes: [String] = []
            // The types a host registers (one refused for a clash, say, is not, isolated or not).
            for case .success(let type) in (try? context.probe.get())?.types ?? [] where registry.type(objectName: type.objectName) != nil {
                let envelopes = type.examples.enumerated().map { index, example in
                    Envelope(id: "example-\(index)", conversationID: "check", senderID: "check", sentAt: 0, objectName: type.objectName, content: example)
                }
                let isolated = registry.decode(envelopes, views: true)
                for (index, (example, message)) in zip(type.examples, isolated).enumerated() {
                    let name = "\(type.objectName) example \(index)"
                    if case .pluginCrashed(let reason)? = message.unknown?.reason {
                        crashes.append("\(name): \(reason)")
                        continue
                    }
                    // What the answers hold is judged by the other checks, in process: here, that they come at all.
                    guard case .success = type.decode(bytes: example) else { continue }
                    guard message.isKnown else {
                        problems.append("\(name) decodes in process but not isolated: \(message.unknown?.reason.description ?? "")")
                        continue
                    }
                    do throws(MissiveError) {
                        _ = try message.content.describedView()
                    } catch {
                        if error.code == .pluginCrashed { crashes.append("\(name)'s view: \(error.message)") }
                    }
                }
            }
            for action in registry.messageActions {
                guard let example = (try? context.probe.get())?.types.lazy.compactMap({ try? $0.get() }).first(where: { $0.objectName == action.objectName })?.examples.first
                else { continue }
                let message = registry.decode(
                    Envelope(id: "action", conversationID: "check", senderID: "check", sentAt: 0, objectName: action.objectName, content: example))
                let arguments = actionExample(action, context: context) ?? []
                do throws(MissiveError) {
                    _ = try registry.perform(action.id, on: message, arguments: arguments)
                } catch {
                    if error.code == .pluginCrashed { crashes.append("action \(action.id): \(error.message)") }
                }
            }
            if let crash = crashes.first {
                let text = "isolated, " + crash + (crashes.count > 1 ? "; and \(crashes.count - 1) more" : "")
                if crashes.contains(where: { $0.contains(PluginIsolation.forbiddenCallPhrase) }) {
                    return .failed(expected: "only the calls the worker's filter allows", seen: text)
                }
                return .crashed(text)
            }
            if problems.isEmpty, !attempts.isEmpty {
                return .warning(
                    "isolated, while loading it tried to open what is not in its view (a host hands a plugin only its file, its libraries and the "
                        + "files it declares): \(attempts.joined(separator: ", "))")
            }
            if problems.isEmpty, settings.effectiveConfinement == .none, let refusal = PluginIsolation.namespaceRefusal {
                return .noted("ran without namespaces: \(refusal)")
            }
            return outcome(expected: "every example to decode isolated as it does in process", problems: problems)
        }
    ]

    /// The worker a host would use: `MISSIVE_PLUGIN_WORKER` or `missive-plugin-worker` beside this executable, else
    /// this executable itself when it is `missive` or `missive-check` (`plugin-worker`).
    static func workerCommand() -> [String]? {
        if let standard = PluginIsolation.standardWorkerCommand() { return standard }
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let name = (executable as NSString).lastPathComponent
        return name == "missive" || name == "missive-check" ? [executable, "plugin-worker"] : nil
    }

    /// The first example arguments of an action, as the plugin declares them.
    private static func actionExample(_ action: ActionDeclaration, context: CheckContext) -> [ActionArgument]? {
        guard case .success(let registry) = context.actionRegistry, let loaded = try? registry.loadedAction(action) else { return nil }
        return loaded.examples.first
    }
}
