import MissiveCore

/// A JSON shape of `missive serve`'s API (`/api/v1`): a body a route answers with or takes, a frame of the event
/// stream, or a shape several of them share.
///
/// The server writes these types (with the project's JSON writer: members in declaration order, a message's
/// envelope spliced in byte for byte) and `MissiveClient` reads them, so the contract exists once. docs/SERVER.md
/// shows each in a block marked `<!-- wire: NAME -->`, and a test holds the blocks and the types together: a field
/// renamed or added in a type fails it until the document says the same.
public protocol WireType: Codable, Sendable {
    /// The name of its JSON block in docs/SERVER.md (`<!-- wire: NAME -->`).
    static var wireName: String { get }
    /// A value with every optional present and one element in every array, so that every field shows in its JSON.
    static var wireExample: Self { get }
}

extension WireType {
    /// The JSON text of the value, as the server writes it.
    public func encoded() -> [UInt8] {
        // Only a non-finite number fails to encode, and no wire type holds a floating-point number.
        (try? JSONWriterEncoder.encode(self)) ?? Array("{}".utf8)
    }

    /// Reads one value of this type from `bytes`, a JSON document.
    ///
    /// Members the type does not name are skipped (a newer server may add some); a member it needs that is
    /// missing, or of another kind, is an error.
    ///
    /// - Throws: ``WireDecodingError``, whose message names the member at fault.
    public static func decoded(from bytes: [UInt8]) throws(WireDecodingError) -> Self {
        do {
            return try JSONReaderDecoder.decode(Self.self, from: bytes)
        } catch {
            throw WireDecodingError(type: wireName, reason: JSONReaderDecoder.describe(error))
        }
    }
}

/// A JSON document that is not the wire shape it was read as.
public struct WireDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The shape's name in docs/SERVER.md, such as `message`.
    public var type: String
    /// What was wrong, with the path to the member at fault (`message.id is missing`).
    public var reason: String

    /// An error with its shape and reason.
    public init(type: String, reason: String) {
        self.type = type
        self.reason = reason
    }

    /// `not a valid TYPE: REASON`.
    public var description: String { "not a valid \(type): \(reason)" }
}

/// Every ``WireType``, for the test that holds them and docs/SERVER.md together.
public enum WireCatalog {
    /// The types, bodies, frames and shared shapes.
    public static let all: [any WireType.Type] = [
        WireError.self, RemoteMessage.self, MemberAnswer.self, RemoteConversation.self, ConversationList.self, NewConversation.self,
        RemoteConversationDetail.self, MessageList.self, StoredAnswer.self, NotStoredAnswer.self, ReadMarkRequest.self, RemoteReadState.self,
        SearchResults.self, SearchHit.self, RemoteAction.self, ActionList.self, MessageActions.self, ActionRequest.self, ComposeRequest.self,
        EditedAnswer.self, URLAnswer.self, UploadedMedia.self, ReportedType.self, TypeReportRequest.self, TypeReport.self, MemberDrawing.self,
        TypeAudience.self, HelloEvent.self, MessageEvent.self, DeleteEvent.self, ReadEvent.self, MembershipEvent.self, TransientEvent.self,
        AnswerFrame<RemoteReadState>.self, ErrorFrame.self, SendFrame.self, ReadFrame.self, TypesFrame.self,
    ]
}
