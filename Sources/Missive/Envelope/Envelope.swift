#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MissiveCore

/// The JSON interchange form of one message: who sent what, when, and the type's encoded content.
///
/// One envelope is one JSON object (one line in JSON Lines):
///
/// | field | type | required | meaning |
/// |---|---|---|---|
/// | `id` | string | yes | the message's unique id |
/// | `conversationID` | string | yes | the conversation it belongs to |
/// | `senderID` | string | yes | who sent it |
/// | `sentAt` | integer | yes | milliseconds since 1970-01-01T00:00:00Z |
/// | `objectName` | string | yes | the content's type |
/// | `content` | any JSON | yes | the type's encoded content, kept byte for byte |
/// | `parentID` | string | no | the quoted message, for a reply |
/// | `persistence` | 0, 1, 3 or 16 | no | the sender's persistence flag |
/// | `fallbackText` | string | no | the sender's digest, for hosts that lack the type |
/// | `pushContent` | string | no | the sender's push text |
///
/// Members with other names are kept, in order, in ``additionalFields`` and written back out, so that a
/// newer sender's fields survive an older host.
public struct Envelope: Sendable, Hashable {
    /// A member of the envelope that Missive does not interpret, kept as raw JSON.
    public struct AdditionalField: Sendable, Hashable {
        /// The member's name.
        public var name: String
        /// The member's value, as the JSON bytes received.
        public var rawValue: [UInt8]

        /// Creates a field.
        public init(name: String, rawValue: [UInt8]) {
            self.name = name
            self.rawValue = rawValue
        }
    }

    /// The message's unique id.
    public var id: String
    /// The conversation the message belongs to.
    public var conversationID: String
    /// The sender's id.
    public var senderID: String
    /// When the message was sent, in milliseconds since the Unix epoch.
    public var sentAt: Int64
    /// The content's type.
    public var objectName: String
    /// The content, as JSON bytes exactly as received.
    public var content: [UInt8]
    /// The id of the message this one replies to (quote reply, one level deep).
    public var parentID: String?
    /// The sender's persistence flag.
    public var persistence: Persistence?
    /// The sender's digest, shown by hosts that lack the type.
    public var fallbackText: String?
    /// The sender's push text.
    public var pushContent: String?
    /// Members this version of Missive does not know, kept in the order received.
    public var additionalFields: [AdditionalField]

    /// Creates an envelope. `content` must be valid JSON.
    public init(
        id: String, conversationID: String, senderID: String, sentAt: Int64, objectName: String, content: [UInt8],
        parentID: String? = nil, persistence: Persistence? = nil, fallbackText: String? = nil,
        pushContent: String? = nil, additionalFields: [AdditionalField] = []
    ) {
        self.id = id
        self.conversationID = conversationID
        self.senderID = senderID
        self.sentAt = sentAt
        self.objectName = objectName
        self.content = content
        self.parentID = parentID
        self.persistence = persistence
        self.fallbackText = fallbackText
        self.pushContent = pushContent
        self.additionalFields = additionalFields
    }

    /// Parses one envelope from its JSON text.
    ///
    /// - Throws: ``MissiveError/Code/malformedEnvelope`` naming the problem, when the text is not valid
    ///   UTF-8 JSON, a required field is missing, or a field has the wrong type.
    public init(parsing json: some Collection<UInt8>) throws(MissiveError) {
        let parsed: Result<Envelope, MissiveError>? = json.withContiguousStorageIfAvailable { Envelope.parse($0) }
        switch parsed ?? Array(json).withUnsafeBufferPointer({ Envelope.parse($0) }) {
        case .success(let envelope): self = envelope
        case .failure(let error): throw error
        }
    }

    /// The members an envelope defines, each a bit of the set of those seen.
    private enum Field: UInt16 {
        case id = 0x1, conversationID = 0x2, senderID = 0x4, objectName = 0x8, parentID = 0x10, fallbackText = 0x20
        case pushContent = 0x40, sentAt = 0x80, content = 0x100, persistence = 0x200

