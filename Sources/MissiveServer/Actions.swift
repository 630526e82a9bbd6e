import Foundation
import Hummingbird
import Missive
import MissiveCore
import MissiveStore
import MissiveWire

/// Actions on the server: message actions run on the server's stored copy (a poll's tallies live there) and
/// composer actions that create messages, both through the server's registry, as `missive act` and
/// `missive compose` run them. docs/SERVER.md, "Actions", describes the endpoints.
extension ChatServer {
    /// The actions on each message, one at a time in each server instance (keyed by the instance's event hub, the
    /// conversation named in the path and the message id: a member who names another conversation's message never
    /// waits behind, or delays, that conversation's actions, and gets the same immediate `404` as for an id that was
    /// never stored). The store makes each action atomic (``MessageStore/replace(messageID:with:)``); this lock
    /// only keeps the actions of one instance from each holding a database connection while they wait for the
    /// message's lock.
    private static let actionLocks = KeyedLock<ActionKey>()

    /// A message, in one server instance.
    private struct ActionKey: Hashable, Sendable {
        let server: ObjectIdentifier
        let conversation: String
        let message: String
    }

    /// The action routes: the composer's actions, a message's actions, performing one, composing a message.
    func actionRoutes<Context: MissiveRequestContext>(context: Context.Type) -> RouteCollection<MemberRequestContext<Context>> {
        let routes = RouteCollection(context: MemberRequestContext<Context>.self)
        routes.get("actions") { _, _ in
            JSONResponse.make(ActionList(actions: registry.composerActions.map(RemoteAction.init)))
        }
        routes.get("conversations/:conversation/messages/:message/actions") { _, context in
            try await listActions(
                member: context.member, conversation: try Self.pathParameter(context, "conversation"),
                messageID: try Self.pathParameter(context, "message"))
        }
        routes.post("conversations/:conversation/messages/:message/actions/:action") { request, context in
            try await performAction(
                request, member: context.member, conversation: try Self.pathParameter(context, "conversation"),
                messageID: try Self.pathParameter(context, "message"), actionID: try Self.pathParameter(context, "action"))
        }
        routes.post("conversations/:conversation/compose/:action") { request, context in
            try await composeMessage(
                request, member: context.member, conversation: try Self.pathParameter(context, "conversation"),
                actionID: try Self.pathParameter(context, "action"))
        }
        return routes
    }

    // MARK: Message actions

    /// `GET /api/v1/conversations/{id}/messages/{message}/actions`: the actions the message offers, in menu order;
    /// none for a message the server cannot decode.
    func listActions(member: String, conversation: String, messageID: String) async throws -> Response {
        _ = try await requireMembership(member, conversation)
        let stored = try await storedMessage(messageID, in: conversation, member: member)
        let envelope = try stored.envelope()
        let message = await registry.suspending.decode(envelope)
        return JSONResponse.make(MessageActions(
            id: stored.id, objectName: message.content.objectName, known: message.isKnown,
            actions: registry.actions(for: message).map(RemoteAction.init)))
    }

