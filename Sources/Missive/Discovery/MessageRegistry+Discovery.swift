import Foundation
import Logging
import MissiveCore

extension MessageRegistry.Builder {
    /// Finds the plugins on a search path and registers their types after the ones already registered.
    ///
    /// Use it to combine a host's own Swift types with plugins: register the host's types first, so that
    /// they keep their names whatever a plugin declares, then discover, then ``build()``:
    ///
    /// ```
    /// var builder = MessageRegistry.Builder()
    /// try builder.register(OrderMessage.self)
    /// let discovery = builder.discoverPlugins(logger: logger)
    /// let registry = builder.build()
    /// ```
    ///
    /// A file that fails is skipped and reported; every other file is loaded. Files are taken in
    /// search-path order, then by file name, and the first to claim a name keeps it. With a
    /// `metadataCache`, unchanged files' metadata comes from the cache instead of the files.
    ///
    /// - Parameters:
    ///   - searchPath: the folders to search; by default the standard search path.
    ///   - metadataCache: a cache of plugin metadata, or `nil` to read every file. It also keeps the
    ///     scanner's verdicts; without it, every file is scanned at every start.
    ///   - loading: load every plugin now (``PluginLoading/eager``, the default) or on first use.
    ///   - protection: the trust policy, the plugin scanner and the crash quarantine; none by default.
    ///   - logger: where to log refusals (warning), loads and decisions (debug), cache use (trace) and a
    ///     summary (info); `nil` logs nothing. The refusals are returned either way.
    public mutating func discoverPlugins(
        searchPath: PluginSearchPath = .standard(), metadataCache: PluginMetadataCache? = nil, loading: PluginLoading = .eager,
        protection: PluginProtection = .none, logger: Logger? = nil
    ) -> PluginDiscovery {
        let (files, problems) = searchPath.candidates()
        logger?.debug("searching for plugins", metadata: ["missive.searchPath": "\(searchPath.entries.map(\.directory).joined(separator: ":"))"])
        var rejections: [MissiveError] = []
        func refuse(_ error: MissiveError) {
            rejections.append(error)
            guard let logger else { return }
            var metadata: Logger.Metadata = ["missive.code": "\(error.code)"]
            if let file = error.file { metadata["missive.file"] = "\(file)" }
            if let objectName = error.objectName { metadata["missive.objectName"] = "\(objectName)" }
            if let action = error.action { metadata["missive.action"] = "\(action)" }
            // Shadowing is how a user's copy overrides the system's: a decision, not a problem.
            if error.code == .shadowed {
                logger.notice("skipped plugin: \(error.message)", metadata: metadata)
            } else if error.action != nil {
                // The plugin and its other actions still load.
                logger.warning("refused action: \(error.message)", metadata: metadata)
            } else {
                logger.warning("refused plugin: \(error.message)", metadata: metadata)
            }
        }
        problems.forEach(refuse)
        var plugins: [LoadedPlugin] = []
        var deferred: [PluginInfo] = []
        defer { metadataCache?.save() }
        var found: [(file: String, identity: FileIdentity, metadata: Result<PluginMetadata, MissiveError>)] = []
        // The executable's own folder (a build folder, an app's bin) also holds libraries that are no plugins at
        // all: there, one without Missive's metadata section is passed over quietly, not refused.
        let executableFolders = Set(
            searchPath.entries.filter { $0.source == .executable }.map { URL(fileURLWithPath: $0.directory).standardizedFileURL.resolvingSymlinksInPath().path })
        for (file, identity) in files {
            let metadata = Result { () throws(MissiveError) -> PluginMetadata in
                guard let metadataCache else { return try PluginMetadata.read(fromFile: file, knownSize: identity.size) }
                let (cached, fromCache) = try metadataCache.lookUp(file, identity: identity)
                logger?.trace(fromCache ? "metadata from the cache" : "metadata read from the file", metadata: ["missive.file": "\(file)"])
                return cached
            }
            if case .failure(let error) = metadata, error.code == .missingMetadata,
                executableFolders.contains(URL(fileURLWithPath: file).deletingLastPathComponent().path)
            {
                logger?.debug("passed over a library beside the executable that is not a Missive plugin", metadata: ["missive.file": "\(file)"])
                continue
            }
            found.append((file, identity, metadata))
        }
        reserveCapacity(forMore: found.reduce(0) { count, file in
            guard case .success(let metadata) = file.metadata else { return count }
            return count + metadata.types.count + metadata.containers.count
        })
        let decisions = PluginGate(protection: protection, metadataCache: metadataCache, logger: logger).decide(found)
        // The isolated plugins' workers all start before any is waited for, so that they load at once.
        var isolated: [String: IsolatedPlugin] = [:]
        var isolatedInfos: [PluginInfo] = []
        // One memory of failed messages for the isolated plugins of this discovery, unless the host gives one.
        let failures = protection.failureMemory ?? PluginFailureMemory()
        for (file, identity, result) in found where decisions.isolated.contains(file) && decisions.withheld[file] == nil {
            guard case .success(let metadata) = result else { continue }
            let plugin = IsolatedPlugin(
                path: file, identity: identity, metadata: metadata, settings: protection.isolation, quarantine: protection.quarantine, logger: logger,
                failures: failures)
            plugin.begin()
            isolated[file] = plugin
        }
        for (file, identity, result) in found {
            do throws(MissiveError) {
                let metadata = try result.get()
                if let refusal = decisions.refused[file] { throw refusal }
                if let refusal = decisions.withheld[file] {
                    register(DeferredPlugin(path: file, metadata: metadata, refusal: refusal)).forEach(refuse)
                    throw refusal
                }
                if let plugin = isolated[file] {
                    let ready: IsolatedPlugin.Ready
                    switch plugin.ready() {
                    case .success(let loaded): ready = loaded
                    case .failure(let error):
                        // Its worker could not start, or died loading it: its types stay registered from the metadata, so
                        // that their messages say why they are unknown, as a quarantined plugin's do.
                        if error.code == .loadFailed { register(DeferredPlugin(path: file, metadata: metadata, refusal: error)).forEach(refuse) }
                        throw error
                    }
                    isolatedInfos.append(plugin.info)
                    register(plugin, ready: ready).forEach(refuse)
                    logger?.debug("loaded plugin in a worker of its own", metadata: ["missive.file": "\(file)", "missive.plugin": "\(plugin.info)"])
                    continue
                }
                if loading == .lazy {
                    try PluginLoader.checkSupported(metadata, path: file, logger: logger)
                    let plugin = DeferredPlugin(path: file, identity: identity, metadata: metadata, logger: logger)
                    deferred.append(plugin.info)
                    register(plugin).forEach(refuse)
                    logger?.debug(
                        "registered plugin from its metadata; it loads on first use",
                        metadata: ["missive.file": "\(file)", "missive.plugin": "\(metadata.name) \(metadata.version)"])
                    continue
                }
                let plugin = try PluginLoader.load(file, metadata: metadata, identity: identity, logger: logger)
                plugins.append(plugin)
                register(plugin).forEach(refuse)
                logger?.debug("loaded plugin \(plugin)", metadata: ["missive.file": "\(file)"])
            } catch {
                refuse(error)
            }
        }
        let discovery = PluginDiscovery(plugins: plugins, deferredPlugins: deferred, rejections: rejections, isolatedPlugins: isolatedInfos)
        logger?.info("discovered plugins: \(discovery)")
        return discovery
    }
}

extension MessageRegistry {
    /// Finds, loads and registers every plugin on a search path, after the built-in types.
    ///
    /// A shortcut for a ``Builder`` that registers nothing of the host's own; see
    /// ``Builder/discoverPlugins(searchPath:metadataCache:loading:protection:logger:)`` for how discovery goes and how to
    /// add a host's Swift types.
    public static func discover(
        searchPath: PluginSearchPath = .standard(), includeBuiltIns: Bool = true, metadataCache: PluginMetadataCache? = nil,
        loading: PluginLoading = .eager, protection: PluginProtection = .none, logger: Logger? = nil
    ) -> DiscoveryResult {
        var builder = Builder(includeBuiltIns: includeBuiltIns)
        let discovery = builder.discoverPlugins(
            searchPath: searchPath, metadataCache: metadataCache, loading: loading, protection: protection, logger: logger)
        return DiscoveryResult(registry: builder.build(), discovery: discovery)
    }
}
