import Foundation
import MissiveCore

/// A decoded message content, whichever kind of type it came from: a built-in Swift type, a plugin type
/// or an ``UnknownMessage``.
///
/// Values are immutable and safe to share between threads.
public protocol MessageContent: Sendable {
    /// The objectName to send the content under.
    var objectName: String { get }
    /// The business identifier of the content's type, if it has one.
    var businessID: String? { get }
    /// The persistence flag in effect for this content.
    var persistence: Persistence { get }
    /// The one-line conversation digest.
    var digest: String { get }
    /// The push text; `nil` when the message is not pushed (always for status types).
    var pushContent: String? { get }
    /// The searchable words; empty when the content is not searchable.
    var searchableWords: [String] { get }
    /// The media reference of a media type, else `nil`.
    var media: MediaReference? { get }
    /// The content exactly as received, for content decoded from received bytes; `nil` for content made
    /// by this host.
    var receivedContent: [UInt8]? { get }
    /// The JSON content to send: the bytes received, unchanged, for received content (whatever the type
    /// would write), else the type's encoding.
    func encodedContent() throws(MissiveError) -> [UInt8]
    /// The content as the type itself encodes it, without the members it does not know. Edits use it to
    /// tell the members a type knows from those it must carry over.
    func typeEncodedContent() throws(MissiveError) -> [UInt8]
    /// The view the content's type describes, read and sanitized, with any problems found; `nil` when the
    /// type describes no view (or none for this message). Throws when a plugin's view function fails.
    func describedView() throws(MissiveError) -> ViewReading?
}

extension MessageContent {
    /// What a host draws for the content: the view its type describes, or, when it describes none (or its
    /// view fails or is unusable), `ViewElement.defaultView(digest:media:)`; `nil` for status content,
    /// which is not drawn. Hosts draw an ``UnknownMessage`` as an unsupported card instead.
    public var view: ViewElement? {
        guard persistence != .status else { return nil }
        if let reading = try? describedView(), let element = reading.element { return element }
        return .defaultView(digest: digest, media: media)
    }
}

/// The content of a built-in or host-registered Swift `MessageType`, as a ``MessageContent``.
public struct TypedContent<Value: MessageType>: MessageContent {
    /// The decoded value.
    public let value: Value
    /// The bytes the value was decoded from, if it was.
    public let receivedContent: [UInt8]?

    /// Wraps a value made by this host, which sends the type's encoding of it.
    public init(_ value: Value) {
        self.value = value
        self.receivedContent = nil
    }

    /// Wraps a value decoded from `received`, which is what the content sends again.
    public init(_ value: Value, received: [UInt8]) {
        self.value = value
        self.receivedContent = received
    }

    public var objectName: String { Value.objectName }
    public var businessID: String? { Value.businessID }
    public var persistence: Persistence { Value.persistence }
    /// The type's digest, cleaned by `TextHygiene.digest(_:)`: it holds the sender's text.
    public var digest: String { TextHygiene.digest(value.digest) }
    /// The type's push text, cleaned like the digest; `nil` for status types.
    public var pushContent: String? { Value.persistence == .status ? nil : value.pushContent.map(TextHygiene.digest) }
    public var searchableWords: [String] { value.searchableWords ?? [] }
    public var media: MediaReference? { (value as? any MediaMessageContent)?.media }

    public func encodedContent() throws(MissiveError) -> [UInt8] {
        if let receivedContent { return receivedContent }
        return try typeEncodedContent()
    }

    /// The value's view when its type conforms to `MessageViewContent`, sanitized.
    public func describedView() throws(MissiveError) -> ViewReading? {
        guard Value.describesView, let described = (value as? any MessageViewContent)?.view else { return nil }
        var sanitizer = ViewSanitizer()
        let element = sanitizer.sanitize(described)
        return ViewReading(element: element, problems: sanitizer.problems)
    }

    public func typeEncodedContent() throws(MissiveError) -> [UInt8] {
        do {
            return Array(try value.encode())
        } catch {
            throw MissiveError(.malformedContent, "encoding failed: \(error)", objectName: Value.objectName)
        }
    }
}
