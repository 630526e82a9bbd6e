import Foundation
import Missive
import MissiveTestSupport
import Testing

/// docs/CLI-JSON.md against the CLI's output types: each `<!-- json: NAME -->` block holds exactly the fields,
/// by name and nesting, that the type documented as NAME encodes, and every output type has its block. The
/// types are the executable's, so their examples come from it: `missive json-examples` prints the example of
/// every type (``CLIJSON/example``), by the name it is documented under.
@Suite struct CLIJSONContractTests {
    static let documentPath = Fixtures.repositoryRoot + "/docs/CLI-JSON.md"

    /// The examples `missive json-examples` prints, by name.
    static func examples() async throws -> [String: Any] {
        let run = try await Fixtures.missive("json-examples")
        try #require(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    /// The document's blocks, by name, parsed.
    static func documentedBlocks() throws -> [String: Any] {
        let text = try String(contentsOfFile: documentPath, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"<!-- json: ([a-z-]+) -->\n```json\n(.*?)\n```"#, options: [.dotMatchesLineSeparators])
        var blocks: [String: Any] = [:]
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!])
            let json = String(text[Range(match.range(at: 2), in: text)!])
            #expect(blocks[name] == nil, "docs/CLI-JSON.md has two blocks named \(name)")
            blocks[name] = try JSONSerialization.jsonObject(with: Data(json.utf8))
        }
        // A marker whose block does not follow it would be left out silently.
        #expect(text.components(separatedBy: "<!-- json: ").count - 1 == blocks.count, "a <!-- json: NAME --> marker without its json block")
        return blocks
    }

    /// Every field of a JSON value as a path (`types[].plugin.name`), a `"$shape"` string replaced by its block's
    /// fields. `"$json"`, and every other value, is a leaf.
    static func paths(_ value: Any, prefix: String = "", blocks: [String: Any] = [:], depth: Int = 0) throws -> Set<String> {
        try #require(depth < 16, "\(prefix): shapes refer to each other without end")
        switch value {
        case let object as [String: Any]:
            var result: Set<String> = []
            for (key, member) in object {
                let path = prefix.isEmpty ? key : prefix + "." + key
                result.insert(path)
                result.formUnion(try paths(member, prefix: path, blocks: blocks, depth: depth + 1))
            }
            return result
        case let array as [Any]:
            var result: Set<String> = []
            for element in array { result.formUnion(try paths(element, prefix: prefix + "[]", blocks: blocks, depth: depth + 1)) }
            return result
        case let text as String where text.hasPrefix("$") && text != "$json":
            let shape = try #require(blocks[String(text.dropFirst())], "\(prefix): no block named \(text.dropFirst()) in docs/CLI-JSON.md")
            return try paths(shape, prefix: prefix, blocks: blocks, depth: depth + 1)
        default:
            return []
        }
    }

    @Test func everyOutputTypeHasABlockAndEveryBlockAType() async throws {
        let blocks = try Self.documentedBlocks()
        let examples = try await Self.examples()
        #expect(Set(blocks.keys).subtracting(examples.keys).sorted() == [], "blocks in docs/CLI-JSON.md that no output type encodes")
        #expect(Set(examples.keys).subtracting(blocks.keys).sorted() == [], "output types that docs/CLI-JSON.md does not document")
    }

    @Test func theDocumentedFieldsAreExactlyTheEncodedOnes() async throws {
        let blocks = try Self.documentedBlocks()
        for (name, example) in try await Self.examples() {
            guard let block = blocks[name] else { continue }
            let documented = try Self.paths(block, blocks: blocks)
            let encoded = try Self.paths(example)
            #expect(encoded.subtracting(documented).sorted() == [], "\(name): fields the CLI writes that docs/CLI-JSON.md does not document")
            #expect(documented.subtracting(encoded).sorted() == [], "\(name): fields docs/CLI-JSON.md documents that the CLI does not write")
        }
    }

    /// An optional is written as `null` when absent: an example with a `null` or an empty array would hide the
    /// fields under it from the comparison above.
    @Test func theExamplesShowEveryField() async throws {
        func holes(_ value: Any, _ path: String) -> [String] {
            switch value {
            case is NSNull: return [path + " is null"]
            case let array as [Any]: return array.isEmpty ? [path + " is empty"] : array.flatMap { holes($0, path + "[]") }
            case let object as [String: Any]: return object.flatMap { holes($0.value, path + "." + $0.key) }
            default: return []
            }
        }
        for (name, example) in try await Self.examples() {
            #expect(holes(example, name) == [])
        }
    }

    /// Every `CLIJSON` type in the CLI's sources is in the catalog `json-examples` prints: the names its sources
    /// declare (`static let documentedAs = "NAME"`) are the names printed, one per conforming type.
    @Test func everyOutputTypeIsInTheCatalog() async throws {
        let folder = Fixtures.repositoryRoot + "/Sources/missive"
        let files = try #require(FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]).filter { $0.hasSuffix(".swift") }
        // A type of the CLI's own, or one shared with the server that the CLI makes CLIJSON in an extension.
        let conformance = try NSRegularExpression(pattern: #"(?:struct|enum|final class|extension) \w+\s*:[^{]*\bCLIJSON\b"#)
        let name = try NSRegularExpression(pattern: #"static let documentedAs = "([a-z-]+)""#)
        var conforming = 0
        var declared: [String] = []
        for file in files {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            conforming += conformance.numberOfMatches(in: text, range: range)
            declared += name.matches(in: text, range: range).map { String(text[Range($0.range(at: 1), in: text)!]) }
        }
        #expect(conforming >= 30 && conforming == declared.count, "\(conforming) CLIJSON types, \(declared.count) documentedAs names")
        #expect(Set(declared).count == declared.count, "two types are documented under one name: \(declared.sorted())")
        #expect(Set(declared) == Set(try await Self.examples().keys))
    }

    /// The outputs a script reads on its own carry their `schemaVersion`, first; the lines of `decode` and
    /// the shapes inside outputs do not.
    @Test func everyTopLevelOutputStartsWithItsSchemaVersion() async throws {
        let shapes: Set<String> = ["persistence", "container", "rejection", "plugin", "media", "key", "action", "stored-message", "crash", "blacklisted"]
        let unversioned: Set<String> = ["decode", "decode-error"]
        let run = try await Fixtures.missive("json-examples")
        // Each example as written, from `"NAME":{` to the next: the bytes keep the members' order.
        for (name, _) in try await Self.examples() {
            let versioned = run.stdout.contains(#""\#(name)":{"schemaVersion":1,"#)
            #expect(versioned == !(shapes.contains(name) || unversioned.contains(name)), "\(name)")
        }
    }
}

/// ``JSONWriterEncoder``: the bytes ``MissiveJSONWriter``'s calls would write.
@Suite struct JSONWriterEncoderTests {
    struct Inner: Encodable {
        var flag: Bool
        var words: [String]
    }

    struct Sample: Encodable {
        var text: String
        var missing: String?
        var count: Int64
        var small: UInt8
        var rank: Double
        var inner: Inner?
        var absent: Inner?
        var raw: RawJSON
        var list: [Int?]
    }

    @Test func membersInDeclarationOrderNilAsNullRawBytesVerbatim() throws {
        let value = Sample(
            text: "a\"\\\n\t\u{1}\u{7F}é", missing: nil, count: -5, small: 200, rank: -1.25, inner: Inner(flag: true, words: ["x", ""]), absent: nil,
            raw: RawJSON(Array(#"{"b" :[1, 2.50e1 ],"a":"\u0041"}"#.utf8)), list: [1, nil])
        var writer = MissiveJSONWriter()
        writer.beginObject()
        writer.field("text", value.text)
        writer.field("missing", nil)
        writer.field("count", value.count)
        writer.field("small", value.small)
        writer.key("rank")
        writer.raw(Array("-1.25".utf8))
        writer.key("inner")
        writer.beginObject()
        writer.field("flag", true)
        writer.key("words")
        writer.strings(["x", ""])
        writer.endObject()
        writer.key("absent")
        writer.null()
        writer.key("raw")
        writer.raw(value.raw.bytes)
        writer.key("list")
        writer.beginArray()
        writer.integer(1)
        writer.null()
        writer.endArray()
        writer.endObject()
        let encoded = try JSONWriterEncoder.encode(value)
        #expect(String(decoding: encoded, as: UTF8.self) == String(decoding: writer.bytes, as: UTF8.self))
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""raw":{"b" :[1, 2.50e1 ],"a":"\u0041"},"#))
    }

    @Test func aValueInsideAWriterFollowsTheWritersCommas() throws {
        var writer = MissiveJSONWriter()
        writer.beginArray()
        writer.integer(1)
        try JSONWriterEncoder.encode(["a"], into: &writer)
        try JSONWriterEncoder.encode(Optional<String>.none, into: &writer)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"[1,["a"],null]"#)
    }

    @Test func aNumberJSONCannotHoldAndRawJSONElsewhereAreRefused() {
        #expect(throws: EncodingError.self) { try JSONWriterEncoder.encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try JSONWriterEncoder.encode(["x": Double.infinity]) }
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(RawJSON(Array("1".utf8))) }
    }
}
