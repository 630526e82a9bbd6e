import Logging
import MissiveCore

/// The message types a host knows, by objectName and by the value their container dispatches on.
///
/// Build one with ``Builder`` (or
/// ``discover(searchPath:includeBuiltIns:metadataCache:loading:protection:logger:)``) before decoding starts.
/// A registry is immutable afterwards: reading it is a dictionary lookup and safe from any thread.
///
/// Decoding an envelope picks the type in this order:
/// 1. a registered objectName gives that type;
/// 2. a container's objectName (`MS:Custom`, or one a plugin or the host declared) gives the type registered
///    in it under the value of the content's key (`businessID` for `MS:Custom`);
/// 3. anything else gives an ``UnknownMessage``, as does content a type's decoder refuses.
public struct MessageRegistry: Sendable {
    /// The objectName of the built-in container, which dispatches on `businessID`.
    public static let customObjectName = MessageContainer.custom.objectName

    /// The built-in Swift types.
    public static let builtInTypes: [any MessageType.Type] = [
        TextMessage.self, ImageMessage.self, VoiceMessage.self, VideoMessage.self, FileMessage.self, LocationMessage.self,
    ]

    /// Where a container dispatches: its objectName and the value of its key.
    struct DispatchKey: Hashable {
        let container: String
        let value: String
    }

    /// Every registered type and container, in registration order.
    public let types: [RegisteredType]
    private let byObjectName: [String: Int]
    private let byDispatch: [DispatchKey: Int]
    /// Every registered action, in registration order.
    let registeredActions: [RegisteredAction]
    /// The message actions by type and id, and the composer actions by id.
    let messageActionIndex: [RegisteredAction.MessageKey: Int]
    let composerActionIndex: [String: Int]

    /// The containers, `MS:Custom` first when built-ins are included, in registration order.
    public var containers: [MessageContainer] { types.compactMap(\.declaredContainer) }

    /// The type or container registered under an objectName.
    public func type(objectName: String) -> RegisteredType? {
        byObjectName[objectName].map { types[$0] }
    }

    /// The type registered under a business identifier in `MS:Custom`.
    public func type(businessID: String) -> RegisteredType? {
        type(container: Self.customObjectName, value: businessID)
    }

    /// The type registered in a container under a value of its key (an integer in decimal).
    public func type(container: String, value: String) -> RegisteredType? {
        byDispatch[DispatchKey(container: container, value: value)].map { types[$0] }
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
        func unknown(
            _ reason: UnknownMessage.Reason, businessID: String?, refusedBy type: RegisteredType? = nil, registered: RegisteredType? = nil
        ) -> UnknownMessage {
            UnknownMessage(
                objectName: envelope.objectName, businessID: businessID, rawContent: envelope.content,
                senderPersistence: envelope.persistence, fallbackText: envelope.fallbackText,
                senderPushContent: envelope.pushContent, reason: reason, refusingType: type?.objectName,
                registeredPersistence: (type ?? registered)?.persistence)
        }
        guard let index = byObjectName[envelope.objectName] else {
            return unknown(.notRegistered, businessID: JSONScanner.topLevelString("businessID", in: content))
        }
        var type = types[index]
        var businessID = type.businessID
        switch type.decoder {
        case .unknown:
            return unknown(.notRegistered, businessID: JSONScanner.topLevelString("businessID", in: content))
        case .container(let container):
            switch Self.dispatchValue(of: container, in: content) {
            case .problem(let problem):
                return unknown(.notDispatched(container: container.objectName, key: container.key, problem: problem), businessID: nil)
            case .value(let value):
                businessID = value
                guard let target = byDispatch[DispatchKey(container: container.objectName, value: value)] else {
                    return unknown(.notDispatched(container: container.objectName, key: container.key, problem: .notRegistered(value)), businessID: value)
                }
                type = types[target]
            }
        case .native, .plugin, .deferred:
            break
        }
        switch type.decode(content, received: envelope.content) {
        case .success(let decoded): return decoded
        case .failure(let error) where error.code == .quarantined:
            // Nothing looked at the content: the plugin is withheld.
            return unknown(.pluginUnavailable(error.message), businessID: businessID, registered: type)
        case .failure(let error): return unknown(.decodeFailed(error.message), businessID: businessID, refusedBy: type)
        }
    }

