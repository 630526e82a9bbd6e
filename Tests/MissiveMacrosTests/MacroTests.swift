import MissiveCore
import SwiftParser
import SwiftSyntax
import Testing

@testable import MissiveMacrosSupport

/// The SDK's macros refuse, while compiling, the names a host would refuse at load time.
@Suite struct MacroTests {
    /// The first attribute of `source`, a type declaration carrying `@MissiveMessage(...)`.
    static func attribute(_ source: String) throws -> AttributeSyntax {
        let file = Parser.parse(source: source)
        let declaration = try #require(file.statements.first?.item.as(StructDeclSyntax.self))
        return try #require(declaration.attributes.first?.as(AttributeSyntax.self))
    }

    static func problem(_ source: String) throws -> String? {
        do {
            _ = try MissiveMessageMacro.declared(try attribute(source))
            return nil
        } catch let error as MacroUsageError {
            return error.description
        }
    }

    @Test func validNamesExpand() throws {
        #expect(try Self.problem(#"@MissiveMessage("acme:order", businessID: "order", persistence: .counted) struct A {}"#) == nil)
        #expect(try Self.problem(#"@MissiveMessage("acme:typing", persistence: .status) struct A {}"#) == nil)
    }

    @Test func badOrReservedNamesAreCompileErrors() throws {
        #expect(try Self.problem(#"@MissiveMessage("MS:vote", persistence: .counted) struct A {}"#)
            == "objectName 'MS:vote' uses the prefix 'MS:', reserved for Missive's built-in types")
        #expect(try Self.problem(#"@MissiveMessage("trial vote!", persistence: .counted) struct A {}"#)?.contains("'trial vote!'") == true)
        #expect(try Self.problem(#"@MissiveMessage("acme:vote", businessID: "MS_vote", persistence: .counted) struct A {}"#)
            == "businessID 'MS_vote' uses a prefix reserved for Missive")
        #expect(try Self.problem(#"@MissiveMessage("acme:vote", businessID: "a:b", persistence: .counted) struct A {}"#) != nil)
        #expect(try Self.problem(#"@MissiveMessage(name, persistence: .counted) struct A {}"#) == "the objectName must be a string literal")
    }
}

/// `@MissiveAction`: the signature, the kind and what it yields come from the method's declaration, and a
/// method the host could not call is a compile error.
@Suite struct ActionMacroTests {
    /// The declaration of the first method of `source`, a struct `Poll` holding one `@MissiveAction` method.
    static func declaration(_ source: String) throws -> ActionDeclaration {
        let file = Parser.parse(source: "struct Poll {\n\(source)\n}")
        let type = try #require(file.statements.first?.item.as(StructDeclSyntax.self))
        let (attribute, function) = try #require(ActionDeclaration.actionMethods(in: type.memberBlock.members).first)
        return try ActionDeclaration(attribute, function: function, typeName: "Poll")
    }

    static func problem(_ source: String) throws -> String? {
        do {
            _ = try declaration(source)
            return nil
        } catch let error as MacroUsageError {
            return error.description
        }
    }

    @Test func signaturesComeFromTheParameters() throws {
        let vote = try Self.declaration(#"@MissiveAction("vote", title: "Vote", icon: "checkmark", priority: 10) func vote(option: Int32, voterID who: String) throws -> Poll { self }"#)
        #expect(vote.kind == .message && vote.yields == .content && vote.priority == 10 && vote.isThrowing)
        #expect(vote.signature.description == "int32(message message, int32 option, string who, sink out)")
        #expect(vote.record(objectName: "demo:poll") == #"{"record":"action","kind":"message","objectName":"demo:poll","id":"vote","title":"Vote","icon":"checkmark","priority":10,"yields":"content","signature":"int32(message message, int32 option, string who, sink out)"}"#)

        let open = try Self.declaration(#"@MissiveAction("open", title: "Open", icon: "link") func open() -> URL { fatalError() }"#)
        #expect(open.yields == .url && !open.isThrowing && open.priority == 0)
        #expect(open.signature.description == "int32(message message, sink out)")

        let create = try Self.declaration(#"@MissiveAction("demo.poll.create", title: "Poll", icon: "chart.bar", priority: -5) static func create(_ question: String, maxVotes: Int, anonymous: Bool, weight: Double, stamp: Int64) -> Self { fatalError() }"#)
        #expect(create.kind == .composer && create.priority == -5)
        #expect(create.signature.description == "int32(string question, int64 max_votes, bool anonymous, double weight, int64 stamp, sink out)")
        #expect(!create.record(objectName: "demo:poll").contains("yields"))
        // A parameter named like the generated ones: they step aside.
        let clash = try Self.declaration(#"@MissiveAction("x", title: "X", icon: "x") func x(message: String, out: Int32) -> Poll { self }"#)
        #expect(clash.signature.description == "int32(message message_, string message, int32 out, sink out_)")
        #expect(ActionDeclaration.snakeCase("voterID") == "voter_id" && ActionDeclaration.snakeCase("URLPath") == "url_path")
    }

    @Test func methodsTheHostCannotCallAreCompileErrors() throws {
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "x") func x(f: Float) -> Poll { self }"#)?.contains("is a Float") == true)
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "x") func x() async -> Poll { self }"#)?.contains("cannot be async") == true)
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "x") mutating func x() -> Poll { self }"#)?.contains("mutating") == true)
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "x") func x(n: Int32 = 1) -> Poll { self }"#)?.contains("default value") == true)
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "x") func x() -> String { "" }"#)?.contains("returns the message's new content") == true)
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "x") static func x() -> URL { fatalError() }"#)?.contains("composer action") == true)
        #expect(try Self.problem(#"@MissiveAction("a b", title: "X", icon: "x") func x() -> Poll { self }"#)?.contains("action id") == true)
        #expect(try Self.problem(#"@MissiveAction("x", title: "", icon: "x") func x() -> Poll { self }"#) == "the title is empty")
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "a/b") func x() -> Poll { self }"#)?.contains("icon name") == true)
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "x", priority: level) func x() -> Poll { self }"#) == "priority must be an integer literal")
        let many = (0..<17).map { "p\($0): Int32" }.joined(separator: ", ")
        #expect(try Self.problem(#"@MissiveAction("x", title: "X", icon: "x") func x(\#(many)) -> Poll { self }"#)?.contains("at most 16") == true)
    }
}

