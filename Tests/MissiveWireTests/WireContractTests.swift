import Foundation
import MissiveCore
import MissiveTestSupport
import MissiveWire
import Testing

/// docs/SERVER.md against the wire types: each `<!-- wire: NAME -->` block holds exactly the fields, by name and
/// nesting, that the type named NAME writes; every type has its block; every block reads as its type. The server
/// writes these types and the client reads them, so a field renamed or added on one side fails here until the
/// document says the same.
@Suite struct WireContractTests {
    static let documentPath = Fixtures.repositoryRoot + "/docs/SERVER.md"

    /// The document's blocks, by name, as text.
    static func documentedBlocks() throws -> [String: String] {
        let text = try String(contentsOfFile: documentPath, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"<!-- wire: ([a-z-]+) -->\n```json\n(.*?)\n```"#, options: [.dotMatchesLineSeparators])
        var blocks: [String: String] = [:]
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!])
            #expect(blocks[name] == nil, "docs/SERVER.md has two blocks named \(name)")
            blocks[name] = String(text[Range(match.range(at: 2), in: text)!])
        }
        // A marker whose block does not follow it would be left out silently.
        #expect(text.components(separatedBy: "<!-- wire: ").count - 1 == blocks.count, "a <!-- wire: NAME --> marker without its json block")
        return blocks
    }

    static func parsed(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) }

    /// The types by name.
    static let types: [String: any WireType.Type] = Dictionary(uniqueKeysWithValues: WireCatalog.all.map { ($0.wireName, $0) })

    /// A block with every `"$shape"` replaced by that shape's block and `"$json"` (JSON a member keeps as it came,
    /// such as an envelope) by an empty object: a document the type can read.
    static func expanded(_ value: Any, blocks: [String: String], depth: Int = 0) throws -> Any {
        try #require(depth < 16, "shapes refer to each other without end")
        switch value {
        case let object as [String: Any]: return try object.mapValues { try expanded($0, blocks: blocks, depth: depth + 1) }
        case let array as [Any]: return try array.map { try expanded($0, blocks: blocks, depth: depth + 1) }
        case "$json" as String: return [String: Any]()
        case let text as String where text.hasPrefix("$"):
            let block = try #require(blocks[String(text.dropFirst())], "no block named \(text.dropFirst()) in docs/SERVER.md")
            return try expanded(try parsed(block), blocks: blocks, depth: depth + 1)
        default: return value
        }
    }

    /// Every field of a JSON value as a path (`members[].draws`). Every scalar is a leaf.
    static func paths(_ value: Any, prefix: String = "") -> Set<String> {
        switch value {
        case let object as [String: Any]:
            var result: Set<String> = []
            for (key, member) in object {
                let path = prefix.isEmpty ? key : prefix + "." + key
                result.insert(path)
                result.formUnion(paths(member, prefix: path))
            }
            return result
        case let array as [Any]:
            return array.reduce(into: Set<String>()) { $0.formUnion(paths($1, prefix: prefix + "[]")) }
        default:
            return []
        }
    }

    /// The JSON of a type's example, as the server writes it (an encoding that fails fails the test, rather than
    /// being written as the `{}` that ``WireType/encoded()`` falls back to).
    static func example(_ type: any WireType.Type) throws -> Any {
        let bytes = try JSONWriterEncoder.encode(type.wireExample)
        #expect(bytes == type.wireExample.encoded())
        return try parsed(String(decoding: bytes, as: UTF8.self))
    }

    @Test func everyTypeHasABlockAndEveryBlockAType() throws {
        let blocks = try Self.documentedBlocks()
        #expect(Self.types.count == WireCatalog.all.count, "two wire types share a name")
        #expect(Set(blocks.keys).subtracting(Self.types.keys).sorted() == [], "blocks in docs/SERVER.md that no wire type writes")
        #expect(Set(Self.types.keys).subtracting(blocks.keys).sorted() == [], "wire types that docs/SERVER.md does not show")
    }

    @Test func theDocumentedFieldsAreExactlyTheWrittenOnes() throws {
        let blocks = try Self.documentedBlocks()
        for (name, type) in Self.types {
            guard let block = blocks[name] else { continue }
            let documented = Self.paths(try Self.expanded(try Self.parsed(block), blocks: blocks))
            // An envelope kept as it came is a leaf in the document (`"$json"`): its members are the sender's.
            let written = Self.paths(try Self.example(type)).filter { !$0.contains("envelope.") }
            #expect(written.subtracting(documented).sorted() == [], "\(name): fields the server writes that docs/SERVER.md does not show")
            #expect(documented.subtracting(written).sorted() == [], "\(name): fields docs/SERVER.md shows that the server does not write")
        }
    }

    /// What the document shows is what a client reads: each block, its shapes filled in, reads as its type, and
    /// writing that value again gives the same fields.
    @Test func everyBlockReadsAsItsType() throws {
        let blocks = try Self.documentedBlocks()
        for (name, type) in Self.types {
            guard let block = blocks[name] else { continue }
            let document = try JSONSerialization.data(withJSONObject: try Self.expanded(try Self.parsed(block), blocks: blocks))
            do {
                let value = try type.decoded(from: [UInt8](document))
                let again = Self.paths(try Self.parsed(String(decoding: value.encoded(), as: UTF8.self)))
                #expect(again == Self.paths(try Self.parsed(String(decoding: document, as: UTF8.self))), "\(name)")
            } catch {
                Issue.record("\(name): docs/SERVER.md's block does not read as \(type): \(error)")
            }
        }
    }

    /// An absent optional is written as `null`, and an empty array shows no element: an example with either would
    /// hide the fields under it from the comparison above.
    @Test func theExamplesShowEveryField() throws {
        func holes(_ value: Any, _ path: String) -> [String] {
            switch value {
            case is NSNull: return [path + " is null"]
            case let array as [Any]: return array.isEmpty ? [path + " is empty"] : array.flatMap { holes($0, path + "[]") }
            case let object as [String: Any]: return object.flatMap { holes($0.value, path + "." + $0.key) }
            default: return []
            }
        }
        for (name, type) in Self.types {
            #expect(holes(try Self.example(type), name) == [])
        }
    }

    /// Every wire type in the module's sources is in the catalog: one `static let wireName` (or `var`) per type.
    @Test func everyWireTypeIsInTheCatalog() throws {
        let folder = Fixtures.repositoryRoot + "/Sources/MissiveWire"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
        let name = try NSRegularExpression(pattern: #"static (?:let|var) wireName(?:: String)? (?:= |\{ )"([a-z-]+)""#)
        var declared: [String] = []
        for file in files {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            declared += name.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: 1), in: text)!]) }
        }
        #expect(declared.count >= 30)
        #expect(declared.sorted() == Self.types.keys.sorted())
    }

    /// A message crosses the wire byte for byte: its envelope, spacing and number spellings included, comes back
    /// as it was written.
    @Test func aMessagesEnvelopeIsReadBackByteForByte() throws {
        let envelope = Array(#"{"objectName":"x:y" , "content":{"n":1.50e1,"s":"\u00e9"},"extra":[ true ]}"#.utf8)
        var message = RemoteMessage.wireExample
        message.envelope = envelope
        let event = MessageEvent(type: .edited, position: 7, conversation: "team", message: message)
        let read = try MessageEvent.decoded(from: event.encoded())
        #expect(read == event)
        #expect(read.message.envelope == envelope)
    }

    /// A newer server's answer, with a member this client does not know, still reads; one without a member the
    /// client needs is refused with that member's path.
    @Test func unknownMembersAreSkippedAndMissingOnesNamed() throws {
        let newer = #"{"conversations":[{"id":"team","unreadCount":1,"messageCount":2,"lastMessage":null,"pinned":true}],"cursor":"x"}"#
        let list = try ConversationList.decoded(from: Array(newer.utf8))
        #expect(list.conversations == [RemoteConversation(id: "team", unreadCount: 1, messageCount: 2, lastMessage: nil)])
        let error = #expect(throws: WireDecodingError.self) {
            try ConversationList.decoded(from: Array(#"{"conversations":[{"id":"team","messageCount":2}]}"#.utf8))
        }
        #expect(error?.description == "not a valid conversation-list: conversations[0].unreadCount is missing")
        let wrongKind = #expect(throws: WireDecodingError.self) { try HelloEvent.decoded(from: Array(#"{"type":"hello","member":"b","position":"1","resumed":true}"#.utf8)) }
        #expect(wrongKind?.reason == "position: expected a whole number, found a string")
    }
}
