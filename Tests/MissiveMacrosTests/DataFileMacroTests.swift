import Testing

/// `#MissivePlugin(..., dataFiles:)`: the paths become `file` records, and a path the host would refuse is a
/// compile error with the host's reason.
@Suite struct DataFileMacroTests {
    /// A plugin of one message type, `A`, with `arguments` after its types.
    static func plugin(_ arguments: String) async throws -> MacroCompilation.Outcome {
        try await MacroCompilation.typecheck(
            "let path = \"x\"\nlet files = [\"x\"]\n" + MacroCompilation.messageType(#"@MissiveMessage("acme:a", persistence: .counted)"#)
                + #"#MissivePlugin(name: "W", version: "1", vendor: "V", types: [A.self]\#(arguments))"# + "\n")
    }

    @Test func declaredPathsAreKeptInOrder() async throws {
        let declared = try await Self.plugin(#", dataFiles: ["data/words.txt", "font.ttf"]"#)
        #expect(declared.errors.isEmpty, "\(declared.errors)")
        #expect(declared.records.filter { $0.contains(#""record":"file""#) }
            == [#"{"record":"file","path":"data/words.txt"}"#, #"{"record":"file","path":"font.ttf"}"#], "\(declared.records)")
        let none = try await Self.plugin("")
        #expect(none.errors.isEmpty && none.records.contains { $0.contains(#""record":"plugin""#) }, "\(none.errors) \(none.records)")
        #expect(!none.records.contains { $0.contains(#""record":"file""#) }, "\(none.records)")
    }

    @Test func pathsTheHostWouldRefuseAreCompileErrors() async throws {
        let cases: [(arguments: String, error: String)] = [
            (#", dataFiles: ["../etc/passwd"]"#, #"data file "../etc/passwd": the path has a '..' component, which could name a file outside the plugin's folder"#),
            (#", dataFiles: ["/etc/passwd"]"#, "the path is absolute"),
            (#", dataFiles: ["a", "a"]"#, "declared twice"),
            (", dataFiles: [path]", "each data file must be a string literal"),
            (", dataFiles: files", "dataFiles must be an array literal"),
        ]
        for (arguments, expected) in cases {
            let outcome = try await Self.plugin(arguments)
            #expect(outcome.errors.contains { $0.contains(expected) }, "\(arguments): \(outcome.errors)")
            #expect(!outcome.records.contains { $0.contains(#""record":"file""#) }, "\(arguments): \(outcome.records)")
        }
    }
}