    /// `POST /api/v1/conversations/{id}/messages/{message}/actions/{action}` `{"arguments": [...]}`: performs the
    /// action on the stored copy; an edit is stored as the message's new version and answered with it, a URL is
    /// answered as it is.
    func performAction(_ request: Request, member: String, conversation: String, messageID: String, actionID: String) async throws -> Response {
        _ = try await requireMembership(member, conversation)
        let body = try await Self.actionBody(request, limit: configuration.limits.maxRequestBytes, timeout: configuration.limits.requestBodyTimeout, allowed: ["arguments"])
        let given = try Self.arguments(in: body)
        let fills = request.headers[.authorization] == nil
        return try await Self.actionLocks.withLock(ActionKey(server: ObjectIdentifier(events), conversation: conversation, message: messageID)) {
            // The action runs on the copy just read, outside any transaction of the store (a plugin's action may take
            // its whole deadline); its edit is then stored only if the message is still that copy. When another
            // action changed it in between (through another server on the same database: this server runs one at a
            // time on each message), the action runs again on the new copy.
            for _ in 0..<Self.actionAttempts {
                let stored = try await storedMessage(messageID, in: conversation, member: member)
                let (message, action, arguments) = try await actionable(stored, actionID: actionID, arguments: given, member: member, fills: fills)
                let result = try await perform(actionID, on: message, arguments: arguments)
                // An action that gives a URL changes nothing.
                if action?.yields == .url {
                    guard case .url(let url) = result else { throw APIError.unexpectedEdit(actionID) }
                    return JSONResponse.make(URLAnswer(url: url))
                }
                guard case .edited(let edited) = result else { throw APIError.unexpectedURL(actionID) }
                try await recordMediaReferences(edited.envelope)
                let replaced: StoredMessage?
                do {
                    replaced = try await store.replace(IncomingMessage(edited), ifUnchangedSince: stored)
                } catch let error as StoreError where error.code == .notFound {
                    throw APIError.noMessage(messageID, conversation)
                }
                if let replaced { return JSONResponse.make(EditedAnswer(message: RemoteMessage(replaced))) }
                // Each lost race is another action's success, so this ends; a short random pause lets the winner's
                // next action by, instead of racing it again at once.
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...20)))
            }
            throw APIError(
                status: .conflict, code: "message-busy",
                message: "\(TextHygiene.line(messageID)) changed \(Self.actionAttempts) times while the action ran; try again")
        }
    }

    /// How many times an action runs on a message that other servers keep changing before it is refused
    /// (`409 message-busy`): far more than a few servers' queues of actions on one message need.
    static let actionAttempts = 100

    /// The stored message decoded, the action it offers under `actionID` (if any), and the arguments after the voter
    /// rule; an error when the server cannot decode the message.
    private func actionable(
        _ stored: StoredMessage, actionID: String, arguments: [ActionArgument], member: String, fills: Bool
    ) async throws -> (Message, ActionDeclaration?, [ActionArgument]) {
        let message = await registry.suspending.decode(try stored.envelope())
        if let unknown = message.unknown { throw APIError.cannotAct(on: message, unknown.reason) }
        let action = registry.actions(for: message).first { $0.id == actionID }
        return (message, action, try Self.applyingVoterRule(arguments, action: action, member: member, fills: fills))
    }

    /// What the registry's action gave, or the API's error for its refusal or failure.
    private func perform(_ actionID: String, on message: Message, arguments: [ActionArgument]) async throws -> ActionResult {
        do {
            return try await registry.suspending.perform(actionID, on: message, arguments: arguments)
        } catch {
            throw APIError(action: error)
        }
    }

    /// The stored message `id` when it is in `conversation`; otherwise it is not found.
    private func storedMessage(_ id: String, in conversation: String, member: String) async throws -> StoredMessage {
        let found = try await store.message(id: id)
        guard let stored = found, stored.conversationID == conversation else {
            noteElsewhere(found, named: "message", by: member, in: conversation)
            throw APIError.noMessage(id, conversation)
        }
        return stored
    }

    /// The voter rule: a member acts as itself. An argument for a `string` parameter named `voter` must be the
    /// member's own id (else 403 `not-yourself`). When `fills` (a request signed in by the session cookie: the web
    /// page, whose buttons carry only the arguments their view gives) and the arguments stop right before such a
    /// parameter, the server appends the member's id; a client with a token gives it itself.
    static func applyingVoterRule(_ arguments: [ActionArgument], action: ActionDeclaration?, member: String, fills: Bool) throws -> [ActionArgument] {
        guard let action else { return arguments }
        var arguments = arguments
        if fills, arguments.count < action.parameters.count, action.parameters[arguments.count].isVoter {
            arguments.append(.string(member))
        }
        for (index, parameter) in action.parameters.enumerated() where parameter.isVoter && index < arguments.count {
            let given: String? =
                switch arguments[index] {
                case .string(let text): text
                case .json(let bytes): if case .string(let text)? = try? JSONValue.parse(bytes) { text } else { nil }
                default: nil
                }
            // A value that is not a string is left to the signature's check, which names it.
            if let given, given != member {
                throw APIError(
                    status: .forbidden, code: "not-yourself",
                    message: "\(TextHygiene.line(action.id)) takes the voter \(TextHygiene.line(given)), but a member acts only as itself (\(member))")
            }
        }
        return arguments
    }

    // MARK: Composer actions

    /// `POST /api/v1/conversations/{id}/compose/{action}` `{"arguments": [...], "id": "...", "parentID": "..."}`:
    /// a message made by the composer action, sent by the member at the server's time, and stored and answered
    /// as a sent message is.
    func composeMessage(_ request: Request, member: String, conversation: String, actionID: String) async throws -> Response {
        let members = try await requireMembership(member, conversation)
        let body = try await Self.actionBody(request, limit: configuration.limits.maxRequestBytes, timeout: configuration.limits.requestBodyTimeout, allowed: ["arguments", "id", "parentID"])
        let arguments = try Self.arguments(in: body)
        let id = try Self.optionalID(body, "id") ?? Self.newMessageID()
        let parentID = try Self.optionalID(body, "parentID")
        let sentAt = Self.serverTime()
        let message: Message
        do throws(MissiveError) {
            message = try await registry.suspending.compose(
                action: actionID, arguments: arguments, conversationID: conversation, senderID: member, id: id, sentAt: sentAt, parentID: parentID)
        } catch {
            throw APIError(action: error)
        }
        return try await storeSent(message, member: member, conversation: conversation, members: members).response
    }

    // MARK: Requests

    /// The members of an action's body, a JSON object with no members but `allowed`; an empty body is an empty
    /// object.
    private static func actionBody(_ request: Request, limit: Int, timeout: Duration, allowed: Set<String>) async throws -> [(key: String, value: JSONValue)] {
        let bytes = try await bodyBytes(request, limit: limit, timeout: timeout)
        guard bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return [] }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw APIError.badRequest("malformed-json", "the body is not JSON: \(error)")
        }
        guard case .object(let members) = value else { throw APIError.badRequest("malformed-request", "the body is a JSON object") }
        if let stranger = members.first(where: { !allowed.contains($0.key) }) {
            let takes = allowed.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            throw APIError.badRequest("malformed-request", "the body has \"\(TextHygiene.line(stranger.key))\"; it takes \(takes)")
        }
        return members
    }

    /// The body's `arguments`, each JSON value kept as written (none when absent), for the action's signature to
    /// check.
    private static func arguments(in body: [(key: String, value: JSONValue)]) throws -> [ActionArgument] {
        switch body.first(where: { $0.key == "arguments" })?.value {
        case nil: return []
        case .array(let values)?: return values.map { .json(Array($0.serialized.utf8)) }
        case .some: throw APIError.badRequest("malformed-request", "\"arguments\" is a JSON array, one value per argument of the action")
        }
    }

    /// The body's `name`, a non-empty string, when it has one.
    private static func optionalID(_ body: [(key: String, value: JSONValue)], _ name: String) throws -> String? {
        switch body.first(where: { $0.key == name })?.value {
        case nil: return nil
        case .string(let id)? where !id.isEmpty: return id
        case .some: throw APIError.badRequest("malformed-request", "\"\(name)\" is a non-empty string")
        }
    }
}

