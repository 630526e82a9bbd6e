import MissiveCore

// The frames of the event stream (`GET /api/v1/events`, a WebSocket): one JSON object per text frame, each with a
// `type`. The changes of the store's feed carry their `position`.

/// The `type` of any frame, read before the rest.
public struct FrameHeader: Codable, Sendable, Hashable {
    /// The frame's type.
    public var type: String

    /// A header of `type`.
    public init(type: String) { self.type = type }
}

/// JSON text kept byte for byte, read and written unchanged through the project's JSON reader and writer: the
/// envelope a client sends in a `send` frame (which the server reads as it reads the body of `POST …/messages`, so
/// that one that is not an object is refused the same way, `malformed-envelope`), and a frame's ``FrameRef``.
public struct RawJSONText: Codable, Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    /// The JSON text.
    public var json: [UInt8]

    /// A value whose JSON text is `json`.
    public init(json: [UInt8]) { self.json = json }

    /// A JSON string, such as `"c-17"`.
    public init(stringLiteral value: String) {
        var writer = MissiveJSONWriter()
        writer.string(value)
        json = writer.bytes
    }

    /// A JSON number, such as `18`.
    public init(integerLiteral value: Int64) { json = Array(String(value).utf8) }

    /// Reads the value's JSON text as it came.
    public init(from decoder: any Decoder) throws { json = try RawJSON(from: decoder).bytes }

    /// Writes the JSON text unchanged.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(RawJSON(json))
    }
}

/// A client's reference for a frame it sends, as its JSON text (a string or a number): the answer echoes it as it
/// came, so that the client matches the two.
public typealias FrameRef = RawJSONText

/// The first frame of a connection.
public struct HelloEvent: WireType, Hashable {
    public static let wireName = "hello"
    /// Always `hello`.
    public var type = "hello"
    /// The member the token belongs to.
    public var member: String
    /// The position the stream continues from.
    public var position: Int64
    /// Whether the stream continues right after the position the client gave (`false`: it gave none, or one the
    /// feed cannot continue from; the client then reloads what it shows).
    public var resumed: Bool

    /// A hello with every field given.
    public init(member: String, position: Int64, resumed: Bool) {
        self.member = member
        self.position = position
        self.resumed = resumed
    }

    public static let wireExample = HelloEvent(member: "bob", position: 1041, resumed: true)
}

/// A message stored (`message`) or given a new version by an action (`edit`).
public struct MessageEvent: WireType, Hashable {
    public static let wireName = "message-event"

    /// What happened to the message.
    public enum Kind: String, Codable, Sendable, Hashable {
        /// It was stored: `"message"`.
        case stored = "message"
        /// It has a new version: `"edit"`.
        case edited = "edit"
    }

    /// `message` or `edit`.
    public var type: Kind
    /// The change's position in the feed.
    public var position: Int64
    /// The message's conversation.
    public var conversation: String
    /// The message (its new version, for an edit).
    public var message: RemoteMessage

    /// An event with every field given.
    public init(type: Kind, position: Int64, conversation: String, message: RemoteMessage) {
        self.type = type
        self.position = position
        self.conversation = conversation
        self.message = message
    }

    public static let wireExample = MessageEvent(type: .stored, position: 1042, conversation: "team", message: .wireExample)
}

/// A message deleted.
public struct DeleteEvent: WireType, Hashable {
    public static let wireName = "delete-event"
    /// Always `delete`.
    public var type = "delete"
    /// The change's position in the feed.
    public var position: Int64
    /// The message's conversation.
    public var conversation: String
    /// The message's id.
    public var id: String

    /// An event with every field given.
    public init(position: Int64, conversation: String, id: String) {
        self.position = position
        self.conversation = conversation
        self.id = id
    }

    public static let wireExample = DeleteEvent(position: 1044, conversation: "team", id: "m-9")
}

/// The member's read mark moved (on this connection's device or another); only the member hears of it.
public struct ReadEvent: WireType, Hashable {
    public static let wireName = "read-event"
    /// Always `read`.
    public var type = "read"
    /// The change's position in the feed.
    public var position: Int64
    /// The conversation.
    public var conversation: String
    /// The member whose mark moved.
    public var member: String
    /// The newest message read.
    public var upTo: String
    /// The member's unread count now.
    public var unreadCount: Int

    /// An event with every field given.
    public init(position: Int64, conversation: String, member: String, upTo: String, unreadCount: Int) {
        self.position = position
        self.conversation = conversation
        self.member = member
        self.upTo = upTo
        self.unreadCount = unreadCount
    }

    public static let wireExample = ReadEvent(position: 1045, conversation: "team", member: "bob", upTo: "m-8", unreadCount: 0)
}

/// A member joined or left a conversation.
public struct MembershipEvent: WireType, Hashable {
    public static let wireName = "membership-event"

    /// Which way the member went.
    public enum Kind: String, Codable, Sendable, Hashable {
        /// The member joined.
        case joined
        /// The member left.
        case left
    }

    /// `joined` or `left`.
    public var type: Kind
    /// The change's position in the feed.
    public var position: Int64
    /// The conversation.
    public var conversation: String
    /// The member.
    public var member: String

    /// An event with every field given.
    public init(type: Kind, position: Int64, conversation: String, member: String) {
        self.type = type
        self.position = position
        self.conversation = conversation
        self.member = member
    }

