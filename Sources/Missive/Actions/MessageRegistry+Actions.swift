import Foundation
import MissiveCore

/// What performing a message action gave.
public enum ActionResult: Sendable {
    /// The message with the content the action made: the same id and envelope, the members its type does not
    /// know carried over. Send or store it in place of the original.
    case edited(Message)
    /// A URL to open: http or https.
    case url(String)
}

extension MessageRegistry {
    /// Every composer action, in menu order: higher priority first, then by title.
    public var composerActions: [ActionDeclaration] {
        registeredActions.map(\.info).filter { $0.kind == .composer }.sorted(by: ActionDeclaration.menuOrder)
    }

    /// Every message action of every type, by type and then in menu order.
    public var messageActions: [ActionDeclaration] {
        registeredActions.map(\.info).filter { $0.kind == .message }.sorted {
            $0.objectName != $1.objectName ? $0.objectName < $1.objectName : ActionDeclaration.menuOrder($0, $1)
        }
    }

    /// The actions of messages of the type `objectName`, in menu order.
    public func actions(forType objectName: String) -> [ActionDeclaration] {
        registeredActions.map(\.info).filter { $0.kind == .message && $0.objectName == objectName }.sorted(by: ActionDeclaration.menuOrder)
    }

    /// The actions a message offers, in menu order: its type's, none for an unknown message.
    public func actions(for message: Message) -> [ActionDeclaration] {
        guard message.isKnown else { return [] }
        return actions(forType: message.content.objectName)
    }

    /// The function of a listed action, with its call interface prepared: for the benchmarks, which call it
    /// directly and through `ffi_call` to compare the two.
    @_spi(Benchmarks)
    public func function(of action: ActionDeclaration) throws(MissiveError) -> ActionFunction {
        try loadedAction(action).function
    }

    /// The loaded action a listed one stands for, loading its plugin on first use: for the conformance suite.
    package func loadedAction(_ action: ActionDeclaration) throws(MissiveError) -> LoadedAction {
        let index = action.kind == .composer
            ? composerActionIndex[action.id] : messageActionIndex[RegisteredAction.MessageKey(objectName: action.objectName, id: action.id)]
        guard let index, registeredActions[index].info == action else {
            throw MissiveError(.noSuchAction, "the action is not registered", objectName: action.objectName, action: action.id)
        }
        return try registeredActions[index].loaded()
    }

    /// A new message id: a random UUID, in lowercase.
    public static func newMessageID() -> String { UUID().uuidString.lowercased() }

    /// The time now, in milliseconds since the epoch, as an envelope's `sentAt`.
    public static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Performs the action `actionID` of a message's type on the message.
    ///
    /// The arguments are checked against the action's signature before the plugin is called (see
    /// ``ActionDeclaration/parameters``), converted to C values and passed, with the message's handle, through
    /// libffi. An action that yields content gives the message new content: the registry decodes it with the
    /// same type before accepting it and carries over the members of the received content the type does not
    /// know, as ``edit(_:content:)`` does; `message` itself is never changed. An action that yields a URL
    /// gives an http or https URL.
    ///
    /// - Parameters:
    ///   - actionID: the action's id, unique within the message's type.
    ///   - message: the message to act on.
    ///   - arguments: one per value parameter, in order; a view button's `arguments` are the first ones
    ///     (`ActionArgument.list(fromJSONArray:)`), and the host gives the rest.
    /// - Throws: ``MissiveError`` naming the plugin file, the type and the action: `no-such-action` when the
    ///   message's type has no such action (or the message is unknown); `invalid-argument`, with the
    ///   parameter, when an argument does not fit (the plugin is not called) or the plugin refused them;
    ///   `plugin-failure` when the action failed, with its reason; `invalid-result` when it gave content
    ///   its type refuses or a URL that is not http or https; and the loader's reason when a lazily loaded
    ///   plugin or the action cannot be loaded.
    public func perform(_ actionID: String, on message: Message, arguments: [ActionArgument] = []) throws(MissiveError) -> ActionResult {
        let objectName = message.content.objectName
        guard message.isKnown, let index = messageActionIndex[RegisteredAction.MessageKey(objectName: objectName, id: actionID)] else {
            let offered = message.isKnown ? actions(forType: objectName).map(\.id) : []
            let why = message.isKnown
                ? "the type has no action '\(actionID)'" + (offered.isEmpty ? " (it has none)" : "; it has \(offered.joined(separator: ", "))")
                : "the message is unknown to this host (\(message.unknown?.reason.description ?? "")), so it has no actions"
            throw MissiveError(.noSuchAction, why, objectName: objectName, action: actionID)
        }
        let registered = registeredActions[index]
        let info = registered.info
        func notDecodedByIt() -> MissiveError {
            MissiveError(.noSuchAction, "the message was not decoded by the plugin that declares the action", file: info.plugin.path,
                         objectName: objectName, action: actionID)
        }
        let output: ActionFunctionOutput
        if case .isolated(let plugin) = registered.source {
            // Checked here, before anything is sent; the worker converts them to C values.
            _ = try ActionArgumentChecker.values(arguments, for: info)
            guard let content = message.content as? IsolatedContent, content.isolated === plugin else { throw notDecodedByIt() }
            output = try plugin.perform(
                actionID, objectName: objectName, content: content.receivedContent ?? message.envelope.content, arguments: ActionArgument.jsonArray(arguments)
            ).get()
        } else {
            let action = try registered.loaded()
            let values = try ActionArgumentChecker.values(arguments, for: info)
            guard let content = message.content as? PluginContent, let ran = content.run(action, values) else { throw notDecodedByIt() }
            output = ran
        }
        try Self.check(output, of: info)
        let bytes = output.bytes
        switch info.yields {
        case .url:
            guard let url = String(validating: bytes, as: UTF8.self), ViewSanitizer.isAllowedURL(url) else {
                throw MissiveError(.invalidResult, "\(info.id) gave \(Self.preview(bytes)), which is not an http or https URL of at most 2048 bytes",
                                   file: info.plugin.path, objectName: objectName, action: actionID)
            }
            return .url(url)
        case .content:
            do {
                return .edited(try edit(message, content: bytes))
            } catch {
                throw MissiveError(.invalidResult, "\(info.id) gave content that is not valid for \(objectName): \(error.message)",
                                   file: info.plugin.path, objectName: objectName, action: actionID)
            }
        }
    }

