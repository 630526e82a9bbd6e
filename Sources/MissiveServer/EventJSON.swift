import MissiveCore
import MissiveStore

// The events of `GET /api/v1/events` (a WebSocket), one JSON object per text frame, each with a `type`; the
// changes of the store's feed carry their `position`. docs/SERVER.md shows each.

/// The JSON text of each event and answer the event stream sends.
enum EventJSON {
    /// The first frame of a connection.
    struct Hello: Encodable {
        var type = "hello"
        var member: String
        /// The position the stream continues from.
        var position: Int64
        /// Whether the stream continues right after the position the client gave (`false`: it gave none, or
        /// one the feed cannot continue from; then it reloads what it shows).
        var resumed: Bool
    }

    struct MessageEvent: Encodable {
        var type: String
        var position: Int64
        var conversation: String
        var message: StoredMessageJSON
    }

    struct Deleted: Encodable {
        var type = "delete"
        var position: Int64
        var conversation: String
        var id: String
    }

    struct Read: Encodable {
        var type = "read"
        var position: Int64
        var conversation: String
        var member: String
        var upTo: String
        var unreadCount: Int
    }

    struct Membership: Encodable {
        var type: String
        var position: Int64
        var conversation: String
        var member: String
    }

    struct Transient: Encodable {
        var type = "transient"
        var conversation: String
        var persistence: PersistenceJSON
        var envelope: RawJSON
    }

    /// The answer to a frame the client sent, matched by its `ref`.
    struct Answer<Result: Encodable>: Encodable {
        var type: String
        var ref: RawJSON
        var result: Result
    }

    struct Failure: Encodable {
        var type = "error"
        var ref: RawJSON
        var error: ErrorJSON.Details
    }

    static func hello(member: String, position: Int64, resumed: Bool) -> [UInt8] {
        encoded(Hello(member: member, position: position, resumed: resumed))
    }

    static func message(_ type: String, position: Int64, _ message: StoredMessage) -> [UInt8] {
        encoded(MessageEvent(type: type, position: position, conversation: message.conversationID, message: StoredMessageJSON(message)))
    }

    static func deleted(position: Int64, conversation: String, id: String) -> [UInt8] {
        encoded(Deleted(position: position, conversation: conversation, id: id))
    }

    static func read(position: Int64, conversation: String, member: String, upTo: String, unreadCount: Int) -> [UInt8] {
        encoded(Read(position: position, conversation: conversation, member: member, upTo: upTo, unreadCount: unreadCount))
    }

    static func membership(_ type: String, position: Int64, conversation: String, member: String) -> [UInt8] {
        encoded(Membership(type: type, position: position, conversation: conversation, member: member))
    }

    static func transient(_ envelope: [UInt8], persistence: Persistence, conversation: String) -> [UInt8] {
        encoded(Transient(conversation: conversation, persistence: PersistenceJSON(persistence), envelope: RawJSON(envelope)))
    }

    static func answer(_ type: String, ref: [UInt8]?, _ result: some Encodable) -> [UInt8] {
        encoded(Answer(type: type, ref: RawJSON(ref ?? Array("null".utf8)), result: result))
    }

    /// The `error` frame of `error`: the same `code`, `message` (and `retryAfter`) as the HTTP answer's body.
    static func failure(ref: [UInt8]?, _ error: APIError) -> [UInt8] {
        encoded(Failure(ref: RawJSON(ref ?? Array("null".utf8)), error: .init(code: error.code, message: error.message, retryAfter: error.retryAfter)))
    }

    private static func encoded(_ value: some Encodable) -> [UInt8] {
        // Only a non-finite number fails to encode, and no event holds one.
        (try? JSONWriterEncoder.encode(value)) ?? Array(#"{"type":"error","ref":null,"error":{"code":"internal","message":"an event could not be written"}}"#.utf8)
    }
}
