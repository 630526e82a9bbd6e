import MissiveCore

/// What went wrong talking to a server: the API's own error (status, code and message, as docs/SERVER.md lists
/// them), a server that cannot be reached, or an answer the client cannot read.
public struct ServerClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status of the answer; `nil` when there was no answer.
    public var status: Int?
    /// The API's error code (`not-found`, `unknown-type`, ...), `unreachable`, or `malformed-answer`.
    public var code: String
    /// The message: the server's words for an API error, as they came.
    public var message: String

    /// An error with every field given.
    public init(status: Int?, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// A server that did not answer, with the reason.
    static func unreachable(_ reason: String) -> ServerClientError {
        ServerClientError(status: nil, code: "unreachable", message: reason)
    }

    /// An answer that is not what the API promises.
    static func malformedAnswer(_ reason: String) -> ServerClientError {
        ServerClientError(status: nil, code: "malformed-answer", message: reason)
    }

    /// `message (code, status)`.
    public var description: String {
        "\(message) (\(code)\(status.map { ", \($0)" } ?? ""))"
    }
}

/// A message as the server keeps it: the fields a client needs, and the stored envelope byte for byte.
public struct RemoteMessage: Sendable, Hashable {
    /// The message's id.
    public var id: String
    /// Its conversation.
    public var conversationID: String
    /// Who sent it (the server vouches for it).
    public var senderID: String
    /// The server's time of sending, in milliseconds since 1970.
    public var sentAt: Int64
    /// The envelope's objectName.
    public var objectName: String
    /// The envelope as the server stored it, byte for byte: what a client stores and decodes.
    public var envelope: [UInt8]

    /// A message with every field given.
    public init(id: String, conversationID: String, senderID: String, sentAt: Int64, objectName: String, envelope: [UInt8]) {
        self.id = id
        self.conversationID = conversationID
        self.senderID = senderID
        self.sentAt = sentAt
        self.objectName = objectName
        self.envelope = envelope
    }

    /// Reads the API's `stored-message` JSON.
    init(_ parts: JSONParts) throws(ServerClientError) {
        guard let envelope = parts.raw("envelope"), envelope.first == UInt8(ascii: "{") else {
            throw ServerClientError.malformedAnswer("a message has no envelope object")
        }
        self.init(
            id: try parts.requiredString("id", in: "a message"), conversationID: try parts.requiredString("conversationID", in: "a message"),
            senderID: try parts.requiredString("senderID", in: "a message"), sentAt: parts.integer("sentAt") ?? 0,
            objectName: try parts.requiredString("objectName", in: "a message"), envelope: envelope)
    }
}

/// One of the member's conversations, as the server lists it.
public struct RemoteConversation: Sendable, Hashable {
    /// The conversation's id.
    public var id: String
    /// The member's unread count in it, as the server counts.
    public var unreadCount: Int
    /// How many messages it keeps.
    public var messageCount: Int

    /// A conversation with every field given.
    public init(id: String, unreadCount: Int, messageCount: Int) {
        self.id = id
        self.unreadCount = unreadCount
        self.messageCount = messageCount
    }
}

/// A conversation's members and the asking member's read mark.
public struct RemoteConversationDetail: Sendable, Hashable {
    /// The conversation's id.
    public var id: String
    /// Its members, the asking one included.
    public var members: [String]
    /// The newest message the member has read, or `nil`.
    public var readUpTo: String?
    /// The member's unread count.
    public var unreadCount: Int

    /// A conversation with every field given.
    public init(id: String, members: [String], readUpTo: String?, unreadCount: Int) {
        self.id = id
        self.members = members
        self.readUpTo = readUpTo
        self.unreadCount = unreadCount
    }
}

/// What the server did with a message sent to it.
public enum SendOutcome: Sendable, Hashable {
    /// It was stored (or had been, for a retry): the stored message.
    case stored(RemoteMessage)
    /// It was handed to the members without being kept (a `none` or `status` message).
    case delivered
}

/// What a message action performed by the server gave.
public enum RemoteActionResult: Sendable, Hashable {
    /// The message's new version, stored.
    case edited(RemoteMessage)
    /// A URL to open; nothing changed.
    case url(String)
}

/// One type a client can draw, as it reports it: the type's objectName and the version of what registers it
/// (the plugin's version, or Missive's for a built-in type).
public struct ReportedType: Sendable, Hashable {
    /// The type's objectName.
    public var objectName: String
    /// The version of the plugin that registers it (Missive's version for a built-in type).
    public var version: String

    /// A type with its version.
    public init(objectName: String, version: String) {
        self.objectName = objectName
        self.version = version
    }
}

/// Whether one other member of a conversation can draw a type, as its last report says.
public struct MemberDrawing: Sendable, Hashable {
    /// The member.
    public var member: String
    /// Whether the member ever reported its types.
    public var reported: Bool
    /// Whether it can draw the type: `nil` when it never reported.
    public var draws: Bool?
    /// The version it reported for the type, when it draws it.
    public var version: String?

    /// A member's answer with every field given.
    public init(member: String, reported: Bool, draws: Bool?, version: String?) {
        self.member = member
        self.reported = reported
        self.draws = draws
        self.version = version
    }
}

/// A composer action or a message action, as the server offers it.
public struct RemoteAction: Sendable, Hashable {
    /// The action's id, such as `vote`.
    public var id: String
    /// The type it acts on, or creates.
    public var objectName: String
    /// What a menu shows.
    public var title: String
    /// `content` or `url`.
    public var yields: String
    /// Its parameters, each as `type name`, in order.
    public var parameters: [String]

    /// An action with every field given.
    public init(id: String, objectName: String, title: String, yields: String, parameters: [String]) {
        self.id = id
        self.objectName = objectName
        self.title = title
        self.yields = yields
        self.parameters = parameters
    }

    /// Reads the API's ACTION JSON.
    init(_ parts: JSONParts) throws(ServerClientError) {
        var parameters: [String] = []
        for parameter in try parts.objects("parameters") {
            parameters.append("\(parameter.string("type") ?? "?") \(parameter.string("name") ?? "?")")
        }
        self.init(
            id: try parts.requiredString("id", in: "an action"), objectName: parts.string("objectName") ?? "",
            title: parts.string("title") ?? "", yields: parts.string("yields") ?? "content", parameters: parameters)
    }
}
