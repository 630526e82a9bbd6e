import Logging
import MissiveCore

/// The message types a host knows, by objectName and by business identifier.
///
/// Build one with ``Builder`` (or ``discover(searchPath:)``) before decoding starts. A registry is
/// immutable afterwards: reading it is a dictionary lookup and safe from any thread.
///
/// Decoding an envelope picks the type in this order:
/// 1. a registered objectName gives that type;
/// 2. `MS:Custom` content whose top-level `businessID` is registered gives that type;
/// 3. anything else gives an ``UnknownMessage``, as does content a type's decoder refuses.
public struct MessageRegistry: Sendable {
    /// The objectName of the generic custom container, which dispatches on `businessID`.
    public static let customObjectName = "MS:Custom"

    /// The built-in Swift types.
    public static let builtInTypes: [any MessageType.Type] = [
        TextMessage.self, ImageMessage.self, VoiceMessage.self, VideoMessage.self, FileMessage.self, LocationMessage.self,
    ]

    /// Every registered type, in registration order.
    public let types: [RegisteredType]
    private let byObjectName: [String: Int]
    private let byBusinessID: [String: Int]

    /// The type registered under an objectName.
    public func type(objectName: String) -> RegisteredType? {
        byObjectName[objectName].map { types[$0] }
    }

    /// The type registered under a business identifier.
    public func type(businessID: String) -> RegisteredType? {
        byBusinessID[businessID].map { types[$0] }
    }

    /// Decodes an envelope's content. Never fails: content that cannot be decoded becomes an
    /// ``UnknownMessage`` that keeps it byte for byte.
    public func decode(_ envelope: Envelope) -> Message {
        Message(envelope: envelope, content: envelope.content.withUnsafeBufferPointer { decodeContent(of: envelope, $0) })
    }

    /// Parses one line of JSON as an envelope and decodes it.
    ///
    /// - Throws: ``MissiveError/Code/malformedEnvelope`` when the line is not a valid envelope.
    public func decode(line: some Collection<UInt8>) throws(MissiveError) -> Message {
        decode(try Envelope(parsing: line))
    }

    private func decodeContent(of envelope: Envelope, _ content: UnsafeBufferPointer<UInt8>) -> any MessageContent {
        func unknown(_ reason: UnknownMessage.Reason, businessID: String?, refusedBy type: RegisteredType? = nil) -> UnknownMessage {
            UnknownMessage(
                objectName: envelope.objectName, businessID: businessID, rawContent: envelope.content,
                senderPersistence: envelope.persistence, fallbackText: envelope.fallbackText,
                senderPushContent: envelope.pushContent, reason: reason, refusingType: type?.objectName,
                registeredPersistence: type?.persistence)
        }
        guard let index = byObjectName[envelope.objectName] else {
            return unknown(.notRegistered, businessID: JSONScanner.topLevelString("businessID", in: content))
        }
        var type = types[index]
        var businessID = type.businessID
        switch type.decoder {
        case .unknown:
            return unknown(.notRegistered, businessID: JSONScanner.topLevelString("businessID", in: content))
        case .customDispatch:
            businessID = JSONScanner.topLevelString("businessID", in: content)
            guard let id = businessID, let target = byBusinessID[id] else {
                return unknown(.unknownBusinessID(businessID), businessID: businessID)
            }
            type = types[target]
        case .native, .plugin, .deferred:
            break
        }
        switch type.decode(content) {
        case .success(let decoded): return decoded
        case .failure(let error): return unknown(.decodeFailed(error.message), businessID: businessID, refusedBy: type)
        }
    }

    fileprivate init(types: [RegisteredType], byObjectName: [String: Int], byBusinessID: [String: Int]) {
        self.types = types
        self.byObjectName = byObjectName
        self.byBusinessID = byBusinessID
    }
}

extension MessageRegistry {
    /// Collects registrations, refusing bad and clashing names, and then builds a ``MessageRegistry``.
    public struct Builder {
        private var types: [RegisteredType] = []
        private var byObjectName: [String: Int] = [:]
        private var byBusinessID: [String: Int] = [:]

        /// Starts a registry, with Missive's built-in types unless `includeBuiltIns` is false.
        public init(includeBuiltIns: Bool = true) {
            guard includeBuiltIns else { return }
            for type in MessageRegistry.builtInTypes {
                add(Self.registered(type, origin: .builtIn))
            }
            add(RegisteredType(objectName: MessageRegistry.customObjectName, businessID: nil, persistence: .counted,
                               isMedia: false, origin: .builtIn, decoder: .customDispatch))
            add(RegisteredType(objectName: UnknownMessage.objectName, businessID: nil, persistence: UnknownMessage.defaultPersistence,
                               isMedia: false, origin: .builtIn, decoder: .unknown))
        }