extension APIError {
    /// A message that is not stored in the conversation, the same as one in a conversation the member is not in.
    static func noMessage(_ id: String, _ conversation: String) -> APIError {
        APIError(
            status: .notFound, code: "not-found",
            message: "no message \(TextHygiene.line(id)) in conversation \(TextHygiene.line(conversation)) of yours")
    }

    /// An action on a message the server cannot decode: a type it has no plugin for (`unknown-type`: the server
    /// runs actions only of the types it has plugins for, and takes no edit made by a client instead, which it
    /// could not check), or a stored copy its type's plugin refuses or that no loaded plugin decoded
    /// (`unknown-message`).
    static func cannotAct(on message: Message, _ reason: UnknownMessage.Reason) -> APIError {
        let type = TextHygiene.line(message.envelope.objectName)
        switch reason {
        case .notRegistered, .notDispatched:
            return APIError(
                status: .unprocessableContent, code: "unknown-type",
                message: "the server has no plugin for \(type), so it cannot run this message's actions; "
                    + "the server's operator must install a plugin for \(type) (\(TextHygiene.line(reason.description)))")
        case .decodeFailed, .pluginUnavailable, .pluginCrashed:
            return APIError(
                status: .unprocessableContent, code: "unknown-message",
                message: "the server's copy of \(TextHygiene.line(message.envelope.id)) is unknown to it, so it has no actions: "
                    + TextHygiene.line(reason.description))
        }
    }

    /// An action declared to give a URL that gave an edit instead (the registry follows the declaration, so this
    /// does not happen).
    static func unexpectedEdit(_ action: String) -> APIError {
        APIError(status: .unprocessableContent, code: "invalid-result", message: "\(TextHygiene.line(action)) gave an edit where it declares a URL")
    }

    /// An action declared to give content that gave a URL instead.
    static func unexpectedURL(_ action: String) -> APIError {
        APIError(status: .unprocessableContent, code: "invalid-result", message: "\(TextHygiene.line(action)) gave a URL where it declares content")
    }

    /// The answer to an action the registry refused or that failed, with its reason.
    init(action error: MissiveError) {
        let reason = TextHygiene.line(error.message)
        let action = error.action.map { TextHygiene.line($0) } ?? "the action"
        switch error.code {
        case .noSuchAction:
            self.init(status: .notFound, code: "unknown-action", message: "no action \(action): \(reason)")
        case .invalidArgument:
            self.init(status: .badRequest, code: "invalid-arguments", message: reason)
        case .invalidResult:
            self.init(status: .unprocessableContent, code: "invalid-result", message: reason)
        default:
            // The plugin's failure (`plugin-failure`), or its plugin could not be loaded when first used.
            self.init(status: .unprocessableContent, code: "action-failed", message: "\(action) failed: \(reason)")
        }
    }
}

extension RemoteAction {
    /// An action as a client shows it: a button or a menu item, and the arguments it takes.
    init(_ action: ActionDeclaration) {
        self.init(
            kind: action.kind.rawValue, id: action.id, objectName: action.objectName, title: action.title, icon: action.icon,
            priority: action.priority, yields: action.yields.rawValue, signature: action.signature.description,
            parameters: action.parameters.map { Parameter(name: $0.name, type: $0.type.rawValue) })
    }
}

extension ActionSignature.Parameter {
    /// Whether the parameter names the member acting: a `string` named `voter` (see the voter rule).
    var isVoter: Bool { name == "voter" && type == .string }
}