    /// What a container's key holds in some content: the value, spelled as types register it, or why
    /// there is none.
    enum Dispatch {
        case value(String)
        case problem(UnknownMessage.DispatchProblem)
    }

    /// The value of a container's key in `content`.
    static func dispatchValue(of container: MessageContainer, in content: UnsafeBufferPointer<UInt8>) -> Dispatch {
        // Keys are matched as bytes: only the value dispatched on becomes a String.
        let valueRange: Range<Int>
        switch JSONScanner.firstMember(container.key, in: content) {
        case .notAnObject: return .problem(.notAnObject)
        case .missing: return .problem(.missingKey)
        case .value(let range): valueRange = range
        }
        let reader = JSONValueReader(content)
        switch container.keyKind {
        case .string:
            guard let text = reader.stringValue(valueRange) else { return .problem(.wrongKind(.string)) }
            return .value(text)
        case .integer:
            // decodeInt64 takes only an optional minus and digits, so a fraction or an exponent is refused.
            guard let number = reader.decodeInt64(valueRange) else { return .problem(.wrongKind(.integer)) }
            return .value(String(number))
        }
    }

    /// A new message of a registered type, made by this host, to send.
    ///
    /// `content` goes through the type's decoder, so that only valid content is sent. The envelope carries
    /// what a host without the type needs: the type's persistence as the sender's flag, the digest as
    /// `fallbackText` and the push text. With `viaContainer`, the message is sent under the type's
    /// container (`MS:Custom` for a type with a plain `businessID`) and the container's key is put at the
    /// front of the content when the content lacks it; otherwise it is sent under the type's objectName.
    ///
    /// - Throws: ``MissiveError`` when `objectName` is not a registered type, the type has no container to
    ///   send through, the content holds another value under the container's key, or the content is invalid.
    public func compose(
        objectName: String, content: [UInt8], id: String, conversationID: String, senderID: String, sentAt: Int64,
        parentID: String? = nil, viaContainer: Bool = false
    ) throws(MissiveError) -> Message {
        guard let type = type(objectName: objectName), type.declaredContainer == nil, objectName != UnknownMessage.objectName else {
            throw MissiveError(.malformedContent, "no message type is registered under this objectName", objectName: objectName)
        }
        try Self.checkNewContent(content, objectName: objectName)
        var bytes = content
        var sendAs = objectName
        if viaContainer {
            guard let value = type.businessID, let name = type.container, let container = self.type(objectName: name)?.declaredContainer else {
                throw MissiveError(.malformedContent, "the type has no businessID, so no container can carry it", objectName: objectName)
            }
            bytes = try ContentMembers.inserting(key: container, value: value, into: bytes, objectName: objectName)
            sendAs = container.objectName
        }
        var envelope = Envelope(
            id: id, conversationID: conversationID, senderID: senderID, sentAt: sentAt, objectName: sendAs, content: bytes, parentID: parentID,
            persistence: type.persistence)
        let message = decode(envelope)
        guard message.isKnown, message.content.objectName == objectName else {
            throw MissiveError(.malformedContent, "the content is not valid for the type: \(message.unknown?.reason.description ?? "it decodes as \(message.content.objectName)")",
                               objectName: objectName)
        }
        envelope.fallbackText = message.digest
        envelope.pushContent = message.content.pushContent
        return Message(envelope: envelope, content: message.content)
    }

    /// A new message made by this host from a value of a built-in or host-registered Swift type; see
    /// ``compose(objectName:content:id:conversationID:senderID:sentAt:parentID:viaContainer:)``.
    public func compose<T: MessageType>(
        _ value: T, id: String, conversationID: String, senderID: String, sentAt: Int64, parentID: String? = nil, viaContainer: Bool = false
    ) throws(MissiveError) -> Message {
        try compose(objectName: T.objectName, content: try TypedContent(value).typeEncodedContent(), id: id, conversationID: conversationID,
                    senderID: senderID, sentAt: sentAt, parentID: parentID, viaContainer: viaContainer)
    }