        /// The field whose name a key holds, matched as bytes; a key with escapes or other than ASCII bytes is
        /// decoded and compared as a `String`, as the names were always compared.
        init?(key: Range<Int>, shape: JSONScanner.StringShape, in buffer: UnsafeBufferPointer<UInt8>, _ reader: JSONValueReader) {
            guard shape.isPlainASCII else {
                switch reader.decodeString(key) {
                case "id": self = .id
                case "conversationID": self = .conversationID
                case "senderID": self = .senderID
                case "objectName": self = .objectName
                case "parentID": self = .parentID
                case "fallbackText": self = .fallbackText
                case "pushContent": self = .pushContent
                case "sentAt": self = .sentAt
                case "content": self = .content
                case "persistence": self = .persistence
                default: return nil
                }
                return
            }
            // The length picks at most two candidates; one comparison of bytes settles it.
            switch key.count {
            case 2 where Self.bytes(buffer, key, equal: "id"): self = .id
            case 6 where Self.bytes(buffer, key, equal: "sentAt"): self = .sentAt
            case 7 where Self.bytes(buffer, key, equal: "content"): self = .content
            case 8 where Self.bytes(buffer, key, equal: "senderID"): self = .senderID
            case 8 where Self.bytes(buffer, key, equal: "parentID"): self = .parentID
            case 10 where Self.bytes(buffer, key, equal: "objectName"): self = .objectName
            case 11 where Self.bytes(buffer, key, equal: "pushContent"): self = .pushContent
            case 11 where Self.bytes(buffer, key, equal: "persistence"): self = .persistence
            case 12 where Self.bytes(buffer, key, equal: "fallbackText"): self = .fallbackText
            case 14 where Self.bytes(buffer, key, equal: "conversationID"): self = .conversationID
            default: return nil
            }
        }

        /// Whether the bytes at `range` are exactly the ASCII text `name`. In this module, so that the
        /// compiler sees the name's length and compares with a few loads instead of a call.
        @inline(__always)
        private static func bytes(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, equal name: StaticString) -> Bool {
            let count = name.utf8CodeUnitCount
            guard range.count == count, let base = buffer.baseAddress else { return false }
            return memcmp(base + range.lowerBound, name.utf8Start, count) == 0
        }

        /// The member's name, as error messages give it.
        var name: String {
            switch self {
            case .id: "id"
            case .conversationID: "conversationID"
            case .senderID: "senderID"
            case .objectName: "objectName"
            case .parentID: "parentID"
            case .fallbackText: "fallbackText"
            case .pushContent: "pushContent"
            case .sentAt: "sentAt"
            case .content: "content"
            case .persistence: "persistence"
            }
        }
    }

    /// Parses in one pass: keys are matched as bytes, UTF-8 is validated inside strings as they are
    /// scanned (the only place valid JSON can hold bytes of 0x80 or more), and `content` stays a range of
    /// `buffer` until the one copy the envelope keeps. Only the values of the string fields become `String`s.
    private static func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Envelope, MissiveError> {
        // Typed locals and a bit per known field: this runs once per message, so no dictionaries.
        var scanner = JSONScanner(buffer, validatingUTF8: true)
        let reader = JSONValueReader(buffer)
        var id: String?, conversationID: String?, senderID: String?, objectName: String?
        var parentID: String?, fallbackText: String?, pushContent: String?
        var sentAt: Int64?
        var content: Range<Int>?
        var persistence: Persistence?
        var additional: [AdditionalField] = []
        var seen: UInt16 = 0
        var problem: String?

        func fieldError(_ field: Field, _ expected: String) -> MissiveJSONError {
            MissiveJSONError(offset: -1, message: "field '\(field.name)' must be \(expected)")
        }

        do throws(MissiveJSONError) {
            try scanner.scanMemberRanges { (key, shape, range, valueShape) throws(MissiveJSONError) in
                guard let field = Field(key: key, shape: shape, in: buffer, reader) else {
                    let name = reader.decodeString(key)
                    if additional.contains(where: { $0.name == name }) {
                        throw MissiveJSONError(offset: range.lowerBound, message: "field '\(name)' appears twice")
                    }
                    additional.append(AdditionalField(name: name, rawValue: Array(buffer[range])))
                    return
                }
                func string(optional: Bool) throws(MissiveJSONError) -> String? {
                    if optional && reader.firstByte(range) == UInt8(ascii: "n") { return nil }  // explicit null: absent
                    guard let value = reader.stringValue(range, shape: valueShape) else { throw fieldError(field, "a string") }
                    return value
                }
                switch field {
                case .id: id = try string(optional: false)
                case .conversationID: conversationID = try string(optional: false)
                case .senderID: senderID = try string(optional: false)
                case .objectName: objectName = try string(optional: false)
                case .parentID: parentID = try string(optional: true)
                case .fallbackText: fallbackText = try string(optional: true)
                case .pushContent: pushContent = try string(optional: true)
                case .sentAt:
                    guard let value = reader.decodeInt64(range) else { throw fieldError(field, "an integer (milliseconds since 1970)") }
                    sentAt = value
                case .content:
                    content = range
                case .persistence:
                    if reader.firstByte(range) != UInt8(ascii: "n") {
                        guard let raw = reader.decodeInt64(range), let flag = UInt32(exactly: raw).flatMap(Persistence.init(rawValue:)) else {
                            throw fieldError(field, "one of 0, 1, 3 and 16")
                        }
                        persistence = flag
                    }
                }
                guard seen & field.rawValue == 0 else {
                    throw MissiveJSONError(offset: range.lowerBound, message: "field '\(field.name)' appears twice")
                }
                seen |= field.rawValue
            }
        } catch {
            // The scan stopped at the first problem, UTF-8 or not. Invalid UTF-8 anywhere is what is reported
            // then, as when the whole line was checked before the scan; a failure is rare enough for a pass.
            problem = !isValidUTF8(buffer) ? "envelope is not valid UTF-8" : error.offset < 0 ? error.message : error.description
        }
        if problem == nil {
            // In the order of the table, without building one.
            if id == nil {
                problem = "missing required field 'id'"
            } else if conversationID == nil {
                problem = "missing required field 'conversationID'"
            } else if senderID == nil {
                problem = "missing required field 'senderID'"
            } else if objectName == nil {
                problem = "missing required field 'objectName'"
            } else if sentAt == nil {
                problem = "missing required field 'sentAt'"
            } else if content == nil {
                problem = "missing required field 'content'"
            }
        }
        guard problem == nil, let id, let conversationID, let senderID, let objectName, let sentAt, let content else {
            return .failure(MissiveError(.malformedEnvelope, problem ?? "malformed envelope", objectName: objectName))
        }
        return .success(
            Envelope(
                id: id, conversationID: conversationID, senderID: senderID, sentAt: sentAt, objectName: objectName,
                content: Array(buffer[content]), parentID: parentID, persistence: persistence, fallbackText: fallbackText,
                pushContent: pushContent, additionalFields: additional))
    }

