import MissiveCore

/// A message whose type this host cannot decode, kept without loss.
///
/// It holds the content exactly as received, so that re-encoding gives back the same bytes and, once the
/// plugin for its type is installed, the same envelope decodes into the real type.
///
/// Its persistence is, in order: the sender's flag when the envelope declares one; the registered type's
/// flag when a registered type failed to decode the content; otherwise ``defaultPersistence``
/// (`persisted`): kept, so that it can render after an upgrade, but not counted as unread, since the host
/// cannot know whether it should be.
public struct UnknownMessage: MessageContent, Hashable {
    /// The built-in objectName of the unknown type itself.
    public static let objectName = "MS:Unknown"

    /// The persistence an unknown message gets when the sender declared none.
    public static let defaultPersistence = Persistence.persisted

    /// Why a message is unknown.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// No type is registered under the objectName.
        case notRegistered
        /// `MS:Custom` content without a business identifier that any type is registered under.
        case unknownBusinessID(String?)
        /// A registered type's decoder refused the content.
        case decodeFailed(String)

        public var description: String {
            switch self {
            case .notRegistered: "no type is registered under this objectName"
            case .unknownBusinessID(nil): "MS:Custom content carries no businessID"
            case .unknownBusinessID(let id?): "no type is registered under businessID '\(id)'"
            case .decodeFailed(let reason): "decoding failed: \(reason)"
            }
        }
    }

    /// The objectName the message was sent under.
    public let objectName: String
    /// The business identifier found in the content, if any.
    public let businessID: String?
    /// The content exactly as received.
    public let rawContent: [UInt8]
    /// The sender's persistence flag, if the envelope declared one.
    public let senderPersistence: Persistence?
    /// The sender's digest, if the envelope carried one.
    public let fallbackText: String?
    /// The sender's push text, if the envelope carried one.
    public let senderPushContent: String?
    /// Why the message is unknown.
    public let reason: Reason
    /// The persistence in effect (see the type's documentation for the rule).
    public let persistence: Persistence
    /// The objectName of the registered type whose decoder refused the content, when that is why the
    /// message is unknown. For `MS:Custom` content it is the type its `businessID` dispatched to.
    public let refusingType: String?

    /// Creates an unknown message. `refusingType` and `registeredPersistence` are the objectName and the
    /// flag of the registered type whose decoder refused the content, if that is why the message is unknown.
    public init(
        objectName: String, businessID: String?, rawContent: [UInt8], senderPersistence: Persistence?,
        fallbackText: String?, senderPushContent: String?, reason: Reason, refusingType: String? = nil,
        registeredPersistence: Persistence? = nil
    ) {
        self.refusingType = refusingType
        self.persistence = senderPersistence ?? registeredPersistence ?? Self.defaultPersistence
        self.objectName = objectName
        self.businessID = businessID
        self.rawContent = rawContent
        self.senderPersistence = senderPersistence
        self.fallbackText = fallbackText
        self.senderPushContent = senderPushContent
        self.reason = reason
    }

    /// The sender's fallback text; else `[Invalid message: TYPE]` when the registered type TYPE refused the
    /// content; else `[Unsupported message: NAME]`, with the objectName it was sent under.
    public var digest: String {
        if let fallbackText, !fallbackText.isEmpty { return fallbackText }
        if let refusingType { return "[Invalid message: \(refusingType)]" }
        return "[Unsupported message: \(objectName)]"
    }

    /// The sender's push text, else the digest; `nil` for status messages.
    public var pushContent: String? { persistence == .status ? nil : (senderPushContent ?? digest) }

    /// Unknown messages are not searchable: their words are unknown.
    public var searchableWords: [String] { [] }

    /// Unknown messages have no media reference the host can trust.
    public var media: MediaReference? { nil }

    /// The raw content, unchanged.
    public func encodedContent() throws(MissiveError) -> [UInt8] { rawContent }
}
