import MissiveCore

/// A composer action or a message action, as the server offers it: what a button or a menu item shows, and the
/// arguments it takes.
public struct RemoteAction: WireType, Hashable {
    public static let wireName = "action"
    /// `message` or `composer`.
    public var kind: String
    /// The action's id, such as `vote`.
    public var id: String
    /// The type it acts on, or creates.
    public var objectName: String
    /// What a menu shows.
    public var title: String
    /// The icon's name, as the plugin gives it.
    public var icon: String
    /// Its place in a menu: higher first.
    public var priority: Int32
    /// `content` or `url`.
    public var yields: String
    /// Its C signature, as the plugin declares it.
    public var signature: String
    /// The value parameters, one argument each, in order.
    public var parameters: [Parameter]

    /// A parameter a caller gives an argument for.
    public struct Parameter: Codable, Sendable, Hashable {
        /// Its name, such as `option`.
        public var name: String
        /// `int32`, `int64`, `double`, `bool` or `string`.
        public var type: String

        /// A parameter with its name and type.
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    /// An action with every field given.
    public init(
        kind: String, id: String, objectName: String, title: String, icon: String, priority: Int32, yields: String, signature: String,
        parameters: [Parameter]
    ) {
        self.kind = kind
        self.id = id
        self.objectName = objectName
        self.title = title
        self.icon = icon
        self.priority = priority
        self.yields = yields
        self.signature = signature
        self.parameters = parameters
    }

    public static let wireExample = RemoteAction(
        kind: "message", id: "vote", objectName: "demo:poll", title: "Vote", icon: "checkmark", priority: 10, yields: "content",
        signature: "int32_t vote(const missive_content *, int32_t option, const char *voter)", parameters: [Parameter(name: "option", type: "int32")])
}

/// `GET /api/v1/actions`: the composer actions, in menu order.
public struct ActionList: WireType, Hashable {
    public static let wireName = "action-list"
    /// The actions.
    public var actions: [RemoteAction]

    /// A list of actions.
    public init(actions: [RemoteAction]) { self.actions = actions }

    public static let wireExample = ActionList(actions: [.wireExample])
}

/// `GET /api/v1/conversations/{id}/messages/{message}/actions`: the message's type and its actions, in menu order
/// (none when the server cannot decode it).
public struct MessageActions: WireType, Hashable {
    public static let wireName = "message-actions"
    /// The message's id.
    public var id: String
    /// Its type.
    public var objectName: String
    /// Whether the server decodes it.
    public var known: Bool
    /// Its actions.
    public var actions: [RemoteAction]

    /// A message's actions.
    public init(id: String, objectName: String, known: Bool, actions: [RemoteAction]) {
        self.id = id
        self.objectName = objectName
        self.known = known
        self.actions = actions
    }

    public static let wireExample = MessageActions(id: "m-42", objectName: "demo:poll", known: true, actions: [.wireExample])
}

/// The body of `POST …/messages/{m}/actions/{a}`: one JSON value per parameter of the action's signature.
public struct ActionRequest: WireType, Hashable {
    public static let wireName = "action-request"
    /// The arguments, in order.
    public var arguments: [ActionArgument]

    /// A request with its arguments.
    public init(arguments: [ActionArgument]) { self.arguments = arguments }

    private enum CodingKeys: String, CodingKey { case arguments }

    /// Reads the JSON; each argument is kept as written, for the action's signature to check.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        arguments = try container.decodeIfPresent([RawJSON].self, forKey: .arguments)?.map { .json($0.bytes) } ?? []
    }

    /// Writes the JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(arguments.map { RawJSON(Array($0.jsonText.utf8)) }, forKey: .arguments)
    }

    public static let wireExample = ActionRequest(arguments: [1])
}

/// The body of `POST /api/v1/conversations/{id}/compose/{action}`: the arguments, and optionally the new
/// message's id and the message it replies to.
public struct ComposeRequest: WireType, Hashable {
    public static let wireName = "compose-request"
    /// The arguments, in order.
    public var arguments: [ActionArgument]
    /// The new message's id; the server gives one when `nil`.
    public var id: String?
    /// The message it replies to.
    public var parentID: String?

    /// A request with its arguments.
    public init(arguments: [ActionArgument], id: String? = nil, parentID: String? = nil) {
        self.arguments = arguments
        self.id = id
        self.parentID = parentID
    }

    private enum CodingKeys: String, CodingKey { case arguments, id, parentID }

    /// Reads the JSON; each argument is kept as written.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        arguments = try container.decodeIfPresent([RawJSON].self, forKey: .arguments)?.map { .json($0.bytes) } ?? []
        id = try container.decodeIfPresent(String.self, forKey: .id)
        parentID = try container.decodeIfPresent(String.self, forKey: .parentID)
    }

    /// Writes the JSON, leaving out the members that are `nil`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(arguments.map { RawJSON(Array($0.jsonText.utf8)) }, forKey: .arguments)
        if let id { try container.encode(id, forKey: .id) }
        if let parentID { try container.encode(parentID, forKey: .parentID) }
    }

    public static let wireExample = ComposeRequest(arguments: ["Lunch?", "Pizza\nSushi"], id: "m-44", parentID: "m-42")
}

/// The answer to a message action that edited the message: its new version, as stored.
public struct EditedAnswer: WireType, Hashable {
    public static let wireName = "edited-answer"
    /// Always `edited`.
    public var result = "edited"
    /// The message's new version.
    public var message: RemoteMessage

    /// The answer for `message`.
    public init(message: RemoteMessage) { self.message = message }

    public static let wireExample = EditedAnswer(message: .wireExample)
}

/// The answer to a message action that gave a URL to open; nothing changed.
public struct URLAnswer: WireType, Hashable {
    public static let wireName = "url-answer"
    /// Always `url`.
    public var result = "url"
    /// The URL (http or https).
    public var url: String

    /// The answer for `url`.
    public init(url: String) { self.url = url }

    public static let wireExample = URLAnswer(url: "https://example.com/orders/A-1042")
}
