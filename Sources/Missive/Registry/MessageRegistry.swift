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

    /// The plugins refused after they were registered, one error per plugin file: those whose first call of a
    /// kind changed the state of the process (``MissiveError/Code/changedProcessState``; see "What a plugin does
    /// to the process" in docs/PROTECTION.md). Their messages decode to ``UnknownMessage``s with this reason
    /// from then on. Discovery cannot report these, since they happen later: a host logs them, or shows them to
    /// an operator, when it has decoded what it had to.
    public var refusalsAfterRegistration: [MissiveError] {
        var files = Set<String>()
        var refusals: [MissiveError] = []
        for type in types {
            let pluginType: PluginType?
            switch type.decoder {
            case .plugin(let loaded): pluginType = loaded
            case .deferred(let plugin): pluginType = plugin.loadedType(type.objectName)
            default: pluginType = nil
            }
            guard let refusal = pluginType?.processStateRefusal, files.insert(refusal.file ?? type.objectName).inserted else { continue }
            refusals.append(refusal)
        }
        return refusals
    }

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

    /// Decodes many envelopes' contents: what decoding each one alone gives, in order. The messages of a
    /// plugin that runs isolated (``PluginIsolation``) cross to its worker in one batch, which costs a fraction of a
    /// crossing per message; a crash or hang in the batch costs only the message that caused it.
    ///
    /// - Parameters:
    ///   - envelopes: the envelopes, in any mix of types.
    ///   - views: whether the isolated plugins' views come back with the batch, for a host that draws every message
    ///     (otherwise a view crosses when ``MessageContent/describedView()`` is first asked).
    public func decode(_ envelopes: [Envelope], views: Bool = false) -> [Message] {
        var contents = [(any MessageContent)?](repeating: nil, count: envelopes.count)
        var batches: [ObjectIdentifier: (plugin: IsolatedPlugin, indices: [Int], types: [RegisteredType], businessIDs: [String?])] = [:]
        for (index, envelope) in envelopes.enumerated() {
            let resolution = envelope.content.withUnsafeBufferPointer { resolve(envelope, $0) }
            switch resolution {
            case .content(let content):
                contents[index] = content
            case .type(let type, let businessID):
                if case .isolated(let plugin) = type.decoder {
                    batches[ObjectIdentifier(plugin), default: (plugin, [], [], [])].indices.append(index)
                    batches[ObjectIdentifier(plugin)]!.types.append(type)
                    batches[ObjectIdentifier(plugin)]!.businessIDs.append(businessID)
                } else {
                    contents[index] = envelope.content.withUnsafeBufferPointer { finish(envelope, type, businessID, type.decode($0, received: envelope.content)) }
                }
            }
        }
        for batch in batches.values {
            let answers = batch.plugin.decode(
                zip(batch.indices, batch.types).map { ($1.objectName, envelopes[$0].content) }, flags: views ? [.view] : [])
            for (position, index) in batch.indices.enumerated() {
                let type = batch.types[position]
                let result = type.content(from: position < answers.count ? answers[position] : nil, plugin: batch.plugin, received: envelopes[index].content)
                contents[index] = finish(envelopes[index], type, batch.businessIDs[position], result)
            }
        }
        return zip(envelopes, contents).map { Message(envelope: $0, content: $1!) }
    }

    /// The isolated plugin whose worker decodes `envelope` (and so may make the call wait for it), if one does.
    func workerPlugin(decoding envelope: Envelope) -> IsolatedPlugin? {
        guard case .type(let type, _) = envelope.content.withUnsafeBufferPointer({ resolve(envelope, $0) }) else { return nil }
        if case .isolated(let plugin) = type.decoder { return plugin }
        return nil
    }

    /// Where an envelope's content goes: already decided (an unknown message), or a type's decoder.
    private enum Resolution {
        case content(any MessageContent)
        case type(RegisteredType, businessID: String?)
    }

    private func decodeContent(of envelope: Envelope, _ content: UnsafeBufferPointer<UInt8>) -> any MessageContent {
        switch resolve(envelope, content) {
        case .content(let decided): return decided
        case .type(let type, let businessID): return finish(envelope, type, businessID, type.decode(content, received: envelope.content))
        }
    }

    /// The unknown message for an envelope's content.
    private func unknown(
        _ envelope: Envelope, _ reason: UnknownMessage.Reason, businessID: String?, refusedBy type: RegisteredType? = nil, registered: RegisteredType? = nil
    ) -> UnknownMessage {
        UnknownMessage(
            objectName: envelope.objectName, businessID: businessID, rawContent: envelope.content,
            senderPersistence: envelope.persistence, fallbackText: envelope.fallbackText,
            senderPushContent: envelope.pushContent, reason: reason, refusingType: type?.objectName,
            registeredPersistence: (type ?? registered)?.persistence)
    }

    /// The failures that say the plugin could not be loaded (on first use, or in a worker that did not start), not
    /// that it refused the content: the message waits for the plugin as ``UnknownMessage/Reason/pluginUnavailable(_:)``
    /// and is not a refusal of what the sender sent.
    private static let codesOfAPluginThatDidNotStart: Set<MissiveError.Code> = [
        .ioFailure, .notAPlugin, .wrongMachine, .missingMetadata, .invalidMetadata, .unsupportedABI, .incompatibleToolchain,
        .loadFailed, .missingEntry, .invalidDescriptor, .metadataMismatch, .insecureFile, .unsignedPlugin,
        .malformedSignature, .badSignature, .modifiedAfterSigning, .untrustedKey, .invalidKey,
    ]

    /// What a type's decoder gave, as content: an unknown message with the reason when it failed.
    private func finish(_ envelope: Envelope, _ type: RegisteredType, _ businessID: String?, _ result: Result<any MessageContent, MissiveError>) -> any MessageContent {
        switch result {
        case .success(let decoded): return decoded
        case .failure(let error) where error.code == .quarantined || Self.codesOfAPluginThatDidNotStart.contains(error.code):
            // Nothing looked at the content: the plugin is withheld, or it (or its worker) did not load.
            return unknown(envelope, .pluginUnavailable(error.message), businessID: businessID, registered: type)
        case .failure(let error) where error.code == .pluginCrashed:
            return unknown(envelope, .pluginCrashed(error.message), businessID: businessID, registered: type)
        case .failure(let error): return unknown(envelope, .decodeFailed(error.message), businessID: businessID, refusedBy: type)
        }
    }

    /// The type an envelope's content is for, or the unknown message it is when no type takes it.
    private func resolve(_ envelope: Envelope, _ content: UnsafeBufferPointer<UInt8>) -> Resolution {
        func unknown(_ reason: UnknownMessage.Reason, businessID: String?) -> Resolution {
            .content(self.unknown(envelope, reason, businessID: businessID))
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
        case .native, .plugin, .deferred, .isolated:
            break
        }
        return .type(type, businessID: businessID)
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

    /// The registry a ``Builder`` built, with its indexes.
    init(
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