    /// Creates a message with the composer action `actionID`: the plugin makes the content from the
    /// arguments, and the registry gives it the envelope (a new id unless one is given, the sender, the
    /// conversation, the time) through ``compose(objectName:content:id:conversationID:senderID:sentAt:parentID:viaContainer:)``,
    /// so the content is decoded by its type before it is accepted.
    ///
    /// - Throws: ``MissiveError`` as ``perform(_:on:arguments:)`` does; `no-such-action` when no composer
    ///   action has the id.
    public func compose(
        action actionID: String, arguments: [ActionArgument] = [], conversationID: String, senderID: String, id: String = MessageRegistry.newMessageID(),
        sentAt: Int64 = MessageRegistry.now(), parentID: String? = nil, viaContainer: Bool = false
    ) throws(MissiveError) -> Message {
        guard let index = composerActionIndex[actionID] else {
            let offered = composerActions.map(\.id)
            throw MissiveError(.noSuchAction, "no composer action has the id '\(actionID)'" + (offered.isEmpty ? " (none is registered)" : "; there are \(offered.joined(separator: ", "))"),
                               action: actionID)
        }
        let registered = registeredActions[index]
        let info = registered.info
        let output: ActionFunctionOutput
        if case .isolated(let plugin) = registered.source {
            _ = try ActionArgumentChecker.values(arguments, for: info)
            output = try plugin.perform(actionID, objectName: info.objectName, content: nil, arguments: ActionArgument.jsonArray(arguments)).get()
        } else {
            let action = try registered.loaded()
            output = action.compose(try ActionArgumentChecker.values(arguments, for: info))
        }
        try Self.check(output, of: info)
        do {
            return try compose(objectName: info.objectName, content: output.bytes, id: id, conversationID: conversationID, senderID: senderID, sentAt: sentAt,
                               parentID: parentID, viaContainer: viaContainer)
        } catch {
            throw MissiveError(.invalidResult, "\(info.id) gave content that is not valid for \(info.objectName): \(error.message)",
                               file: info.plugin.path, objectName: info.objectName, action: actionID)
        }
    }

    /// Throws the error an action's status other than `MISSIVE_OK` stands for.
    private static func check(_ output: ActionFunctionOutput, of action: ActionDeclaration) throws(MissiveError) {
        guard !output.succeeded else { return }
        let because = output.reason.map { ": \($0)" } ?? " (the plugin gave no reason)"
        if output.refusedArguments {
            throw MissiveError(.invalidArgument, "\(action.id) refused the arguments\(because)", file: action.plugin.path, objectName: action.objectName,
                               action: action.id)
        }
        throw MissiveError(.pluginFailure, "\(action.id) failed with \(output.statusDescription)\(because)", file: action.plugin.path,
                           objectName: action.objectName, action: action.id)
    }

    /// A short, printable rendering of what an action wrote.
    private static func preview(_ bytes: [UInt8]) -> String {
        let text = TextHygiene.cut(TextHygiene.line(String(decoding: bytes, as: UTF8.self)), toCodePoints: 80)
        return bytes.isEmpty ? "nothing" : "'\(text)'"
    }
}
