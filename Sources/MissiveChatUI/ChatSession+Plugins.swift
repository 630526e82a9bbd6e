import Foundation
import Missive
import MissiveClient
import MissiveRendering
import MissiveStore

// The plugins: noticed when their folders change, and `/reload`.
extension ChatSession {
    // MARK: Plugins

    /// Reads the plugin folders again when what they hold changed.
    func checkPlugins() async {
        let now = pluginFingerprint()
        guard now != lastFingerprint else { return }
        await reloadPlugins(automatic: true)
    }

    /// `/reload`: the plugins discovered again, the local store re-decoded with them, the types reported again,
    /// and the open conversation drawn again.
    func reloadPlugins(automatic: Bool) async {
        lastFingerprint = pluginFingerprint()
        do {
            let registry = try reload()
            self.registry = registry
            let report = try await sync.use(registry)
            output.say(
                (automatic ? "the plugins changed: " : "") + "\(Self.count(registry.types.count, "type")); \(Self.count(report.decodedCount, "message")) decoded anew, "
                    + "\(report.stillUnknownCount) still unknown")
            if let open {
                numbered = []
                lastSeparator = nil
                output.say("── \(open) ──")
                await drawNew()
            }
        } catch {
            output.say("cannot reload the plugins: \(error)")
        }
    }

    /// The plugin files on the search path, each with its size and time of change.
    package nonisolated static func fingerprint(directories: [String]) -> String {
        PluginSearchPath.standard(explicitDirectories: directories).candidateFiles().files.map { path in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
            let time = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            return "\(path) \(size) \(time)"
        }.joined(separator: "\n")
    }
}
