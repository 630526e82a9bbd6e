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
        /// Content of a container (`MS:Custom` or a declared one) whose key does not lead to a type.
        case notDispatched(container: String, key: String, problem: DispatchProblem)
        /// A registered type's decoder refused the content.
        case decodeFailed(String)
        /// The type is registered, but its plugin is withheld (quarantined after a crash, or blacklisted by the
        /// plugin scanner), so nothing decoded the content: the reason.
        case pluginUnavailable(String)
        /// The type's plugin runs isolated, and its worker crashed or hung on this very message (found by trying
        /// the messages in flight again one at a time), so nothing decoded it: the reason. Every other message went
        /// on to a new worker; the store can decode this one again once the plugin is fixed.
        case pluginCrashed(String)

        public var description: String {
            switch self {
            case .notRegistered: "no type is registered under this objectName"
            case .notDispatched(let container, let key, let problem):
                switch problem {
                case .notAnObject: "\(container) content is not a JSON object, so it has no '\(key)' to dispatch on"
                case .missingKey: "\(container) content has no '\(key)' member to dispatch on"
                case .wrongKind(.integer):
                    "\(container) content's '\(key)' is not an integer in the range of a 64-bit integer, without a fraction or an exponent"
                case .wrongKind(.string): "\(container) content's '\(key)' is not a string"
                case .notRegistered(let value): "no type is registered in \(container) under \(key) '\(value)'"
                }
            case .decodeFailed(let reason): "decoding failed: \(reason)"
            case .pluginUnavailable(let reason): "the type's plugin is not loaded: \(reason)"
            case .pluginCrashed(let reason): "the plugin crashed on this message: \(reason)"
            }
        }
    }

    /// Why a container's key did not lead to a type.
    public enum DispatchProblem: Sendable, Hashable {
        /// The content is not a JSON object.
        case notAnObject
        /// The content has no member named by the key.
        case missingKey
        /// The key's value is not of the container's key kind (for an integer key: a JSON integer without a
        /// fraction or exponent, in the range of `Int64`).
        case wrongKind(MessageContainer.KeyKind)
        /// No type is registered under the value (spelled as registered: an integer in decimal).
        case notRegistered(String)
    }

    /// The objectName the message was sent under.
    public let objectName: String
    /// The value found in the content under its container's key (for `MS:Custom`, the `businessID`), if
    /// any; an integer in decimal.
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
    /// The result is cleaned by `TextHygiene.digest(_:)`: every part of it comes from the sender.
    public var digest: String {
        if let fallbackText {
            let cleaned = TextHygiene.digest(fallbackText)
            if cleaned.contains(where: { $0 != " " }) { return cleaned }
        }
        if let refusingType { return "[Invalid message: \(refusingType)]" }
        return TextHygiene.digest("[Unsupported message: \(objectName)]")
    }

    /// The sender's push text, else the digest, cleaned; `nil` for status messages.
    public var pushContent: String? { persistence == .status ? nil : senderPushContent.map(TextHygiene.digest) ?? digest }

    /// Unknown messages are not searchable: their words are unknown.
    public var searchableWords: [String] { [] }

    /// Unknown messages have no media reference the host can trust.
    public var media: MediaReference? { nil }

    /// The raw content.
    public var receivedContent: [UInt8]? { rawContent }

    /// The raw content, unchanged.
    public func encodedContent() throws(MissiveError) -> [UInt8] { rawContent }

    /// The raw content: no type knows any of it.
    public func typeEncodedContent() throws(MissiveError) -> [UInt8] { rawContent }

    /// None: no type describes the view of unknown content. Renderers draw an unsupported card.
    public func describedView() throws(MissiveError) -> ViewReading? { nil }
}
