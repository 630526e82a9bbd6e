import SwiftParser
import SwiftSyntax
import Testing

@testable import MissiveMacros

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
