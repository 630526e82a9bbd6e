import MissiveCore
import MissiveStore
import MissiveWire

/// The bytes of each event and answer the event stream sends: the wire types (``HelloEvent``, ``MessageEvent``...),
/// written by the project's JSON writer. docs/SERVER.md shows each.
enum EventJSON {
    static func hello(member: String, position: Int64, resumed: Bool) -> [UInt8] {
        HelloEvent(member: member, position: position, resumed: resumed).encoded()
    }

    static func message(_ kind: MessageEvent.Kind, position: Int64, _ message: StoredMessage) -> [UInt8] {
        MessageEvent(type: kind, position: position, conversation: message.conversationID, message: RemoteMessage(message)).encoded()
    }

    static func deleted(position: Int64, conversation: String, id: String) -> [UInt8] {
        DeleteEvent(position: position, conversation: conversation, id: id).encoded()
    }

    static func read(position: Int64, conversation: String, member: String, upTo: String, unreadCount: Int) -> [UInt8] {
        ReadEvent(position: position, conversation: conversation, member: member, upTo: upTo, unreadCount: unreadCount).encoded()
    }

    static func membership(_ kind: MembershipEvent.Kind, position: Int64, conversation: String, member: String) -> [UInt8] {
        MembershipEvent(type: kind, position: position, conversation: conversation, member: member).encoded()
    }

    static func transient(_ envelope: [UInt8], persistence: Persistence, conversation: String) -> [UInt8] {
        TransientEvent(conversation: conversation, persistence: persistence, envelope: envelope).encoded()
    }

    static func answer<Result: Codable & Sendable>(_ type: String, ref: FrameRef?, _ result: Result) -> [UInt8] {
        encoded(AnswerFrame(type: type, ref: ref, result: result))
    }

    /// The `error` frame of `error`: the same `code`, `message` (and `retryAfter`) as the HTTP answer's body.
    static func failure(ref: FrameRef?, _ error: APIError) -> [UInt8] {
        ErrorFrame(ref: ref, error: error.details).encoded()
    }

    private static func encoded(_ value: some Encodable) -> [UInt8] {
        // Only a non-finite number fails to encode, and no frame holds one.
        (try? JSONWriterEncoder.encode(value)) ?? Array(#"{"type":"error","ref":null,"error":{"code":"internal","message":"an event could not be written"}}"#.utf8)
    }
}
