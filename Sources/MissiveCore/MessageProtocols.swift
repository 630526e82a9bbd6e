import Foundation

/// How a message type is named, read and written.
///
/// Built-in types and plugin types conform to the same protocol. A plugin type never crosses the plugin
/// boundary as a Swift type: `MissivePluginKit` turns it into C function pointers.
public protocol MessageCoding: Sendable {
    /// The type's unique name, for example `demo:poll`. See ``NameGrammar`` for what is allowed.
    static var objectName: String { get }

    /// The value under which a container's content dispatches to this type, or `nil`: for `MS:Custom`
    /// (the default container) the content's `businessID`, for another ``container`` the value of its key
    /// (the decimal spelling, for a container whose key holds integers).
    static var businessID: String? { get }

    /// The objectName of the ``MessageContainer`` that ``businessID`` belongs to; `nil` means `MS:Custom`.
    /// A plugin type may name a container only if its plugin declares it.
    static var container: String? { get }

    /// Valid values of this type. Their encodings are the examples that the conformance suite round-trips.
    /// Give at least one.
    static var examples: [Self] { get }

    /// Decodes the type's JSON content.
    ///
    /// Throws on any content that is not valid for the type, and never traps, whatever the bytes.
    init(decoding content: Data) throws

    /// Decodes the type's JSON content from bytes that are valid only during the call.
    ///
    /// Provided: a copy of the bytes goes to ``init(decoding:)``, or, for a type whose `init(decoding:)` is
    /// the generated one (``MissiveDecodesInPlace``), the generated decoding reads the bytes where they are.
    init(decodingBytes content: UnsafeRawBufferPointer) throws

    /// Encodes the value as the type's JSON content.
    ///
    /// Decoding the result and encoding again must give the same bytes.
    func encode() throws -> Data

    /// The words a search index should find this message by; `nil` or empty when it is not searchable.
    var searchableWords: [String]? { get }

    /// Whether the type is a media type. Provided: `true` exactly when the type conforms to
    /// ``MediaMessageContent``, settled when the conformance is compiled rather than by a cast at run time.
    static var isMediaType: Bool { get }

    /// Whether the type describes a rendered view. Provided: `true` exactly when the type conforms to
    /// ``MessageViewContent``.
    static var describesView: Bool { get }
}

extension MessageCoding {
    /// No business identifier.
    public static var businessID: String? { nil }

    /// `MS:Custom`, when there is a ``businessID``.
    public static var container: String? { nil }

    /// Not searchable.
    public var searchableWords: [String]? { nil }

    /// Not a media type.
    public static var isMediaType: Bool { false }
}

extension MessageCoding where Self: MediaMessageContent {
    /// A media type.
    public static var isMediaType: Bool { true }
}

extension MessageCoding {
    /// No view of its own: hosts show ``ViewElement/defaultView(digest:media:)``.
    public static var describesView: Bool { false }
}

extension MessageCoding where Self: MessageViewContent {
    /// The type describes its view.
    public static var describesView: Bool { true }
}

extension MessageCoding {
    /// Copies the bytes into `Data` for ``init(decoding:)``, which may keep what it decodes from.
    public init(decodingBytes content: UnsafeRawBufferPointer) throws {
        try self.init(decoding: Data(content))
    }
}

extension MessageCoding where Self: MissiveDecodesInPlace {
    /// Decodes with the generated coding, straight from the bytes: the type's `init(decoding:)` is the
    /// generated one, so nothing else would see them.
    @inlinable
    public init(decodingBytes content: UnsafeRawBufferPointer) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
    }
}

extension MessageCoding where Self: Codable {
    /// Decodes with the shared ``MissiveJSON/decoder``.
    public init(decoding content: Data) throws {
        self = try MissiveJSON.decoder.decode(Self.self, from: content)
    }

    /// Encodes with the shared ``MissiveJSON/encoder``: sorted keys, so that the output is stable.
    public func encode() throws -> Data {
        try MissiveJSON.encoder.encode(self)
    }
}

extension MessageCoding where Self: MissiveJSONValue {
    /// Decodes with the generated coding (``MissiveJSON/decode(_:from:)-(_,Data)``).
    @inlinable public init(decoding content: Data) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
    }

    /// Encodes with the generated coding: the bytes ``MissiveJSON/encoder`` would write.
    @inlinable public func encode() throws -> Data {
        try MissiveJSON.encode(self)
    }
}

/// Whether a message type is stored and whether it counts as unread.
public protocol MessagePersistence {
    /// The flag every message of this type carries.
    static var persistence: Persistence { get }
}

/// The text a host shows for a message in a conversation list and a push notification.
///
/// A type that also conforms to ``MessageViewContent`` describes a rendered view; without it, hosts show a
/// default view made from the digest and the media reference.
public protocol MessageTextContent {
    /// The one-line text a conversation list shows when this is the last message.
    var digest: String { get }

    /// The push notification text; by default the ``digest``. Status types never push, whatever this says.
    var pushContent: String? { get }
}

