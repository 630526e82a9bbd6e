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
    /// The JSON content to send.
    func encodedContent() throws(MissiveError) -> [UInt8]
}

/// The content of a built-in Swift ``MessageType``, as a ``MessageContent``.
public struct TypedContent<Value: MessageType>: MessageContent {
    /// The decoded value.
    public let value: Value

    /// Wraps a value.
    public init(_ value: Value) { self.value = value }

    public var objectName: String { Value.objectName }
    public var businessID: String? { Value.businessID }
    public var persistence: Persistence { Value.persistence }
    public var digest: String { value.digest }
    public var pushContent: String? { Value.persistence == .status ? nil : value.pushContent }
    public var searchableWords: [String] { value.searchableWords ?? [] }
    public var media: MediaReference? { (value as? any MediaMessageContent)?.media }

    public func encodedContent() throws(MissiveError) -> [UInt8] {
        do {
            return Array(try value.encode())
        } catch {
            throw MissiveError(.malformedContent, "encoding failed: \(error)", objectName: Value.objectName)
        }
    }
}