    /// Whether bytes are well-formed UTF-8 (no overlong forms, surrogates or values above U+10FFFF), without
    /// allocating: only for a line that failed to parse, to tell invalid UTF-8 from other problems.
    private static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int, minimum: UInt32
            switch lead {
            case 0xC2...0xDF: (length, minimum) = (2, 0x80)
            case 0xE0...0xEF: (length, minimum) = (3, 0x800)
            case 0xF0...0xF4: (length, minimum) = (4, 0x10000)
            default: return false
            }
            guard index + length <= count else { return false }
            var scalar = UInt32(lead) & (0xFF >> (length + 1))
            for offset in 1..<length {
                let byte = bytes[index + offset]
                guard byte & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(byte & 0x3F)
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return false }
            index += length
        }
        return true
    }

    /// The envelope as one line of JSON, without a trailing newline.
    ///
    /// Fields come in the order of the table above, then ``additionalFields``; optional fields that are
    /// `nil` are left out. `content` is written byte for byte.
    public func encoded() -> [UInt8] {
        var writer = MissiveJSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    package func write(to writer: inout MissiveJSONWriter) {
        writer.beginObject()
        writer.field("id", id)
        writer.field("conversationID", conversationID)
        writer.field("senderID", senderID)
        writer.field("sentAt", sentAt)
        writer.field("objectName", objectName)
        writer.key("content")
        writer.raw(content)
        if let parentID {
            writer.field("parentID", parentID)
        }
        if let persistence {
            writer.field("persistence", persistence.rawValue)
        }
        if let fallbackText {
            writer.field("fallbackText", fallbackText)
        }
        if let pushContent {
            writer.field("pushContent", pushContent)
        }
        for field in additionalFields {
            writer.key(field.name)
            writer.raw(field.rawValue)
        }
        writer.endObject()
    }
}

extension JSONScanner {
    /// Where the first top-level member named `name` of a JSON object document is.
    package enum MemberLookup {
        /// The document is not exactly one JSON object.
        case notAnObject
        /// The object has no member of that name.
        case missing
        /// The byte range of the first such member's value.
        case value(Range<Int>)
    }

    /// Finds the first top-level member `name` of a JSON object document, matching keys as bytes: no key
    /// becomes a `String` unless it has escapes or other than ASCII bytes.
    package static func firstMember(_ name: String, in json: UnsafeBufferPointer<UInt8>) -> MemberLookup {
        var scanner = JSONScanner(json)
        let reader = JSONValueReader(json)
        var found: Range<Int>?
        do {
            try scanner.scanMemberRanges { (key, shape, value, _) throws(MissiveJSONError) in
                if found == nil, reader.string(key, shape: shape, equals: name) { found = value }
            }
        } catch {
            return .notAnObject
        }
        return found.map { .value($0) } ?? .missing
    }

    /// Finds the top-level string member `name` of a JSON object document, if the document is an object
    /// and has one. Returns `nil` for anything else, including invalid JSON.
    package static func topLevelString(_ name: String, in json: UnsafeBufferPointer<UInt8>) -> String? {
        guard case .value(let range) = firstMember(name, in: json) else { return nil }
        return JSONValueReader(json).stringValue(range)
    }
}
