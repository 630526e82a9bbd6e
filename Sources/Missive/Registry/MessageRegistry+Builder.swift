import MissiveCore

extension MessageRegistry {
    /// Collects registrations, refusing bad and clashing names, and then builds a ``MessageRegistry``.
    public struct Builder {
        private var types: [RegisteredType] = []
        private var byObjectName: [String: Int] = [:]
        private var byDispatch: [DispatchKey: Int] = [:]
        private var actions: [RegisteredAction] = []
        private var messageActionIndex: [RegisteredAction.MessageKey: Int] = [:]
        private var composerActionIndex: [String: Int] = [:]

        /// Starts a registry, with Missive's built-in types unless `includeBuiltIns` is false.
        ///
        /// `MS:Custom` is always there (as the built-in container), and so is `MS:Unknown`.
        public init(includeBuiltIns: Bool = true) {
            if includeBuiltIns {
                for type in MessageRegistry.builtInTypes {
                    add(Self.registered(type, origin: .builtIn))
                }
            }
            add(RegisteredType(objectName: MessageContainer.custom.objectName, businessID: nil, persistence: .counted,
                               isMedia: false, origin: .builtIn, decoder: .container(.custom)))
            add(RegisteredType(objectName: UnknownMessage.objectName, businessID: nil, persistence: UnknownMessage.defaultPersistence,
                               isMedia: false, origin: .builtIn, decoder: .unknown))
        }

        /// Registers a Swift message type of the host application.
        ///
        /// - Throws: ``MissiveError`` when a name breaks the grammar, uses the reserved prefix, or is taken,
        ///   or when the type names a container that is not registered.
        public mutating func register<T: MessageType>(_ type: T.Type) throws(MissiveError) {
            try checkAndAdd(Self.registered(type, origin: .application), file: nil)
        }

        /// Registers a container of the host application, so that types can register under it.
        ///
        /// Declaring a container that is already registered with the same key and key kind does nothing.
        ///
        /// - Throws: ``MissiveError`` when its objectName or key breaks the grammar, or the objectName is
        ///   taken by a type or by a container with another key.
        public mutating func register(_ container: MessageContainer) throws(MissiveError) {
            try register(container, origin: .application, file: nil)
        }

        private mutating func register(_ container: MessageContainer, origin: RegisteredType.Origin, file: String?) throws(MissiveError) {
            let name = container.objectName
            if let owner = byObjectName[name], let existing = types[owner].declaredContainer {
                guard existing == container else {
                    throw MissiveError(
                        .containerConflict, "container \(container) clashes with \(existing), declared by \(types[owner].ownerDescription)",
                        file: file, objectName: name)
                }
                return
            }
            if let problem = NameGrammar.containerKeyProblem(container.key) {
                throw MissiveError(.invalidName, problem, file: file, objectName: name)
            }
            let entry = RegisteredType(objectName: name, businessID: nil, persistence: .counted, isMedia: false, origin: origin,
                                       decoder: .container(container))
            try checkAndAdd(entry, file: file)
        }

        /// Registers every container, type and action of a loaded plugin that passes the checks, and returns
        /// one error for each refused, including the actions the loader refused. The others are registered all
        /// the same. A type declared under a container whose declaration was refused is refused too, and so are
        /// the actions on a refused type; a type with only a business identifier is in the built-in `MS:Custom`,
        /// whatever the plugin declares, and a refused declaration of `MS:Custom` costs it nothing.
        @discardableResult
        public mutating func register(_ plugin: LoadedPlugin) -> [MissiveError] {
            let entries = plugin.types.map { pluginType in
                (RegisteredType(
                    objectName: pluginType.objectName, businessID: pluginType.businessID, container: pluginType.container,
                    persistence: pluginType.persistence, isMedia: pluginType.isMedia, origin: .plugin(plugin.info), decoder: .plugin(pluginType)),
                 declaredContainer: pluginType.container)
            }
            let refused = register(containers: plugin.containers, types: entries, origin: .plugin(plugin.info), file: plugin.info.path)
            return refused + plugin.actionRejections
                + register(actions: plugin.loadedActions.map { RegisteredAction(info: $0.info, source: .loaded($0)) }, plugin: plugin.info)
        }

        /// Registers every container, type and action a not-yet-loaded plugin's metadata declares; see
        /// ``PluginLoading/lazy``.
        mutating func register(_ plugin: DeferredPlugin) -> [MissiveError] {
            register(metadata: plugin.metadata, info: plugin.info, decoder: .deferred(plugin), actions: .deferred(plugin)) { _ in true }
        }