        /// Registers a Swift message type of the host application.
        ///
        /// - Throws: ``MissiveError`` when a name breaks the grammar, uses the reserved prefix, or is taken.
        public mutating func register<T: MessageType>(_ type: T.Type) throws(MissiveError) {
            let entry = Self.registered(type, origin: .application)
            try check(entry, file: nil)
            add(entry)
        }

        /// Registers every type of a loaded plugin that passes the checks, and returns one error for each
        /// type refused. The other types are registered all the same.
        @discardableResult
        public mutating func register(_ plugin: LoadedPlugin) -> [MissiveError] {
            var refused: [MissiveError] = []
            for pluginType in plugin.types {
                let entry = RegisteredType(
                    objectName: pluginType.objectName, businessID: pluginType.businessID, persistence: pluginType.persistence,
                    isMedia: pluginType.isMedia, origin: .plugin(plugin.info), decoder: .plugin(pluginType))
                do {
                    try check(entry, file: plugin.info.path)
                    add(entry)
                } catch {
                    refused.append(error)
                }
            }
            return refused
        }

        /// Registers every type a not-yet-loaded plugin's metadata declares; see ``PluginLoading/lazy``.
        mutating func register(_ plugin: DeferredPlugin) -> [MissiveError] {
            var refused: [MissiveError] = []
            for type in plugin.metadata.types {
                guard let persistence = type.persistence else {
                    refused.append(MissiveError(.invalidMetadata, "persistence \(type.persistenceValue) is not one of 0, 1, 3 and 16",
                                                file: plugin.path, objectName: type.objectName))
                    continue
                }
                let entry = RegisteredType(
                    objectName: type.objectName, businessID: type.businessID, persistence: persistence, isMedia: type.isMedia,
                    origin: .plugin(plugin.info), decoder: .deferred(plugin))
                do {
                    try check(entry, file: plugin.path)
                    add(entry)
                } catch {
                    refused.append(error)
                }
            }
            return refused
        }

        /// The registry. The builder can go on being used; the registry does not change.
        public func build() -> MessageRegistry {
            MessageRegistry(types: types, byObjectName: byObjectName, byBusinessID: byBusinessID)
        }

        private static func registered<T: MessageType>(_ type: T.Type, origin: RegisteredType.Origin) -> RegisteredType {
            RegisteredType(objectName: T.objectName, businessID: T.businessID, persistence: T.persistence,
                           isMedia: T.isMediaType, origin: origin, decoder: .native(type))
        }

        private func check(_ entry: RegisteredType, file: String?) throws(MissiveError) {
            let name = entry.objectName
            if let problem = NameGrammar.objectNameProblem(name) {
                throw MissiveError(.invalidName, problem, file: file, objectName: name)
            }
            if NameGrammar.isReservedObjectName(name) {
                throw MissiveError(.reservedName, "objectName uses the prefix '\(NameGrammar.reservedPrefix)', reserved for Missive's built-in types",
                                   file: file, objectName: name)
            }
            if let owner = byObjectName[name] {
                throw MissiveError(.duplicateName, "objectName is already registered by \(types[owner].ownerDescription)",
                                   file: file, objectName: name)
            }
            guard let id = entry.businessID else { return }
            if let problem = NameGrammar.businessIDProblem(id) {
                throw MissiveError(.invalidName, problem, file: file, objectName: name)
            }
            if NameGrammar.isReservedBusinessID(id) {
                throw MissiveError(.reservedName, "businessID '\(id)' uses a prefix reserved for Missive", file: file, objectName: name)
            }
            if let owner = byBusinessID[id] {
                throw MissiveError(.duplicateName, "businessID '\(id)' is already registered by \(types[owner].objectName) of \(types[owner].ownerDescription)",
                                   file: file, objectName: name)
            }
        }

        private mutating func add(_ entry: RegisteredType) {
            byObjectName[entry.objectName] = types.count
            if let id = entry.businessID { byBusinessID[id] = types.count }
            types.append(entry)
        }
    }
}

/// What discovering plugins found: the plugins loaded or registered for later, and every file or type refused.
public struct PluginDiscovery: Sendable, CustomStringConvertible {
    /// The plugins that loaded (some of their types may still have been refused).
    public let plugins: [LoadedPlugin]
    /// With ``PluginLoading/lazy``, the plugins registered from their metadata and not loaded yet.
    public let deferredPlugins: [PluginInfo]
    /// Every folder, file and type refused, each naming the file and the reason, in search order.
    public let rejections: [MissiveError]

