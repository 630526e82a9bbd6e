import MissiveCore

/// A message as the server keeps it (MESSAGE in docs/SERVER.md, `stored-message` in docs/CLI-JSON.md): the fields
/// the store keeps, and the envelope as it was received, byte for byte.
public struct RemoteMessage: WireType, Hashable {
    public static let wireName = "message"

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
    /// The TUIKit-style business id its type registers, if any.
    public var businessID: String?
    /// Whether the store decoded it with a plugin (or a built-in type) when it stored it.
    public var known: Bool
    /// Its one-line conversation digest.
    public var digest: String
    /// Its persistence flag, written `{"name": "counted", "value": 3}`.
    public var persistence: Persistence
    /// Whether it counts as unread for its members other than the sender.
    public var countsAsUnread: Bool
    /// The words search finds it by.
    public var searchableWords: [String]
    /// The message it replies to, if any.
    public var parentID: String?
    /// The first message of its thread, if it is a reply.
    public var threadRootID: String?
    /// How many replies it has.
    public var replyCount: Int
    /// Why it is unknown, when it is.
    public var reason: String?
    /// The envelope as the server stored it, byte for byte: what a client stores and decodes.
    public var envelope: [UInt8]

    /// A message with every field given.
    public init(
        id: String, conversationID: String, senderID: String, sentAt: Int64, objectName: String, businessID: String? = nil, known: Bool = true,
        digest: String = "", persistence: Persistence = .counted, countsAsUnread: Bool = true, searchableWords: [String] = [],
        parentID: String? = nil, threadRootID: String? = nil, replyCount: Int = 0, reason: String? = nil, envelope: [UInt8]
    ) {
        self.id = id
        self.conversationID = conversationID
        self.senderID = senderID
        self.sentAt = sentAt
        self.objectName = objectName
        self.businessID = businessID
        self.known = known
        self.digest = digest
        self.persistence = persistence
        self.countsAsUnread = countsAsUnread
        self.searchableWords = searchableWords
        self.parentID = parentID
        self.threadRootID = threadRootID
        self.replyCount = replyCount
        self.reason = reason
        self.envelope = envelope
    }

    private enum CodingKeys: String, CodingKey {
        case id, conversationID, senderID, sentAt, objectName, businessID, known, digest, persistence, countsAsUnread, searchableWords, parentID,
            threadRootID, replyCount, reason, envelope
    }

    /// Reads the JSON; `envelope` must be an object, kept as its bytes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let envelope = try container.decodeEnvelope(forKey: .envelope)
        self.init(
            id: try container.decode(String.self, forKey: .id), conversationID: try container.decode(String.self, forKey: .conversationID),
            senderID: try container.decode(String.self, forKey: .senderID), sentAt: try container.decode(Int64.self, forKey: .sentAt),
            objectName: try container.decode(String.self, forKey: .objectName),
            businessID: try container.decodeIfPresent(String.self, forKey: .businessID),
            known: try container.decodeIfPresent(Bool.self, forKey: .known) ?? true,
            digest: try container.decodeIfPresent(String.self, forKey: .digest) ?? "",
            persistence: try container.decodeIfPresent(WirePersistence.self, forKey: .persistence)?.flag ?? .counted,
            countsAsUnread: try container.decodeIfPresent(Bool.self, forKey: .countsAsUnread) ?? true,
            searchableWords: try container.decodeIfPresent([String].self, forKey: .searchableWords) ?? [],
            parentID: try container.decodeIfPresent(String.self, forKey: .parentID),
            threadRootID: try container.decodeIfPresent(String.self, forKey: .threadRootID),
            replyCount: try container.decodeIfPresent(Int.self, forKey: .replyCount) ?? 0,
            reason: try container.decodeIfPresent(String.self, forKey: .reason), envelope: envelope)
    }

    /// Writes the JSON, the envelope spliced in unchanged (only the project's JSON writer can).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(conversationID, forKey: .conversationID)
        try container.encode(senderID, forKey: .senderID)
        try container.encode(sentAt, forKey: .sentAt)
        try container.encode(objectName, forKey: .objectName)
        try container.encode(businessID, forKey: .businessID)
        try container.encode(known, forKey: .known)
        try container.encode(digest, forKey: .digest)
        try container.encode(WirePersistence(persistence), forKey: .persistence)
        try container.encode(countsAsUnread, forKey: .countsAsUnread)
        try container.encode(searchableWords, forKey: .searchableWords)
        try container.encode(parentID, forKey: .parentID)
        try container.encode(threadRootID, forKey: .threadRootID)
        try container.encode(replyCount, forKey: .replyCount)
        try container.encode(reason, forKey: .reason)
        try container.encode(RawJSON(envelope), forKey: .envelope)
    }

    public static let wireExample = RemoteMessage(
        id: "m-42", conversationID: "team", senderID: "alice", sentAt: 1_767_225_600_000, objectName: "demo:poll", businessID: "poll",
        known: true, digest: "[Poll] Lunch?", persistence: .counted, countsAsUnread: true, searchableWords: ["lunch"], parentID: "m-41",
        threadRootID: "m-40", replyCount: 2, reason: "a reason when it is unknown", envelope: Array(#"{"objectName":"demo:poll","content":{}}"#.utf8))
}

/// A persistence flag as JSON: `{"name": "counted", "value": 3}`.
struct WirePersistence: Codable, Sendable {
    var name: String
    var value: UInt32

    init(_ flag: Persistence) {
        name = flag.name
        value = flag.rawValue
    }

    /// The flag its `value` numbers (the name is for people).
    var flag: Persistence {
        get throws {
            guard let flag = Persistence(rawValue: value) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(value) is not a persistence flag (0, 1, 3 or 16)"))
            }
            return flag
        }
    }
}

