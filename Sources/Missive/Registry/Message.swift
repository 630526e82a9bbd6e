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

    /// The envelope to send or store again: the same envelope, with the content as the type encodes it.
    ///
    /// Unknown content is passed through byte for byte. Content that arrived as `MS:Custom` stays
    /// `MS:Custom`, and its `businessID` is put back if the type's encoder leaves it out.
    public func reencoded() throws(MissiveError) -> Envelope {
        var result = envelope
        guard isKnown else { return result }
        var bytes = try content.encodedContent()
        if envelope.objectName == MessageRegistry.customObjectName, let businessID = content.businessID {
            bytes = Self.ensuring(businessID: businessID, in: bytes)
        }
        result.content = bytes
        return result
    }

    private static func ensuring(businessID: String, in content: [UInt8]) -> [UInt8] {
        let present = content.withUnsafeBufferPointer { JSONScanner.topLevelString("businessID", in: $0) } != nil
        let whitespace: [UInt8] = [0x20, 0x0A, 0x0D, 0x09]
        guard !present, let open = content.firstIndex(where: { !whitespace.contains($0) }), content[open] == UInt8(ascii: "{") else {
            return content
        }
        var member = JSONWriter()
        member.beginObject()
        member.key("businessID")
        member.string(businessID)
        member.endObject()
        let inner = member.bytes.dropFirst().dropLast()
        let rest = content[(open + 1)...]
        let isEmpty = rest.first(where: { !whitespace.contains($0) }) == UInt8(ascii: "}")
        return Array(content[...open]) + inner + (isEmpty ? [] : [UInt8(ascii: ",")]) + rest
    }
}