/// The old name of ``MessageTextContent``.
@available(*, deprecated, renamed: "MessageTextContent")
public typealias MessageContentView = MessageTextContent

extension MessageTextContent {
    /// The digest.
    public var pushContent: String? { digest }
}

/// A message type that describes how its messages are drawn: a tree of portable ``ViewElement``s that the
/// host measures, lays out and renders (in a terminal, in HTML, natively).
///
/// ```swift
/// extension PollMessage: MessageViewContent {
///     var view: ViewElement {
///         .vstack(spacing: 1) {
///             ViewElement.text(question, role: .title)
///             for option in options { ViewElement.button(option, action: "vote") }
///         }
///     }
/// }
/// ```
///
/// Plugins built with `MissivePluginKit` offer it through the `missive.view.v1` extension. Status types
/// (persistence `.status`) are not drawn, and need none.
public protocol MessageViewContent {
    /// The message's view. Hosts sanitize it (``ViewSanitizer``) before they draw it.
    var view: ViewElement { get }
}

/// A message type whose content refers to media: an image, a voice clip, a video, a file or a plugin's own.
public protocol MediaMessageContent {
    /// Where the media lives and what it is.
    var media: MediaReference { get }
}

/// Everything a message type provides: coding, persistence and its text.
public typealias MessageType = MessageCoding & MessagePersistence & MessageTextContent

/// The JSON coders Missive's Codable defaults use.
public enum MissiveJSON {
    /// Decodes content. Shared; safe to use from several threads at once.
    public static let decoder = JSONDecoder()

    /// Encodes content with sorted keys and unescaped slashes, so that a round trip is byte-stable.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Decodes content with `JSONDecoder`: the path of a type without generated coding.
    public static func decode<T: Decodable>(_ type: T.Type, from content: Data) throws -> T {
        try decoder.decode(T.self, from: content)
    }

    /// Decodes content with the type's generated coding: what a hand-written `init(decoding:)` calls before it
    /// validates, `self = try MissiveJSON.decode(Self.self, from: content)`.
    @inlinable
    public static func decode<T: MissiveJSONValue>(_ type: T.Type, from content: Data) throws -> T {
        try content.withUnsafeBytes { bytes in try decode(T.self, from: bytes) }
    }

    /// Decodes content with the type's generated coding, from bytes valid during the call.
    ///
    /// Content the generated coding refuses goes to `JSONDecoder`, which decides: the two paths give the same
    /// values and the same refusals, with the reasons ``describe(_:)`` gives for `JSONDecoder`'s errors.
    @inlinable
    public static func decode<T: MissiveJSONValue>(_ type: T.Type, from content: UnsafeRawBufferPointer) throws -> T {
        do {
            return try MissiveJSONReader.decode(T.self, from: content)
        } catch {
            return try decoder.decode(T.self, from: Data(content))
        }
    }

    /// Encodes with ``encoder``: the path of a type without generated coding.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        try encoder.encode(value)
    }

    /// Encodes with the type's generated coding, which writes what ``encoder`` writes. A value it cannot write
    /// (a number that is not finite) goes to ``encoder``, for its error.
    @inlinable
    public static func encode<T: MissiveJSONValue>(_ value: T) throws -> Data {
        var writer = MissiveJSONWriter()
        do {
            try value.writeMissiveJSON(to: &writer)
        } catch {
            return try encoder.encode(value)
        }
        return Data(writer.bytes)
    }

    /// A one-line reason for an error thrown while decoding content.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty:
            return "invalid value at '\(path(context))': \(context.debugDescription)"
        case DecodingError.dataCorrupted(let context) where context.debugDescription == "The given data was not valid JSON.":
            // What JSONDecoder says, with no path, both for broken JSON and for a value no field can hold.
            return "invalid JSON, or a value the type cannot hold (a number out of range, a fraction for an integer, a lone surrogate)"
        case DecodingError.dataCorrupted(let context):
            return "invalid JSON: \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _):
            return "missing field '\(key.stringValue)'"
        case DecodingError.typeMismatch(let type, let context):
            return "wrong type at '\(path(context))': expected \(jsonKind(type))"
        case DecodingError.valueNotFound(let type, let context):
            return "wrong type at '\(path(context))': expected \(jsonKind(type)), found null"
        default:
            return String(describing: error)
        }
    }

    /// Where in the content a decoding error is, as `items.0.sku`, or `content` for the whole.
    private static func path(_ context: DecodingError.Context) -> String {
        // An array's element is its index (JSONDecoder's key spells it `Index 0`).
        let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        return path.isEmpty ? "content" : path
    }

    /// The JSON kind a Swift type decodes from, in words: `a string`, `an array`, ...
    private static func jsonKind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is Substring.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is any BinaryInteger.Type: return "an integer"
        case is any FloatingPoint.Type, is Decimal.Type: return "a number"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array<") || name.hasPrefix("Set<") || name.hasPrefix("[") && !name.contains(":") { return "an array" }
            return "an object"
        }
    }
}
