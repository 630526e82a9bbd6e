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
        func unknown(_ reason: UnknownMessage.Reason, businessID: String?, registered: Persistence? = nil) -> UnknownMessage {
            UnknownMessage(
                objectName: envelope.objectName, businessID: businessID, rawContent: envelope.content,
                senderPersistence: envelope.persistence, fallbackText: envelope.fallbackText,
                senderPushContent: envelope.pushContent, reason: reason, registeredPersistence: registered)
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
        case .failure(let error): return unknown(.decodeFailed(error.message), businessID: businessID, registered: type.persistence)
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

/// What discovering plugins found: the registry, the plugins loaded, and every file or type refused.
public struct DiscoveryResult: Sendable {
    /// The registry, built-in types first, then plugin types in search order.
    public let registry: MessageRegistry
    /// The plugins that loaded (some of their types may still have been refused).
    public let plugins: [LoadedPlugin]
    /// With ``PluginLoading/lazy``, the plugins registered from their metadata and not loaded yet.
    public let deferredPlugins: [PluginInfo]
    /// Every file and type refused, each naming the file and the reason.
    public let rejections: [MissiveError]
}

extension MessageRegistry {
    /// Finds, loads and registers every plugin on a search path, after the built-in types.
    ///
    /// A file that fails is skipped and reported; every other file is loaded. Files are taken in
    /// search-path order, then by file name, and the first to claim a name keeps it. With a
    /// `metadataCache`, unchanged files' metadata comes from the cache instead of the files.
    public static func discover(
        searchPath: PluginSearchPath = .standard(), includeBuiltIns: Bool = true, metadataCache: PluginMetadataCache? = nil,
        loading: PluginLoading = .eager
    ) -> DiscoveryResult {
        var builder = Builder(includeBuiltIns: includeBuiltIns)
        let (files, problems) = searchPath.candidates()
        var rejections = problems
        var plugins: [LoadedPlugin] = []
        var deferred: [PluginInfo] = []
        defer { metadataCache?.save() }
        for (file, identity) in files {
            do {
                let metadata: PluginMetadata
                if let metadataCache {
                    metadata = try metadataCache.metadata(for: file, identity: identity)
                } else {
                    metadata = try PluginMetadata.read(fromFile: file)
                }
                if loading == .lazy {
                    try PluginLoader.checkSupported(metadata, path: file)
                    let plugin = DeferredPlugin(path: file, metadata: metadata)
                    deferred.append(plugin.info)
                    rejections += builder.register(plugin)
                    continue
                }
                let plugin = try PluginLoader.load(file, metadata: metadata)
                plugins.append(plugin)
                rejections += builder.register(plugin)
            } catch {
                rejections.append(error)
            }
        }
        return DiscoveryResult(registry: builder.build(), plugins: plugins, deferredPlugins: deferred, rejections: rejections)
    }
}
