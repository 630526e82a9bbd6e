import Logging

/// When plugin code is loaded during discovery.
public enum PluginLoading: Sendable, Hashable {
    /// Every plugin is loaded, its entry called and its descriptor checked against its metadata during
    /// discovery, so that every problem is reported at startup. The default.
    case eager
    /// Types are registered from the metadata alone (a metadata cache makes that cheap), and a plugin is
    /// loaded the first time one of its types decodes. Startup touches no plugin code, but a plugin that
    /// fails to load is found only then: its types' messages become ``UnknownMessage``s that carry the reason,
    /// losing nothing.
    case lazy
}

/// A plugin registered from its metadata, loaded on first use, once, whichever thread gets there first.
final class DeferredPlugin: Sendable {
    let path: String
    let metadata: PluginMetadata
    /// The file's identity as discovery found it, for the crash guard's sites when it loads.
    private let identity: FileIdentity?
    private let logger: Logger?
    private let loaded = Locked<Result<LoadedPlugin, MissiveError>?>(nil)

    init(path: String, identity: FileIdentity?, metadata: PluginMetadata, logger: Logger?) {
        self.path = path
        self.identity = identity
        self.metadata = metadata
        self.info = Self.info(of: metadata, path: path)
        self.logger = logger
    }

    /// A plugin that is registered but never loaded, for the reason `refusal` gives (a quarantine): its
    /// types' messages decode as unknown, with that reason.
    init(path: String, metadata: PluginMetadata, refusal: MissiveError) {
        self.path = path
        self.identity = nil
        self.metadata = metadata
        self.info = Self.info(of: metadata, path: path)
        self.logger = nil
        self.loaded.withLock { $0 = .failure(refusal) }
    }

    private static func info(of metadata: PluginMetadata, path: String) -> PluginInfo {
        PluginInfo(name: metadata.name, version: metadata.version, vendor: metadata.vendor, abiVersion: metadata.abiVersion, path: path)
    }

    /// Why the plugin cannot be used, in words for an unknown message's reason.
    private static func unavailable(_ error: MissiveError) -> String {
        error.code == .quarantined ? error.message : "the plugin failed to load: \(error.message)"
    }

    /// The plugin's identity as its metadata states it: made once, since every type registered carries it.
    let info: PluginInfo

    /// The plugin, loaded on first use (`objectName` names what it is loaded for, in the log).
    private func plugin(for objectName: String) -> Result<LoadedPlugin, MissiveError> {
        loaded.withLock { state in
            if let state { return state }
            let result = Result { () throws(MissiveError) in try PluginLoader.load(path, metadata: metadata, identity: identity, logger: logger) }
            switch result {
            case .success:
                logger?.info("loaded plugin on first use", metadata: ["missive.file": "\(path)", "missive.objectName": "\(objectName)"])
            case .failure(let error):
                logger?.error(
                    "plugin failed to load on first use; its messages decode as unknown",
                    metadata: ["missive.file": "\(path)", "missive.code": "\(error.code)", "missive.reason": "\(error.message)"])
            }
            state = result
            return result
        }
    }

    /// The loaded type named `objectName`, loading the plugin if this is the first use.
    /// The type `objectName` if the plugin has been loaded, without loading it.
    func loadedType(_ objectName: String) -> PluginType? {
        guard case .success(let plugin)? = loaded.withLock({ $0 }) else { return nil }
        return plugin.types.first { $0.objectName == objectName }
    }

    func type(_ objectName: String) -> Result<PluginType, MissiveError> {
        switch plugin(for: objectName) {
        case .failure(let error):
            return .failure(MissiveError(error.code, Self.unavailable(error), file: path, objectName: objectName))
        case .success(let plugin):
            guard let type = plugin.types.first(where: { $0.objectName == objectName }) else {
                return .failure(MissiveError(.metadataMismatch, "the loaded plugin has no type \(objectName)", file: path, objectName: objectName))
            }
            return .success(type)
        }
    }

    /// The loaded action that `declared` (read from the metadata) describes, loading the plugin if this is
    /// the first use; the loader's reason when it refused the action.
    func action(_ declared: ActionDeclaration) -> Result<LoadedAction, MissiveError> {
        switch plugin(for: declared.objectName) {
        case .failure(let error):
            return .failure(MissiveError(error.code, Self.unavailable(error), file: path, objectName: declared.objectName, action: declared.id))
        case .success(let plugin):
            if let action = plugin.loadedActions.first(where: { $0.info.kind == declared.kind && $0.info.id == declared.id && $0.info.objectName == declared.objectName }) {
                return .success(action)
            }
            let refusal = plugin.actionRejections.first { $0.action == declared.id && ($0.objectName == nil || $0.objectName == declared.objectName) }
            return .failure(MissiveError(refusal?.code ?? .metadataMismatch, refusal?.message ?? "the loaded plugin has no such action",
                                         file: path, objectName: declared.objectName, action: declared.id))
        }
    }
}
