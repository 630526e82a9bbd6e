import MissiveCore

extension MessageRegistry {
    /// A new message of a registered type, made by this host, to send.
    ///
    /// `content` goes through the type's decoder, so that only valid content is sent. The envelope carries
    /// what a host without the type needs: the type's persistence as the sender's flag, the digest as
    /// `fallbackText` and the push text. With `viaContainer`, the message is sent under the type's
    /// container (`MS:Custom` for a type with a plain `businessID`) and the container's key is put at the
    /// front of the content when the content lacks it; otherwise it is sent under the type's objectName.
    ///
    /// - Throws: ``MissiveError`` when `objectName` is not a registered type, the type has no container to
    ///   send through, the content holds another value under the container's key, or the content is invalid.
    public func compose(
        objectName: String, content: [UInt8], id: String, conversationID: String, senderID: String, sentAt: Int64,
        parentID: String? = nil, viaContainer: Bool = false
    ) throws(MissiveError) -> Message {
        guard let type = type(objectName: objectName), type.declaredContainer == nil, objectName != UnknownMessage.objectName else {
            throw MissiveError(.malformedContent, "no message type is registered under this objectName", objectName: objectName)
        }
        try Self.checkNewContent(content, objectName: objectName)
        var bytes = content
        var sendAs = objectName
        if viaContainer {
            guard let value = type.businessID, let name = type.container, let container = self.type(objectName: name)?.declaredContainer else {
                throw MissiveError(.malformedContent, "the type has no businessID, so no container can carry it", objectName: objectName)
            }
            bytes = try ContentMembers.inserting(key: container, value: value, into: bytes, objectName: objectName)
            sendAs = container.objectName
        }
        var envelope = Envelope(
            id: id, conversationID: conversationID, senderID: senderID, sentAt: sentAt, objectName: sendAs, content: bytes, parentID: parentID,
            persistence: type.persistence)
        let message = decode(envelope)
        guard message.isKnown, message.content.objectName == objectName else {
            throw MissiveError(.malformedContent, "the content is not valid for the type: \(message.unknown?.reason.description ?? "it decodes as \(message.content.objectName)")",
                               objectName: objectName)
        }
        envelope.fallbackText = message.digest
        envelope.pushContent = message.content.pushContent
        return Message(envelope: envelope, content: message.content)
    }

    /// A new message made by this host from a value of a built-in or host-registered Swift type; see
    /// ``compose(objectName:content:id:conversationID:senderID:sentAt:parentID:viaContainer:)``.
    public func compose<T: MessageType>(
        _ value: T, id: String, conversationID: String, senderID: String, sentAt: Int64, parentID: String? = nil, viaContainer: Bool = false
    ) throws(MissiveError) -> Message {
        try compose(objectName: T.objectName, content: try TypedContent(value).typeEncodedContent(), id: id, conversationID: conversationID,
                    senderID: senderID, sentAt: sentAt, parentID: parentID, viaContainer: viaContainer)
    }

    /// Gives a received message new content of the same type, made by the type (a plugin's action, an
    /// editor), keeping the members the type does not know.
    ///
    /// The new content is kept as given (spacing included). The members of the received content that
    /// are in neither `newContent` nor the type's own encoding of the received message are carried over after
    /// the new ones, in their received order and spelling (see `ContentMembers`), so that a newer sender's
    /// fields and a container's key survive an edit by an older host. The envelope keeps its objectName, so
    /// content that came in a container goes out in it, and the result must decode, through the registry,
    /// to the same type: an edit cannot change the value a container dispatches on. The envelope's
    /// `fallbackText` and `pushContent` are written again from the new content, as ``compose(objectName:content:id:conversationID:senderID:sentAt:parentID:viaContainer:)``
    /// writes them, so that a host without the type never shows or pushes the old text.
    ///
    /// - Throws: ``MissiveError`` when the message is unknown, its type is no longer registered, or the new
    ///   content is not one JSON object in UTF-8, has a member twice, is invalid for the type, or would
    ///   dispatch to another type.
    public func edit(_ message: Message, content newContent: [UInt8]) throws(MissiveError) -> Message {
        let objectName = message.content.objectName
        guard message.isKnown, type(objectName: objectName) != nil else {
            throw MissiveError(.malformedContent, "only a message of a registered type can be edited", objectName: objectName)
        }
        try Self.checkNewContent(newContent, objectName: objectName)
        var envelope = message.envelope
        envelope.content = try message.contentKeepingUnknownMembers(newContent)
        let edited = decode(envelope)
        guard edited.isKnown, edited.content.objectName == objectName else {
            let why = edited.unknown?.reason.description ?? "it would be decoded as \(edited.content.objectName)"
            throw MissiveError(.malformedContent, "the edited content is not valid for the type: \(why)", objectName: objectName)
        }
        // The envelope's fallbackText and pushContent describe the old content: a host without the type would
        // show and push stale text. They are written from the new content, as compose writes them.
        var refreshed = edited.envelope
        refreshed.fallbackText = edited.digest
        refreshed.pushContent = edited.content.pushContent
        return Message(envelope: refreshed, content: edited.content)
    }

    /// Gives a received message of a built-in or host-registered Swift type a new value; see
    /// ``edit(_:content:)``.
    ///
    /// - Throws: ``MissiveError`` as ``edit(_:content:)`` does, and when the message is not of type `T`.
    public func edit<T: MessageType>(_ message: Message, to value: T) throws(MissiveError) -> Message {
        guard message.content.objectName == T.objectName else {
            throw MissiveError(.malformedContent, "a message of type \(message.content.objectName) cannot be edited into one of type \(T.objectName)",
                               objectName: message.content.objectName)
        }
        return try edit(message, content: try TypedContent(value).typeEncodedContent())
    }

    /// Refuses new content that is not exactly one JSON object in UTF-8, or that has a member twice.
    private static func checkNewContent(_ content: [UInt8], objectName: String) throws(MissiveError) {
        guard content.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) != nil else {
            throw MissiveError(.malformedContent, "the new content is not valid UTF-8", objectName: objectName)
        }
        guard let members = ContentMembers(content) else {
            throw MissiveError(.malformedContent, "the new content is not one JSON object", objectName: objectName)
        }
        var seen: Set<String> = []
        for member in members.members where !seen.insert(member.key).inserted {
            throw MissiveError(.malformedContent, "the new content has the member '\(member.key)' twice", objectName: objectName)
        }
    }
}
