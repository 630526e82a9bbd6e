import SwiftParser
import SwiftSyntax
import Testing

@testable import MissiveMacrosSupport

/// `#MissivePlugin(..., dataFiles:)`: the paths become `file` records, and a path the host would refuse is a
/// compile error with the host's reason.
@Suite struct DataFileMacroTests {
    /// The `dataFiles:` argument of `#MissivePlugin(...)` written in `source`.
    static func declared(_ source: String) throws -> [String] {
        let file = Parser.parse(source: source)
        let item = try #require(file.statements.first?.item)
        let arguments = try #require(item.as(MacroExpansionDeclSyntax.self)?.arguments ?? item.as(MacroExpansionExprSyntax.self)?.arguments)
        let argument = arguments.first { $0.label?.text == "dataFiles" }?.expression
        return try MissivePluginMacro.dataFileDeclarations(argument)
    }

    static func problem(_ source: String) throws -> String? {
        do {
            _ = try declared(source)
            return nil
        } catch let error as MacroUsageError {
            return error.description
        }
    }

    @Test func declaredPathsAreKeptInOrder() throws {
        #expect(try Self.declared(#"#MissivePlugin(name: "W", version: "1", vendor: "V", types: [A.self], dataFiles: ["data/words.txt", "font.ttf"])"#)
            == ["data/words.txt", "font.ttf"])
        #expect(try Self.declared(#"#MissivePlugin(name: "W", version: "1", vendor: "V", types: [A.self])"#).isEmpty)
        #expect(jsonRecord([("record", "file"), ("path", "data/words.txt")]) == #"{"record":"file","path":"data/words.txt"}"#)
    }

    @Test func pathsTheHostWouldRefuseAreCompileErrors() throws {
        #expect(try Self.problem(#"#MissivePlugin(name: "W", version: "1", vendor: "V", types: [], dataFiles: ["../etc/passwd"])"#)
            == #"data file "../etc/passwd": the path has a '..' component, which could name a file outside the plugin's folder"#)
        #expect(try Self.problem(#"#MissivePlugin(name: "W", version: "1", vendor: "V", types: [], dataFiles: ["/etc/passwd"])"#)?
            .contains("the path is absolute") == true)
        #expect(try Self.problem(#"#MissivePlugin(name: "W", version: "1", vendor: "V", types: [], dataFiles: ["a", "a"])"#)?
            .contains("declared twice") == true)
        #expect(try Self.problem(#"#MissivePlugin(name: "W", version: "1", vendor: "V", types: [], dataFiles: [path])"#)
            == "each data file must be a string literal")
        #expect(try Self.problem(#"#MissivePlugin(name: "W", version: "1", vendor: "V", types: [], dataFiles: files)"#)?
            .hasPrefix("dataFiles must be an array literal") == true)
    }
}