        /// Registers every container and type an isolated plugin's metadata declares, and the actions its worker
        /// loaded, with the loader's refusals of the others.
        mutating func register(_ plugin: IsolatedPlugin, ready: IsolatedPlugin.Ready) -> [MissiveError] {
            let loaded = Set(ready.actions.map { "\($0.kind == .composer ? "c" : "m")\t\($0.objectName)\t\($0.id)" })
            return register(metadata: plugin.metadata, info: plugin.info, decoder: .isolated(plugin), actions: .isolated(plugin)) { entry in
                loaded.contains("\(entry.kind == .composer ? "c" : "m")\t\(entry.objectName)\t\(entry.id)")
            } + ready.actionRejections
        }

        /// Registers what a plugin's metadata declares, each type with `decoder` and each action that `keeps` with
        /// `actionSource`.
        private mutating func register(
            metadata: PluginMetadata, info: PluginInfo, decoder: RegisteredType.Decoder, actions actionSource: RegisteredAction.Source,
            keeping keeps: (PluginMetadata.ActionEntry) -> Bool
        ) -> [MissiveError] {
            var refused: [MissiveError] = []
            var entries: [(RegisteredType, declaredContainer: String?)] = []
            entries.reserveCapacity(metadata.types.count)
            let origin = RegisteredType.Origin.plugin(info)
            for type in metadata.types {
                guard let persistence = type.persistence else {
                    refused.append(MissiveError(.invalidMetadata, "persistence \(type.persistenceValue) is not one of 0, 1, 3 and 16",
                                                file: info.path, objectName: type.objectName))
                    continue
                }
                entries.append(
                    (RegisteredType(
                        objectName: type.objectName, businessID: type.businessID, container: type.container, persistence: persistence,
                        isMedia: type.isMedia, origin: origin, decoder: decoder),
                     declaredContainer: type.container))
            }
            refused += register(containers: metadata.containers, types: entries, origin: origin, file: info.path)
            var actions: [RegisteredAction] = []
            for entry in metadata.actions where keeps(entry) {
                do {
                    actions.append(RegisteredAction(info: try ActionDeclaration(entry, plugin: info), source: actionSource))
                } catch {
                    refused.append(error)
                }
            }
            return refused + register(actions: actions, plugin: info)
        }

        /// Registers a plugin's actions after its types: a message action only on a type the same plugin
        /// registered, a composer action only under an id no earlier plugin took and for a registered type.
        private mutating func register(actions entries: [RegisteredAction], plugin: PluginInfo) -> [MissiveError] {
            var refused: [MissiveError] = []
            for entry in entries {
                let action = entry.info
                func refuse(_ code: MissiveError.Code, _ message: String) {
                    refused.append(MissiveError(code, message, file: plugin.path, objectName: action.objectName, action: action.id))
                }
                switch action.kind {
                case .message:
                    guard let index = byObjectName[action.objectName], types[index].origin == .plugin(plugin) else {
                        refuse(.invalidAction, "its type \(action.objectName) was not registered from this plugin, so the action is refused with it")
                        continue
                    }
                    let key = RegisteredAction.MessageKey(objectName: action.objectName, id: action.id)
                    guard messageActionIndex[key] == nil else {
                        refuse(.duplicateName, "\(action.objectName) already has an action '\(action.id)'")
                        continue
                    }
                    messageActionIndex[key] = actions.count
                case .composer:
                    if let owner = composerActionIndex[action.id] {
                        let other = actions[owner].info.plugin
                        refuse(.duplicateName, "the composer action id '\(action.id)' is already registered by plugin \(other.name) \(other.version) (\(other.path))")
                        continue
                    }
                    guard let index = byObjectName[action.objectName], types[index].declaredContainer == nil,
                        action.objectName != UnknownMessage.objectName
                    else {
                        refuse(.invalidAction, "it creates \(action.objectName), which is not a registered type")
                        continue
                    }
                    composerActionIndex[action.id] = actions.count
                }
                actions.append(entry)
            }
            return refused
        }

        /// Registers a plugin's containers, then its types, each with the container its declaration names (`nil` for
        /// none: a type with a business identifier alone is in the built-in `MS:Custom`). Only the types declared
        /// under a refused container are refused with it.
        private mutating func register(
            containers: [MessageContainer], types entries: [(RegisteredType, declaredContainer: String?)], origin: RegisteredType.Origin, file: String
        ) -> [MissiveError] {
            var refused: [MissiveError] = []
            var refusedContainers: [String: MissiveError] = [:]
            for container in containers {
                do {
                    try register(container, origin: origin, file: file)
                } catch {
                    refused.append(error)
                    refusedContainers[container.objectName] = error
                }
            }
            for (entry, declaredContainer) in entries {
                if let container = declaredContainer, let error = refusedContainers[container] {
                    refused.append(MissiveError(error.code, "its container \(container) was refused", file: file, objectName: entry.objectName))
                    continue
                }
                do {
                    try checkAndAdd(entry, file: file)
                } catch {
                    refused.append(error)
                }
            }
            return refused
        }

