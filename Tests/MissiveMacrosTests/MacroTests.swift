import Foundation
import Testing

/// The SDK's macros refuse, while compiling, the names a host would refuse at load time.
@Suite struct MacroTests {
    @Test func validNamesExpand() async throws {
        let outcome = try await MacroCompilation.typecheck(
            MacroCompilation.messageType(#"@MissiveMessage("acme:order", businessID: "order", persistence: .counted)"#)
                + MacroCompilation.messageType(#"@MissiveMessage("acme:typing", persistence: .status)"#, name: "B"))
        #expect(outcome.errors.isEmpty, "\(outcome.errors)")
        #expect(outcome.records.contains(#"{"record":"type","objectName":"acme:order","businessID":"order","persistence":3,"flags":0}"#), "\(outcome.records)")
        #expect(outcome.records.contains { $0.hasPrefix(#"{"record":"type","objectName":"acme:typing","#) }, "\(outcome.records)")
    }

    @Test func badOrReservedNamesAreCompileErrors() async throws {
        let cases: [(attribute: String, error: String)] = [
            (#"@MissiveMessage("MS:vote", persistence: .counted)"#, "objectName 'MS:vote' uses the prefix 'MS:', reserved for Missive's built-in types"),
            (#"@MissiveMessage("trial vote!", persistence: .counted)"#, "'trial vote!'"),
            (#"@MissiveMessage("acme:vote", businessID: "MS_vote", persistence: .counted)"#, "businessID 'MS_vote' uses a prefix reserved for Missive"),
            (#"@MissiveMessage("acme:vote", businessID: "a:b", persistence: .counted)"#, "'a:b'"),
            (#"@MissiveMessage(name, persistence: .counted)"#, "the objectName must be a string literal"),
        ]
        let (errors, outcome) = try await MacroCompilation.errorsOfEach(
            cases.enumerated().map { MacroCompilation.messageType($0.element.attribute, name: "A\($0.offset)") }, prelude: "let name = \"acme:x\"\n")
        for (index, expected) in cases.enumerated() {
            #expect(errors[index].contains { $0.contains(expected.error) }, "\(expected.attribute): \(errors[index])")
        }
        #expect(outcome.records.allSatisfy { !$0.contains(#""record":"type""#) }, "a refused type wrote its record: \(outcome.records)")
    }
}

/// `@MissiveAction`: the signature, the kind and what it yields come from the method's declaration, and a
/// method the host could not call is a compile error.
@Suite struct ActionMacroTests {
    @Test func signaturesComeFromTheParameters() async throws {
        let members = """
            @MissiveAction("vote", title: "Vote", icon: "checkmark", priority: 10) func vote(option: Int32, voterID who: String) throws -> A { self }
                @MissiveAction("open", title: "Open", icon: "link") func open() -> URL { fatalError() }
                @MissiveAction("demo.poll.create", title: "Poll", icon: "chart.bar", priority: -5) static func create(_ question: String, maxVotes: Int, anonymous: Bool, weight: Double, stamp: Int64) -> Self { fatalError() }
                @MissiveAction("x", title: "X", icon: "x") func x(message: String, out: Int32) -> A { self }
                @MissiveAction("names", title: "Names", icon: "x") func names(voterID: String, URLPath: String) -> A { self }
            """
        let outcome = try await MacroCompilation.typecheck(
            "import Foundation\n" + MacroCompilation.messageType(#"@MissiveMessage("demo:poll", persistence: .counted)"#, members: members))
        #expect(outcome.errors.isEmpty, "\(outcome.errors)")
        let actions = Dictionary(
            outcome.records.filter { $0.contains(#""record":"action""#) }.map { record in
                (record.components(separatedBy: #""id":""#)[1].components(separatedBy: "\"")[0], record)
            }, uniquingKeysWith: { first, _ in first })
        #expect(actions["vote"] == #"{"record":"action","kind":"message","objectName":"demo:poll","id":"vote","title":"Vote","icon":"checkmark","priority":10,"yields":"content","signature":"int32(message message, int32 option, string who, sink out)"}"#, "\(actions)")
        let open = actions["open"] ?? ""
        #expect(open.contains(#""priority":0,"yields":"url","signature":"int32(message message, sink out)""#), "\(actions)")
        let create = try #require(actions["demo.poll.create"])
        #expect(create.contains(#""kind":"composer""#) && create.contains(#""priority":-5"#) && !create.contains("yields"), "\(create)")
        #expect(create.contains(#""signature":"int32(string question, int64 max_votes, bool anonymous, double weight, int64 stamp, sink out)""#), "\(create)")
        // A parameter named like the generated ones: they step aside.
        let clash = actions["x"] ?? ""
        #expect(clash.contains(#""signature":"int32(message message_, string message, int32 out, sink out_)""#), "\(actions)")
        // Parameter names in snake case, acronyms included.
        let names = actions["names"] ?? ""
        #expect(names.contains("string voter_id, string url_path"), "\(actions)")
    }

    @Test func methodsTheHostCannotCallAreCompileErrors() async throws {
        let many = (0..<17).map { "p\($0): Int32" }.joined(separator: ", ")
        let cases: [(method: String, error: String)] = [
            (#"@MissiveAction("x", title: "X", icon: "x") func x(f: Float) -> Poll { self }"#, "is a Float"),
            (#"@MissiveAction("x", title: "X", icon: "x") func x() async -> Poll { self }"#, "cannot be async"),
            (#"@MissiveAction("x", title: "X", icon: "x") mutating func x() -> Poll { self }"#, "mutating"),
            (#"@MissiveAction("x", title: "X", icon: "x") func x(n: Int32 = 1) -> Poll { self }"#, "default value"),
            (#"@MissiveAction("x", title: "X", icon: "x") func x() -> String { "" }"#, "returns the message's new content"),
            (#"@MissiveAction("x", title: "X", icon: "x") static func x() -> URL { fatalError() }"#, "composer action"),
            (#"@MissiveAction("a b", title: "X", icon: "x") func x() -> Poll { self }"#, "action id"),
            (#"@MissiveAction("x", title: "", icon: "x") func x() -> Poll { self }"#, "the title is empty"),
            (#"@MissiveAction("x", title: "X", icon: "a/b") func x() -> Poll { self }"#, "icon name"),
            (#"@MissiveAction("x", title: "X", icon: "x", priority: level) func x() -> Poll { self }"#, "priority must be an integer literal"),
            (#"@MissiveAction("x", title: "X", icon: "x") func x(\#(many)) -> Poll { self }"#, "at most 16"),
        ]
        let (errors, _) = try await MacroCompilation.errorsOfEach(
            cases.enumerated().map { index, entry in
                MacroCompilation.messageType(
                    #"@MissiveMessage("demo:a\#(index)", persistence: .counted)"#, name: "A\(index)",
                    members: entry.method.replacingOccurrences(of: "-> Poll", with: "-> A\(index)"))
            }, prelude: "import Foundation\nlet level: Int32 = 1\n")
        for (index, expected) in cases.enumerated() {
            #expect(errors[index].contains { $0.contains(expected.error) }, "\(expected.method): \(errors[index])")
        }
    }
}

/// The coding `@MissiveMessage` and `@MissiveCoding` generate, and the types that keep the Codable path.
@Suite struct CodingMacroTests {
    /// The expansions of `source`, which declares types carrying `@MissiveMessage` or `@MissiveCoding`.
    static func expansions(_ source: String) async throws -> MacroCompilation.Outcome {
        try await MacroCompilation.typecheck("import Foundation\nstruct Money: Codable { var cents: Int }\n" + source)
    }

    /// `text` without its white space, for comparing code however the compiler's printing lays it out.
    static func squeezed(_ text: String) -> String { String(text.unicodeScalars.filter { !$0.properties.isWhitespace }.map(Character.init)) }

    @Test func storedPropertiesAreCodedAndOthersLeftOut() async throws {
        let outcome = try await Self.expansions(
            """
            @MissiveCoding struct Poll: Codable {
                var question: String
                var votes: [Int]?
                var `default`: Money
                var observed: Int { didSet { } }
                var digest: String { question }
                var computed: Int { get { 1 } set { } }
                static var examples: [Poll] { [] }
                static let shared = 1
            }
            @MissiveCoding struct Small: Codable { var question: String; var votes: [Int]? }
            """)
        #expect(outcome.errors.isEmpty, "\(outcome.errors)")
        let text = outcome.expansions
        for coded in ["question", "votes", "default", "observed"] {
            #expect(text.contains("_missive_\(coded): ("), "\(coded) is not decoded")
        }
        for left in ["digest", "computed", "examples", "shared"] {
            #expect(!text.contains("_missive_\(left)"), "\(left) is decoded")
        }
        let expected = """
            public init(missiveJSON reader: inout MissivePluginKit.MissiveJSONReader) throws {
                var _missive_question: (String)? = nil
                var _missive_votes: ([Int]?)? = nil
                var cursor = try reader.beginObject()
                while let key = try reader.nextKey(&cursor) {
                    if key.matches("question") {
                        guard _missive_question == nil else { throw reader.duplicate(key) }
                        _missive_question = try reader.decode((String).self)
                    } else if key.matches("votes") {
                        guard _missive_votes == nil else { throw reader.duplicate(key) }
                        _missive_votes = try reader.decode(([Int]?).self)
                    } else {
                        try reader.skipValue()
                    }
                }
                if let value = _missive_question {
                    self.question = value
                } else {
                    self.question = try MissivePluginKit.MissiveJSONReader.absent((String).self, key: "question")
                }
                if let value = _missive_votes {
                    self.votes = value
                } else {
                    self.votes = try MissivePluginKit.MissiveJSONReader.absent(([Int]?).self, key: "votes")
                }
            }
            public func writeMissiveJSON(to writer: inout MissivePluginKit.MissiveJSONWriter) throws {
                writer.beginObject()
                try writer.member("question", self.question)
                try writer.member("votes", self.votes)
                writer.endObject()
            }
            """
        #expect(Self.squeezed(text).contains("extensionSmall:MissivePluginKit.MissiveJSONValue{" + Self.squeezed(expected)), "\(text)")
    }

    @Test func aHandWrittenDecodingInitKeepsTheCopy() async throws {
        let text = try await Self.expansions(
            """
            @MissiveMessage("acme:a", persistence: .counted) struct A: Codable { var a: String\n init(decoding content: Data) throws { fatalError() } }
            @MissiveMessage("acme:b", persistence: .counted) struct B: Codable { var a: String }
            """
        ).expansions
        #expect(text.contains("extension A: MissivePluginKit.MissiveJSONValue {"), "\(text)")
        #expect(text.contains("extension B: MissivePluginKit.MissiveJSONValue, MissivePluginKit.MissiveDecodesInPlace {"), "\(text)")
    }

    @Test func rawValueEnumsAreCoded() async throws {
        let outcome = try await Self.expansions(#"@MissiveCoding enum Mood: String, Codable { case happy, sad }"#)
        #expect(outcome.errors.isEmpty, "\(outcome.errors)")
        #expect(outcome.expansions.contains("let raw = try reader.decode(RawValue.self)"), "\(outcome.expansions)")
        // An enum without raw values is not one the macro can read: @MissiveCoding says so.
        let plain = try await Self.expansions(#"@MissiveCoding enum Mood: Codable { case happy, sad }"#)
        #expect(plain.errors.contains { $0.contains("@MissiveCoding needs a Codable struct") && $0.contains("or a Codable enum with a raw type") }, "\(plain.errors)")
        #expect(!plain.expansions.contains("extension Mood: MissivePluginKit.MissiveJSONValue"), "\(plain.expansions)")
    }

    @Test func typesCodableCannotBeReadFromKeepTheCodablePath() async throws {
        let bodies = [
            "{ var a: String }",
            "{ var a: String\n enum CodingKeys: String, CodingKey { case a = \"b\" } }",
            "{ var a: String\n init(from decoder: any Decoder) throws { fatalError() } }",
            "{ var a: String\n func encode(to encoder: any Encoder) throws {} }",
            "{ let a: String = \"fixed\" }",
            "{ var a = \"no type\" }",
            "{ @Wrapped var a: String }",
            "{ lazy var a: String = \"\" }",
            "{ var a, b: String }",
            "{ var café: String }",
        ]
        var source = "@propertyWrapper struct Wrapped<T: Codable>: Codable { var wrappedValue: T }\n"
        for (index, body) in bodies.enumerated() {
            // The first is not Codable at all; the others are, but not in a way the generated reader can follow.
            source += "@MissiveMessage(\"acme:t\(index)\", persistence: .counted) struct T\(index)\(index == 0 ? "" : ": Codable") \(body)\n"
        }
        source += "@MissiveMessage(\"acme:g\", persistence: .counted) struct G<T: Codable>: Codable { var a: T }\n"
        source += "@MissiveMessage(\"acme:c\", persistence: .counted) struct C: Codable { var a: String }\n"
        let text = try await Self.expansions(source).expansions
        for name in bodies.indices.map({ "T\($0)" }) + ["G"] {
            // The macro ran on the type (its names are there), and generated no reader for it.
            #expect(text.contains("extension \(name)"), "\(name) was not expanded")
            #expect(!text.contains("extension \(name): MissivePluginKit.MissiveJSONValue"), "\(name) got the generated coding")
        }
        // The control: a plain Codable struct gets it.
        #expect(text.contains("extension C: MissivePluginKit.MissiveJSONValue"), "\(text)")
    }
}
