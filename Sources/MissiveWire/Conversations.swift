/// An error of the API: the body of every answer that is not a success, with the same `code` and `message` in a
/// WebSocket `error` frame.
public struct WireError: WireType, Hashable {
    public static let wireName = "error"
    /// The code, the message and, for `rate-limited`, the wait.
    public var error: Details

    /// What went wrong.
    public struct Details: Codable, Sendable, Hashable {
        /// The code a program matches on (`not-found`, `rate-limited`, ...; docs/SERVER.md lists them).
        public var code: String
        /// What went wrong, for people.
        public var message: String
        /// Only for `rate-limited`: the seconds to wait, as the HTTP answer's `Retry-After`. Left out otherwise.
        public var retryAfter: Int?

        /// An error's details.
        public init(code: String, message: String, retryAfter: Int? = nil) {
            self.code = code
            self.message = message
            self.retryAfter = retryAfter
        }

        private enum CodingKeys: String, CodingKey { case code, message, retryAfter }

        /// Writes the JSON, without `retryAfter` when there is none.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(code, forKey: .code)
            try container.encode(message, forKey: .message)
            if let retryAfter { try container.encode(retryAfter, forKey: .retryAfter) }
        }
    }

    /// An error with its details.
    public init(_ error: Details) { self.error = error }

    public static let wireExample = WireError(Details(code: "rate-limited", message: "too many requests; try again in 2 s", retryAfter: 2))
}

/// `GET /api/v1/me`: the member the token belongs to.
public struct MemberAnswer: WireType, Hashable {
    public static let wireName = "me"
    /// The member.
    public var member: String

    /// The answer for `member`.
    public init(member: String) { self.member = member }

    public static let wireExample = MemberAnswer(member: "alice")
}

/// One of the member's conversations, as `GET /api/v1/conversations` lists it.
public struct RemoteConversation: WireType, Hashable {
    public static let wireName = "conversation-summary"
    /// The conversation's id.
    public var id: String
    /// The member's unread count in it, as the server counts.
    public var unreadCount: Int
    /// How many messages it keeps.
    public var messageCount: Int
    /// Its newest message; `nil` when it has none yet.
    public var lastMessage: RemoteMessage?

    /// A conversation with every field given.
    public init(id: String, unreadCount: Int, messageCount: Int, lastMessage: RemoteMessage? = nil) {
        self.id = id
        self.unreadCount = unreadCount
        self.messageCount = messageCount
        self.lastMessage = lastMessage
    }

    public static let wireExample = RemoteConversation(id: "team", unreadCount: 1, messageCount: 12, lastMessage: .wireExample)
}

/// `GET /api/v1/conversations`: the member's conversations, those with messages first, newest activity first.
public struct ConversationList: WireType, Hashable {
    public static let wireName = "conversation-list"
    /// The conversations.
    public var conversations: [RemoteConversation]

    /// A list of conversations.
    public init(conversations: [RemoteConversation]) { self.conversations = conversations }

    public static let wireExample = ConversationList(conversations: [.wireExample])
}

/// `POST /api/v1/conversations`'s body: a new conversation's id and its members besides the one who asks
/// (`members` may be left out).
public struct NewConversation: WireType, Hashable {
    public static let wireName = "new-conversation"
    /// The conversation's id.
    public var id: String
    /// The other members.
    public var members: [String]

    /// A conversation to make.
    public init(id: String, members: [String]) {
        self.id = id
        self.members = members
    }

    private enum CodingKeys: String, CodingKey { case id, members }

    /// Reads the JSON; without `members`, the conversation has the asking member alone.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try container.decode(String.self, forKey: .id), members: try container.decodeIfPresent([String].self, forKey: .members) ?? [])
    }

    public static let wireExample = NewConversation(id: "team", members: ["bob"])
}

/// `GET /api/v1/conversations/{id}` (and the answer to making one): its members and the asking member's read mark.
public struct RemoteConversationDetail: WireType, Hashable {
    public static let wireName = "conversation"
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

    public static let wireExample = RemoteConversationDetail(id: "team", members: ["alice", "bob"], readUpTo: "m-42", unreadCount: 0)
}

/// The answer to an upload (`POST /api/v1/conversations/{id}/media`): the members of a media reference
/// (`MS:Image`'s, `MS:File`'s...), and the bytes' SHA-256.
public struct UploadedMedia: WireType, Hashable {
    public static let wireName = "uploaded"
    /// Where members fetch it: `/api/v1/conversations/{id}/media/{sha256}`.
    public var remoteURL: String
    /// Its media type, as the server sniffed it.
    public var mimeType: String
    /// Its size.
    public var sizeBytes: Int64
    /// The file name the uploader gave, if any.
    public var name: String?
    /// The SHA-256 of the bytes, in hexadecimal.
    public var sha256: String

    /// An upload's answer with every field given.
    public init(remoteURL: String, mimeType: String, sizeBytes: Int64, name: String?, sha256: String) {
        self.remoteURL = remoteURL
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
        self.name = name
        self.sha256 = sha256
    }

    public static let wireExample = UploadedMedia(
        remoteURL: "/api/v1/conversations/team/media/9f86d081", mimeType: "image/png", sizeBytes: 20480, name: "cat.png", sha256: "9f86d081")
}