    /// Gives a received message new content of the same type, made by the type (a plugin's action, an
    /// editor), keeping the members the type does not know.
    ///
    /// The new content is kept as given (spacing included). The members of the received content that
    /// are in neither `newContent` nor the type's own encoding of the received message are carried over after
    /// the new ones, in their received order and spelling (see `ContentMembers`), so that a newer sender's
    /// fields and a container's key survive an edit by an older host. The envelope keeps its objectName, so
    /// content that came in a container goes out in it, and the result must decode, through the registry,
    /// to the same type: an edit cannot change the value a container dispatches on. The envelope's
    /// `fallbackText` and `pushContent` are written again from the new content, as ``compose(objectName:content:id:conversationID:senderID:sentAt:parentID:viaContainer:)``
    /// writes them, so that a host without the type never shows or pushes the old text.
    ///
    /// - Throws: ``MissiveError`` when the message is unknown, its type is no longer registered, or the new
    ///   content is not one JSON object in UTF-8, has a member twice, is invalid for the type, or would
    ///   dispatch to another type.
    public func edit(_ message: Message, content newContent: [UInt8]) throws(MissiveError) -> Message {
        let objectName = message.content.objectName
        guard message.isKnown, type(objectName: objectName) != nil else {
            throw MissiveError(.malformedContent, "only a message of a registered type can be edited", objectName: objectName)
        }
        try Self.checkNewContent(newContent, objectName: objectName)
        var envelope = message.envelope
        envelope.content = try message.contentKeepingUnknownMembers(newContent)
        let edited = decode(envelope)
        guard edited.isKnown, edited.content.objectName == objectName else {
            let why = edited.unknown?.reason.description ?? "it would be decoded as \(edited.content.objectName)"
            throw MissiveError(.malformedContent, "the edited content is not valid for the type: \(why)", objectName: objectName)
        }
        // The envelope's fallbackText and pushContent describe the old content: a host without the type would
        // show and push stale text. They are written from the new content, as compose writes them.
        var refreshed = edited.envelope
        refreshed.fallbackText = edited.digest
        refreshed.pushContent = edited.content.pushContent
        return Message(envelope: refreshed, content: edited.content)
    }

    /// Gives a received message of a built-in or host-registered Swift type a new value; see
    /// ``edit(_:content:)``.
    ///
    /// - Throws: ``MissiveError`` as ``edit(_:content:)`` does, and when the message is not of type `T`.
    public func edit<T: MessageType>(_ message: Message, to value: T) throws(MissiveError) -> Message {
        guard message.content.objectName == T.objectName else {
            throw MissiveError(.malformedContent, "a message of type \(message.content.objectName) cannot be edited into one of type \(T.objectName)",
                               objectName: message.content.objectName)
        }
        return try edit(message, content: try TypedContent(value).typeEncodedContent())
    }

