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

    /// The envelope to send or store again: the same envelope, with the content the message holds.
    ///
    /// A received message that was not changed goes out exactly as it came in, known or unknown: its
    /// content is the bytes received, whatever its type would write. Content made by this host is the
    /// type's encoding; if it goes out as `MS:Custom`, its `businessID` is put at the front of the object
    /// when the type's encoder leaves it out.
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

    /// This message with new content made by this host from a value of its own type, keeping the members
    /// of the received content that the type does not know (see ``MessageRegistry/edit(_:content:)``).
    ///
    /// - Throws: ``MissiveError`` when the message is not of type `T`, or `T` fails to encode.
    public func edited<T: MessageType>(to newValue: T) throws(MissiveError) -> Message {
        guard value(as: T.self) != nil else {
            throw MissiveError(.malformedContent, "a \(content.objectName) message cannot be edited into a \(T.objectName)", objectName: content.objectName)
        }
        let merged = try contentKeepingUnknownMembers(try TypedContent(newValue).typeEncodedContent())
        var envelope = envelope
        envelope.content = merged
        return Message(envelope: envelope, content: TypedContent(newValue, received: merged))
    }

    /// `newContent` (made by this message's type) followed by the members of the received content the type
    /// does not know.
    func contentKeepingUnknownMembers(_ newContent: [UInt8]) throws(MissiveError) -> [UInt8] {
        guard let received = content.receivedContent else { return newContent }
        return try ContentMembers.carryingOver(
            from: received, typeEncoding: try content.typeEncodedContent(), into: newContent, objectName: content.objectName)
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
