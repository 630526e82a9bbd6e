import MissiveCore

/// A received message: its envelope and its decoded content.
public struct Message: Sendable {
    /// The envelope as received.
    public let envelope: Envelope
    /// The decoded content; an ``UnknownMessage`` when the host cannot decode it.
    public let content: any MessageContent

    /// Whether a registered type decoded the content.
    public var isKnown: Bool { !(content is UnknownMessage) }

    /// The content as an unknown message, if it is one.
    public var unknown: UnknownMessage? { content as? UnknownMessage }

    /// The persistence in effect: the type's flag for known content; for unknown content, the sender's flag
    /// or ``UnknownMessage/defaultPersistence``.
    public var persistence: Persistence { content.persistence }

    /// The conversation digest.
    public var digest: String { content.digest }

    /// The content as a built-in or host-registered Swift type, if it is one.
    public func value<T: MessageType>(as type: T.Type) -> T? {
        (content as? TypedContent<T>)?.value
    }

    /// The envelope to send or store again: the message exactly as it was received (or composed, or
    /// edited), whatever its type. Its content is the bytes received, not the type's encoding of them, so
    /// this is ``envelope`` itself; it still throws, as it did when it re-encoded, so that callers keep
    /// compiling.
    public func reencoded() throws(MissiveError) -> Envelope {
        envelope
    }

    /// `newContent` (made by this message's type) followed by the members of the received content the type
    /// does not know.
    func contentKeepingUnknownMembers(_ newContent: [UInt8]) throws(MissiveError) -> [UInt8] {
        guard let received = content.receivedContent else { return newContent }
        return try ContentMembers.carryingOver(
            from: received, typeEncoding: try content.typeEncodedContent(), into: newContent, objectName: content.objectName)
    }
}