    /// `2 plugins loaded, 0 deferred, 1 refused`.
    public var description: String {
        "\(plugins.count) plugin\(plugins.count == 1 ? "" : "s") loaded, \(deferredPlugins.count) deferred, \(rejections.count) refused"
    }
}

/// What ``MessageRegistry/discover(searchPath:includeBuiltIns:metadataCache:loading:logger:)`` found: the
/// registry, the plugins loaded, and every file or type refused.
public struct DiscoveryResult: Sendable, CustomStringConvertible {
    /// The registry, built-in types first, then plugin types in search order.
    public let registry: MessageRegistry
    /// The plugins that loaded (some of their types may still have been refused).
    public let plugins: [LoadedPlugin]
    /// With ``PluginLoading/lazy``, the plugins registered from their metadata and not loaded yet.
    public let deferredPlugins: [PluginInfo]
    /// Every file and type refused, each naming the file and the reason.
    public let rejections: [MissiveError]

    /// `14 types; 3 plugins loaded, 0 deferred, 0 refused`.
    public var description: String {
        "\(registry.types.count) types; " + PluginDiscovery(plugins: plugins, deferredPlugins: deferredPlugins, rejections: rejections).description
    }
}

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
    ///   - metadataCache: a cache of plugin metadata, or `nil` to read every file.
    ///   - loading: load every plugin now (``PluginLoading/eager``, the default) or on first use.
    ///   - logger: where to log refusals (warning), loads and decisions (debug), cache use (trace) and a
    ///     summary (info); `nil` logs nothing. The refusals are returned either way.
    public mutating func discoverPlugins(
        searchPath: PluginSearchPath = .standard(), metadataCache: PluginMetadataCache? = nil, loading: PluginLoading = .eager,
        logger: Logger? = nil
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
            // Shadowing is how a user's copy overrides the system's: a decision, not a problem.
            if error.code == .shadowed {
                logger.notice("skipped plugin: \(error.message)", metadata: metadata)
            } else {
                logger.warning("refused plugin: \(error.message)", metadata: metadata)
            }
        }
        problems.forEach(refuse)
        var plugins: [LoadedPlugin] = []
        var deferred: [PluginInfo] = []
        defer { metadataCache?.save() }
        for (file, identity) in files {
            do {
                let metadata: PluginMetadata
                if let metadataCache {
                    let (cached, fromCache) = try metadataCache.lookUp(file, identity: identity)
                    metadata = cached
                    logger?.trace(fromCache ? "metadata from the cache" : "metadata read from the file", metadata: ["missive.file": "\(file)"])
                } else {
                    metadata = try PluginMetadata.read(fromFile: file)
                }
                if loading == .lazy {
                    try PluginLoader.checkSupported(metadata, path: file, logger: logger)
                    let plugin = DeferredPlugin(path: file, metadata: metadata, logger: logger)
                    deferred.append(plugin.info)
                    register(plugin).forEach(refuse)
                    logger?.debug(
                        "registered plugin from its metadata; it loads on first use",
                        metadata: ["missive.file": "\(file)", "missive.plugin": "\(metadata.name) \(metadata.version)"])
                    continue
                }
                let plugin = try PluginLoader.load(file, metadata: metadata, logger: logger)
                plugins.append(plugin)
                register(plugin).forEach(refuse)
                logger?.debug("loaded plugin \(plugin)", metadata: ["missive.file": "\(file)"])
            } catch {
                refuse(error)
            }
        }
        let discovery = PluginDiscovery(plugins: plugins, deferredPlugins: deferred, rejections: rejections)
        logger?.info("discovered plugins: \(discovery)")
        return discovery
    }
}

extension MessageRegistry {
    /// Finds, loads and registers every plugin on a search path, after the built-in types.
    ///
    /// A shortcut for a ``Builder`` that registers nothing of the host's own; see
    /// ``Builder/discoverPlugins(searchPath:metadataCache:loading:logger:)`` for how discovery goes and how to
    /// add a host's Swift types.
    public static func discover(
        searchPath: PluginSearchPath = .standard(), includeBuiltIns: Bool = true, metadataCache: PluginMetadataCache? = nil,
        loading: PluginLoading = .eager, logger: Logger? = nil
    ) -> DiscoveryResult {
        var builder = Builder(includeBuiltIns: includeBuiltIns)
        let discovery = builder.discoverPlugins(searchPath: searchPath, metadataCache: metadataCache, loading: loading, logger: logger)
        return DiscoveryResult(
            registry: builder.build(), plugins: discovery.plugins, deferredPlugins: discovery.deferredPlugins, rejections: discovery.rejections)
    }
}
