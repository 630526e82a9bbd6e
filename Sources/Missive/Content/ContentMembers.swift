import MissiveCore

/// The top-level members of a JSON object content, as written: what container dispatch reads and what
/// edits carry over.
package struct ContentMembers {
    /// One member: its decoded key and the byte ranges of the key (quotes included) and of the value.
    package struct Member {
        package let key: String
        package let keyRange: Range<Int>
        package let valueRange: Range<Int>
    }

    /// The members, in the order written.
    package let members: [Member]

    /// Reads the members of `content`, or gives `nil` when it is not exactly one JSON object.
    package init?(_ content: UnsafeBufferPointer<UInt8>) {
        var scanner = JSONScanner(content)
        var members: [Member] = []
        do {
            try scanner.scanMembers { (key, keyRange, valueRange) throws(MissiveJSONError) in
                members.append(Member(key: key, keyRange: keyRange, valueRange: valueRange))
            }
        } catch {
            return nil
        }
        self.members = members
    }

    /// Reads the members of `content`, or gives `nil` when it is not exactly one JSON object.
    package init?(_ content: [UInt8]) {
        guard let members = content.withUnsafeBufferPointer({ ContentMembers($0) }) else { return nil }
        self = members
    }

    /// The first member named `key`.
    package func first(_ key: String) -> Member? {
        members.first { $0.key == key }
    }

    /// New content for a message whose type made `newContent` from it, keeping what the type does not
    /// know, by the rule of missive_plugin.h ("Content, and what a type must not lose").
    ///
    /// The members of `newContent` come first, unchanged. Then come the top-level members of `received`
    /// whose keys are in neither `newContent` nor `typeEncoding` (the type's own encoding of the received
    /// message, which shows what it knows), in received order and spelling. A member the type knows is
    /// never carried over, so an edit that drops an optional member drops it.
    ///
    /// - Throws: ``MissiveError/Code/pluginFailure`` when `newContent` or `typeEncoding` is not one JSON object.
    package static func carryingOver(
        from received: [UInt8], typeEncoding: [UInt8], into newContent: [UInt8], objectName: String
    ) throws(MissiveError) -> [UInt8] {
        guard let new = ContentMembers(newContent) else {
            throw MissiveError(.pluginFailure, "the new content is not one JSON object", objectName: objectName)
        }
        guard let known = ContentMembers(typeEncoding) else {
            throw MissiveError(.pluginFailure, "the type's encoding of the message is not one JSON object", objectName: objectName)
        }
        // Content received as something other than an object has no members to keep.
        guard let old = ContentMembers(received) else { return newContent }
        let knownKeys = Set(new.members.map(\.key)).union(known.members.map(\.key))
        let carried = old.members.filter { !knownKeys.contains($0.key) }
        guard !carried.isEmpty else { return newContent }

        var result = newContent
        // Drop the closing brace (and any space after it), then append the carried members before a new one.
        while let last = result.last, last != UInt8(ascii: "}") { result.removeLast() }
        result.removeLast()
        var needsComma = !new.members.isEmpty
        for member in carried {
            if needsComma { result.append(UInt8(ascii: ",")) }
            needsComma = true
            result += received[member.keyRange]
            result.append(UInt8(ascii: ":"))
            result += received[member.valueRange]
        }
        result.append(UInt8(ascii: "}"))
        return result
    }

    /// `content` with the member a container dispatches on, `key: value`, put first, unless it already has
    /// it with that value.
    ///
    /// - Throws: ``MissiveError/Code/malformedContent`` when `content` is not an object or holds another
    ///   value under the key.
    package static func inserting(key container: MessageContainer, value: String, into content: [UInt8], objectName: String) throws(MissiveError) -> [UInt8] {
        guard let members = ContentMembers(content), let open = content.firstIndex(of: UInt8(ascii: "{")) else {
            throw MissiveError(.malformedContent, "the content is not one JSON object", objectName: objectName)
        }
        if members.first(container.key) != nil {
            let present = content.withUnsafeBufferPointer { MessageRegistry.dispatchValue(of: container, in: $0) }
            guard case .value(value) = present else {
                throw MissiveError(.malformedContent, "the content's '\(container.key)' is not \(value), the value of its type in \(container.objectName)",
                                   objectName: objectName)
            }
            return content
        }
        var member = MissiveJSONWriter()
        member.beginObject()
        member.key(container.key)
        switch container.keyKind {
        case .string: member.string(value)
        case .integer: member.raw(Array(value.utf8))
        }
        member.endObject()
        let inner = member.bytes.dropFirst().dropLast()
        return Array(content[...open]) + inner + (members.members.isEmpty ? [] : [UInt8(ascii: ",")]) + content[(open + 1)...]
    }
}