/// The coding `@MissiveMessage` and `@MissiveCoding` generate, and the types that keep the Codable path.
@Suite struct CodingMacroTests {
    static func plan(_ source: String) throws -> CodingPlan? {
        let file = Parser.parse(source: source)
        let item = try #require(file.statements.first?.item)
        if let structure = item.as(StructDeclSyntax.self) { return CodingPlan.plan(for: structure) }
        return CodingPlan.plan(for: try #require(item.as(EnumDeclSyntax.self)))
    }

    @Test func storedPropertiesAreCodedAndOthersLeftOut() throws {
        let plan = try #require(
            try Self.plan(
                """
                struct Poll: Codable, MessageTextContent {
                    var question: String
                    var votes: [Int]?
                    var `default`: Money
                    var observed: Int { didSet { } }
                    var digest: String { question }
                    var computed: Int { get { 1 } set { } }
                    static var examples: [Poll] { [] }
                    static let shared = 1
                }
                """))
        #expect(
            plan.shape
                == .object([
                    .init(name: "question", type: "String"), .init(name: "votes", type: "[Int]?"), .init(name: "default", type: "Money"),
                    .init(name: "observed", type: "Int"),
                ]))
        #expect(!plan.hasOwnDecodingInit)
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
        let small = try #require(try Self.plan("struct Poll: Codable { var question: String; var votes: [Int]? }"))
        #expect(small.members() == expected, "\(small.members())")
    }

    @Test func aHandWrittenDecodingInitKeepsTheCopy() throws {
        let plan = try #require(try Self.plan("struct A: Codable { var a: String\n init(decoding content: Data) throws { fatalError() } }"))
        #expect(plan.hasOwnDecodingInit)
        let extensionText = plan.extensionDecl(for: TypeSyntax(IdentifierTypeSyntax(name: .identifier("A"))), inPlace: true).description
        #expect(extensionText.hasPrefix("extension A: MissivePluginKit.MissiveJSONValue {"))
        let inPlace = try #require(try Self.plan("struct A: Codable { var a: String }")).extensionDecl(for: TypeSyntax(IdentifierTypeSyntax(name: .identifier("A"))), inPlace: true).description
        #expect(inPlace.hasPrefix("extension A: MissivePluginKit.MissiveJSONValue, MissivePluginKit.MissiveDecodesInPlace {"))
    }

    @Test func rawValueEnumsAreCoded() throws {
        let plan = try #require(try Self.plan("enum Mood: String, Codable { case happy, sad }"))
        #expect(plan.shape == .rawValue)
        #expect(plan.members().contains("let raw = try reader.decode(RawValue.self)"))
        #expect(try Self.plan("enum Mood: Codable { case happy, sad }") == nil)
    }

    @Test func typesCodableCannotBeReadFromKeepTheCodablePath() throws {
        for source in [
            "struct A { var a: String }",
            "struct A: Codable { var a: String\n enum CodingKeys: String, CodingKey { case a = \"b\" } }",
            "struct A: Codable { var a: String\n init(from decoder: any Decoder) throws { fatalError() } }",
            "struct A: Codable { var a: String\n func encode(to encoder: any Encoder) throws {} }",
            "struct A: Codable { let a: String = \"fixed\" }",
            "struct A: Codable { var a = \"no type\" }",
            "struct A: Codable { @Wrapped var a: String }",
            "struct A: Codable { lazy var a: String = \"\" }",
            "struct A: Codable { var a, b: String }",
            "struct A<T: Codable>: Codable { var a: T }",
            "struct A: Codable { var café: String }",
        ] {
            #expect(try Self.plan(source) == nil, "\(source)")
        }
    }
}