extension KeyedDecodingContainer {
    /// The envelope under `key`, which must be a JSON object: its bytes as they came.
    func decodeEnvelope(forKey key: Key) throws -> [UInt8] {
        let envelope = try decode(RawJSON.self, forKey: key).bytes
        guard envelope.first == UInt8(ascii: "{") else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "the envelope is not a JSON object")
        }
        return envelope
    }

    /// The persistence flag under `key`, written `{"name", "value"}`.
    func decodePersistence(forKey key: Key) throws -> Persistence {
        try decode(WirePersistence.self, forKey: key).flag
    }
}

/// A conversation's messages, oldest first (`GET /api/v1/conversations/{id}/messages`).
public struct MessageList: WireType, Hashable {
    public static let wireName = "message-list"
    /// The messages of the page.
    public var messages: [RemoteMessage]

    /// A page of messages.
    public init(messages: [RemoteMessage]) { self.messages = messages }

    public static let wireExample = MessageList(messages: [.wireExample])
}

/// The answer to a message sent and stored (`201`, or `200` for a retry); also the `result` of a `sent` frame.
public struct StoredAnswer: WireType, Hashable {
    public static let wireName = "stored-answer"
    /// Always `true`.
    public var stored = true
    /// The stored message.
    public var message: RemoteMessage

    /// The answer for `message`.
    public init(message: RemoteMessage) { self.message = message }

    public static let wireExample = StoredAnswer(message: .wireExample)
}

/// The answer to a message sent whose flag keeps it out of the store (`202`): `none` or `status`.
public struct NotStoredAnswer: WireType, Hashable {
    public static let wireName = "not-stored-answer"
    /// The message's id.
    public var id: String
    /// Always `false`.
    public var stored = false
    /// Its flag.
    public var persistence: Persistence

    /// The answer for the message `id` with its flag.
    public init(id: String, persistence: Persistence) {
        self.id = id
        self.persistence = persistence
    }

    private enum CodingKeys: String, CodingKey { case id, stored, persistence }

    /// Reads the JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try container.decode(String.self, forKey: .id), persistence: try container.decodePersistence(forKey: .persistence))
    }

    /// Writes the JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(stored, forKey: .stored)
        try container.encode(WirePersistence(persistence), forKey: .persistence)
    }

    public static let wireExample = NotStoredAnswer(id: "m-43", persistence: .status)
}

/// `POST /api/v1/conversations/{id}/read`'s body: the newest message the member has read.
public struct ReadMarkRequest: WireType, Hashable {
    public static let wireName = "read-mark-request"
    /// The message; it and every message before it are read.
    public var upTo: String

    /// A request to mark up to `upTo`.
    public init(upTo: String) { self.upTo = upTo }

    public static let wireExample = ReadMarkRequest(upTo: "m-42")
}

/// A member's read mark and unread count in a conversation: the answer to a read mark, and a `marked` frame's result.
public struct RemoteReadState: WireType, Hashable {
    public static let wireName = "read-state"
    /// The conversation.
    public var conversation: String
    /// The newest message read, or `nil`.
    public var readUpTo: String?
    /// The messages left unread.
    public var unreadCount: Int

    /// A read state with every field given.
    public init(conversation: String, readUpTo: String?, unreadCount: Int) {
        self.conversation = conversation
        self.readUpTo = readUpTo
        self.unreadCount = unreadCount
    }

    public static let wireExample = RemoteReadState(conversation: "team", readUpTo: "m-42", unreadCount: 0)
}

/// `GET /api/v1/search`: the member's messages that match, best first (newest first on a SQLite store, whose ranking
/// would weigh words by conversations the member is not in).
public struct SearchResults: WireType, Hashable {
    public static let wireName = "search-results"
    /// The matches.
    public var hits: [SearchHit]

    /// Results with their hits.
    public init(hits: [SearchHit]) { self.hits = hits }

    public static let wireExample = SearchResults(hits: [.wireExample])
}

/// One match of a search.
public struct SearchHit: WireType, Hashable {
    public static let wireName = "search-hit"
    /// The matching words in their context, as the store marks them.
    public var snippet: String
    /// The message.
    public var message: RemoteMessage

    /// A hit with its snippet and message.
    public init(snippet: String, message: RemoteMessage) {
        self.snippet = snippet
        self.message = message
    }

    public static let wireExample = SearchHit(snippet: "[lunch]?", message: .wireExample)
}