    public static let wireExample = MembershipEvent(type: .joined, position: 1046, conversation: "team", member: "carol")
}

/// A message that is not kept (`none` or `status`), handed to the members online: its envelope, byte for byte.
/// It has no position and is not sent again to a stream that resumes.
public struct TransientEvent: WireType, Hashable {
    public static let wireName = "transient-event"
    /// Always `transient`.
    public var type = "transient"
    /// The conversation.
    public var conversation: String
    /// The message's flag.
    public var persistence: Persistence
    /// The envelope, byte for byte.
    public var envelope: [UInt8]

    /// An event with every field given.
    public init(conversation: String, persistence: Persistence, envelope: [UInt8]) {
        self.conversation = conversation
        self.persistence = persistence
        self.envelope = envelope
    }

    private enum CodingKeys: String, CodingKey { case type, conversation, persistence, envelope }

    /// Reads the JSON; `envelope` must be an object, kept as its bytes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            conversation: try container.decode(String.self, forKey: .conversation), persistence: try container.decodePersistence(forKey: .persistence),
            envelope: try container.decodeEnvelope(forKey: .envelope))
    }

    /// Writes the JSON, the envelope spliced in unchanged.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(conversation, forKey: .conversation)
        try container.encode(WirePersistence(persistence), forKey: .persistence)
        try container.encode(RawJSON(envelope), forKey: .envelope)
    }

    public static let wireExample = TransientEvent(
        conversation: "team", persistence: .status, envelope: Array(#"{"objectName":"RC:TypSts","content":{"typingContentType":"RC:TxtMsg"}}"#.utf8))
}

/// The answer to a frame the client sent, matched by its `ref`: `sent` (a ``StoredAnswer`` or a
/// ``NotStoredAnswer``), `marked` (a ``RemoteReadState``) or `reported` (a ``TypeReport``).
public struct AnswerFrame<Result: Codable & Sendable>: Codable, Sendable {
    /// `sent`, `marked` or `reported`.
    public var type: String
    /// The client's `ref`, echoed as it was sent; `nil` (written `null`) when the frame had none.
    public var ref: FrameRef?
    /// What the frame did.
    public var result: Result

    /// An answer with every field given.
    public init(type: String, ref: FrameRef?, result: Result) {
        self.type = type
        self.ref = ref
        self.result = result
    }
}

extension AnswerFrame: WireType where Result: WireType {
    /// All answers share one block, whose `result` is a ``RemoteReadState`` there.
    public static var wireName: String { "answer-frame" }
    /// A `marked` answer with the result's example.
    public static var wireExample: AnswerFrame<Result> { AnswerFrame(type: "marked", ref: 18, result: Result.wireExample) }
}

/// A frame the server could not take, or whose request failed: the code and message the HTTP API would give.
public struct ErrorFrame: WireType, Hashable {
    public static let wireName = "error-frame"
    /// Always `error`.
    public var type = "error"
    /// The client's `ref`; `nil` (written `null`) when the frame had none or could not be read.
    public var ref: FrameRef?
    /// What went wrong.
    public var error: WireError.Details

    /// An error frame with every field given.
    public init(ref: FrameRef?, error: WireError.Details) {
        self.ref = ref
        self.error = error
    }

    public static let wireExample = ErrorFrame(ref: 18, error: .init(code: "rate-limited", message: "too many requests", retryAfter: 1))
}

/// A client's frame that sends an envelope, exactly as `POST …/messages` takes it; answered by a `sent` frame.
public struct SendFrame: WireType, Hashable {
    public static let wireName = "send-frame"
    /// Always `send`.
    public var type = "send"
    /// The conversation.
    public var conversation: String
    /// The envelope's JSON, sent as it is.
    public var envelope: RawJSONText
    /// The client's reference, echoed in the answer.
    public var ref: FrameRef?

    /// A frame with every field given.
    public init(conversation: String, envelope: RawJSONText, ref: FrameRef?) {
        self.conversation = conversation
        self.envelope = envelope
        self.ref = ref
    }

    public static let wireExample = SendFrame(
        conversation: "team", envelope: RawJSONText(json: Array(#"{"objectName":"MS:Text","content":{"content":"hi"}}"#.utf8)), ref: "c-17")
}

/// A client's frame that moves its read mark; answered by a `marked` frame.
public struct ReadFrame: WireType, Hashable {
    public static let wireName = "read-frame"
    /// Always `read`.
    public var type = "read"
    /// The conversation.
    public var conversation: String
    /// The newest message read.
    public var upTo: String
    /// The client's reference, echoed in the answer.
    public var ref: FrameRef?

    /// A frame with every field given.
    public init(conversation: String, upTo: String, ref: FrameRef?) {
        self.conversation = conversation
        self.upTo = upTo
        self.ref = ref
    }

    public static let wireExample = ReadFrame(conversation: "team", upTo: "m-8", ref: 18)
}

/// A client's frame that reports the types it draws; answered by a `reported` frame.
public struct TypesFrame: WireType, Hashable {
    public static let wireName = "types-frame"
    /// Always `types`.
    public var type = "types"
    /// The client's reference, echoed in the answer.
    public var ref: FrameRef?
    /// The types.
    public var types: [ReportedType]

    /// A frame with every field given.
    public init(ref: FrameRef?, types: [ReportedType]) {
        self.ref = ref
        self.types = types
    }

    public static let wireExample = TypesFrame(ref: 19, types: [.wireExample])
}
