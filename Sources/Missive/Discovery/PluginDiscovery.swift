/// What discovering plugins found: the plugins loaded or registered for later, and every file or type refused.
public struct PluginDiscovery: Sendable, CustomStringConvertible {
    /// The plugins that loaded (some of their types may still have been refused).
    public let plugins: [LoadedPlugin]
    /// With ``PluginLoading/lazy``, the plugins registered from their metadata and not loaded yet.
    public let deferredPlugins: [PluginInfo]
    /// Every folder, file and type refused, each naming the file and the reason, in search order.
    public let rejections: [MissiveError]
    /// The plugins that run in a worker process of their own (``PluginIsolation``), loaded there and registered
    /// from their metadata; they are not in ``plugins``.
    public let isolatedPlugins: [PluginInfo]

    init(plugins: [LoadedPlugin], deferredPlugins: [PluginInfo], rejections: [MissiveError], isolatedPlugins: [PluginInfo] = []) {
        self.plugins = plugins
        self.deferredPlugins = deferredPlugins
        self.rejections = rejections
        self.isolatedPlugins = isolatedPlugins
    }

    /// `2 plugins loaded, 0 deferred, 1 refused`, and `, 3 isolated` when some are.
    public var description: String {
        "\(plugins.count) plugin\(plugins.count == 1 ? "" : "s") loaded, \(deferredPlugins.count) deferred, \(rejections.count) refused"
            + (isolatedPlugins.isEmpty ? "" : ", \(isolatedPlugins.count) isolated")
    }
}

/// What ``MessageRegistry/discover(searchPath:includeBuiltIns:metadataCache:loading:protection:logger:)`` found: the
/// registry, the plugins loaded, and every file or type refused.
public struct DiscoveryResult: Sendable, CustomStringConvertible {
    /// The registry, built-in types first, then plugin types in search order.
    public let registry: MessageRegistry
    /// What discovery found: the plugins loaded or deferred, and every file or type refused.
    public let discovery: PluginDiscovery

    /// The plugins that loaded (some of their types may still have been refused); the same as `discovery.plugins`.
    public var plugins: [LoadedPlugin] { discovery.plugins }
    /// With ``PluginLoading/lazy``, the plugins registered from their metadata and not loaded yet; the same as
    /// `discovery.deferredPlugins`.
    public var deferredPlugins: [PluginInfo] { discovery.deferredPlugins }
    /// Every file and type refused, each naming the file and the reason; the same as `discovery.rejections`.
    public var rejections: [MissiveError] { discovery.rejections }

    /// `14 types; 3 plugins loaded, 0 deferred, 0 refused`.
    public var description: String { "\(registry.types.count) types; \(discovery)" }
}