        /// The registry. The builder can go on being used; the registry does not change.
        public func build() -> MessageRegistry {
            MessageRegistry(
                types: types, byObjectName: byObjectName, byDispatch: byDispatch, actions: actions, messageActionIndex: messageActionIndex,
                composerActionIndex: composerActionIndex)
        }

        private static func registered<T: MessageType>(_ type: T.Type, origin: RegisteredType.Origin) -> RegisteredType {
            RegisteredType(objectName: T.objectName, businessID: T.businessID, container: T.container, persistence: T.persistence,
                           isMedia: T.isMediaType, origin: origin, decoder: .native(type))
        }

        /// Registers `entry` after checking its names against the grammar and the names taken, or throws the
        /// first problem, registering nothing. Each name is hashed once: it is inserted at once, and taken out
        /// again only when the entry is refused.
        private mutating func checkAndAdd(_ entry: RegisteredType, file: String?) throws(MissiveError) {
            let name = entry.objectName
            if let problem = NameGrammar.objectNameProblem(name) {
                throw MissiveError(.invalidName, problem, file: file, objectName: name)
            }
            if NameGrammar.isReservedObjectName(name) && entry.origin != .builtIn {
                throw MissiveError(.reservedName, "objectName uses the prefix '\(NameGrammar.reservedPrefix)', reserved for Missive's built-in types",
                                   file: file, objectName: name)
            }
            let index = types.count
            if let owner = byObjectName.updateValue(index, forKey: name) {
                byObjectName[name] = owner
                let what = types[owner].declaredContainer == nil ? "" : " (as a container)"
                throw MissiveError(.duplicateName, "objectName is already registered\(what) by \(types[owner].ownerDescription)",
                                   file: file, objectName: name)
            }
            do throws(MissiveError) {
                try checkAndAddDispatch(entry, index: index, file: file)
            } catch {
                byObjectName[name] = nil
                throw error
            }
            types.append(entry)
        }

        /// The container part of ``checkAndAdd(_:file:)``: registers where the entry's container dispatches to
        /// it, if it has a container.
        private mutating func checkAndAddDispatch(_ entry: RegisteredType, index: Int, file: String?) throws(MissiveError) {
            let name = entry.objectName
            guard let id = entry.businessID, let containerName = entry.container else { return }
            guard let owner = byObjectName[containerName], owner != index, let container = types[owner].declaredContainer else {
                let advice = entry.origin == .application
                    ? "register the MessageContainer before the types under it, even one a plugin also declares"
                    : "a plugin declares the containers its types use"
                throw MissiveError(.invalidName, "container \(containerName) is not registered (\(advice))", file: file, objectName: name)
            }
            let isCustom = container == .custom
            if let problem = NameGrammar.containerValueProblem(id, kind: container.keyKind) {
                throw MissiveError(.invalidName, isCustom ? problem : "in container \(containerName): \(problem)", file: file, objectName: name)
            }
            if isCustom && NameGrammar.isReservedBusinessID(id) {
                throw MissiveError(.reservedName, "businessID '\(id)' uses a prefix reserved for Missive", file: file, objectName: name)
            }
            let key = DispatchKey(container: containerName, value: id)
            if let owner = byDispatch.updateValue(index, forKey: key) {
                byDispatch[key] = owner
                let place = isCustom ? "businessID '\(id)'" : "\(container.key) '\(id)' in container \(containerName)"
                throw MissiveError(.duplicateName, "\(place) is already registered by \(types[owner].objectName) of \(types[owner].ownerDescription)",
                                   file: file, objectName: name)
            }
        }

        /// Makes room for `count` more types and containers, so that registering a discovery's plugins does
        /// not grow the indexes step by step (rehashing every name at each step).
        mutating func reserveCapacity(forMore count: Int) {
            types.reserveCapacity(types.count + count)
            byObjectName.reserveCapacity(byObjectName.count + count)
            byDispatch.reserveCapacity(byDispatch.count + count)
        }

        private mutating func add(_ entry: RegisteredType) {
            byObjectName[entry.objectName] = types.count
            if let id = entry.businessID, let container = entry.container {
                byDispatch[DispatchKey(container: container, value: id)] = types.count
            }
            types.append(entry)
        }
    }
}