    /// Refuses new content that is not exactly one JSON object in UTF-8, or that has a member twice.
    private static func checkNewContent(_ content: [UInt8], objectName: String) throws(MissiveError) {
        guard content.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) != nil else {
            throw MissiveError(.malformedContent, "the new content is not valid UTF-8", objectName: objectName)
        }
        guard let members = ContentMembers(content) else {
            throw MissiveError(.malformedContent, "the new content is not one JSON object", objectName: objectName)
        }
        var seen: Set<String> = []
        for member in members.members where !seen.insert(member.key).inserted {
            throw MissiveError(.malformedContent, "the new content has the member '\(member.key)' twice", objectName: objectName)
        }
    }

    fileprivate init(
        types: [RegisteredType], byObjectName: [String: Int], byDispatch: [DispatchKey: Int], actions: [RegisteredAction],
        messageActionIndex: [RegisteredAction.MessageKey: Int], composerActionIndex: [String: Int]
    ) {
        self.types = types
        self.byObjectName = byObjectName
        self.byDispatch = byDispatch
        self.registeredActions = actions
        self.messageActionIndex = messageActionIndex
        self.composerActionIndex = composerActionIndex
    }
}

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
        /// the same. A type under a container whose declaration was refused is refused too, and so are the
        /// actions on a refused type.
        @discardableResult
        public mutating func register(_ plugin: LoadedPlugin) -> [MissiveError] {
            let entries = plugin.types.map { pluginType in
                RegisteredType(
                    objectName: pluginType.objectName, businessID: pluginType.businessID, container: pluginType.container,
                    persistence: pluginType.persistence, isMedia: pluginType.isMedia, origin: .plugin(plugin.info), decoder: .plugin(pluginType))
            }
            let refused = register(containers: plugin.containers, types: entries, origin: .plugin(plugin.info), file: plugin.info.path)
            return refused + plugin.actionRejections
                + register(actions: plugin.pluginActions.map { RegisteredAction(info: $0.info, source: .loaded($0)) }, plugin: plugin.info)
        }

        /// Registers every container, type and action a not-yet-loaded plugin's metadata declares; see
        /// ``PluginLoading/lazy``.
        mutating func register(_ plugin: DeferredPlugin) -> [MissiveError] {
            var refused: [MissiveError] = []
            var entries: [RegisteredType] = []
            entries.reserveCapacity(plugin.metadata.types.count)
            let origin = RegisteredType.Origin.plugin(plugin.info)
            for type in plugin.metadata.types {
                guard let persistence = type.persistence else {
                    refused.append(MissiveError(.invalidMetadata, "persistence \(type.persistenceValue) is not one of 0, 1, 3 and 16",
                                                file: plugin.path, objectName: type.objectName))
                    continue
                }
                entries.append(
                    RegisteredType(
                        objectName: type.objectName, businessID: type.businessID, container: type.container, persistence: persistence,
                        isMedia: type.isMedia, origin: origin, decoder: .deferred(plugin)))
            }
            refused += register(containers: plugin.metadata.containers, types: entries, origin: origin, file: plugin.path)
            var actions: [RegisteredAction] = []
            for entry in plugin.metadata.actions {
                do {
                    actions.append(RegisteredAction(info: try MessageAction(entry, plugin: plugin.info), source: .deferred(plugin)))
                } catch {
                    refused.append(error)
                }
            }
            return refused + register(actions: actions, plugin: plugin.info)
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

        private mutating func register(
            containers: [MessageContainer], types entries: [RegisteredType], origin: RegisteredType.Origin, file: String
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
            for entry in entries {
                if let container = entry.container, let error = refusedContainers[container] {
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

/// What ``MessageRegistry/discover(searchPath:includeBuiltIns:metadataCache:loading:protection:logger:)`` found: the
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
        for (file, identity) in files {
            let metadata = Result { () throws(MissiveError) -> PluginMetadata in
                guard let metadataCache else { return try PluginMetadata.read(fromFile: file, knownSize: identity.size) }
                let (cached, fromCache) = try metadataCache.lookUp(file, identity: identity)
                logger?.trace(fromCache ? "metadata from the cache" : "metadata read from the file", metadata: ["missive.file": "\(file)"])
                return cached
            }
            found.append((file, identity, metadata))
        }
        reserveCapacity(forMore: found.reduce(0) { count, file in
            guard case .success(let metadata) = file.metadata else { return count }
            return count + metadata.types.count + metadata.containers.count
        })
        let decisions = PluginGate(protection: protection, metadataCache: metadataCache, logger: logger).decide(found)
        for (file, identity, result) in found {
            do throws(MissiveError) {
                let metadata = try result.get()
                if let refusal = decisions.refused[file] { throw refusal }
                if let refusal = decisions.withheld[file] {
                    register(DeferredPlugin(path: file, metadata: metadata, refusal: refusal)).forEach(refuse)
                    throw refusal
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
        let discovery = PluginDiscovery(plugins: plugins, deferredPlugins: deferred, rejections: rejections)
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
        return DiscoveryResult(
            registry: builder.build(), plugins: discovery.plugins, deferredPlugins: discovery.deferredPlugins, rejections: discovery.rejections)
    }
}
