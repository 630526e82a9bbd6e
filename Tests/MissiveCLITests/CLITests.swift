import Foundation
import Missive
import MissiveTestSupport
import Testing

/// The `missive` executable, run as a user runs it; its JSON output is parsed as a script would.
@Suite struct CLITests {
    static func object(_ text: some StringProtocol) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func listShowsBuiltInsAndEverySampleTypeAsJSON() async throws {
        let run = try await Fixtures.missive("list", "--format", "json")
        #expect(run.status == 0)
        let json = try Self.object(run.stdout)
        #expect(json["schemaVersion"] as? Int == 1)
        let types = try #require(json["types"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: types.map { ($0["objectName"] as! String, $0) })
        for builtIn in ["MS:Text", "MS:Image", "MS:Voice", "MS:Video", "MS:File", "MS:Location", "MS:Custom", "MS:Unknown"] {
            #expect(byName[builtIn]?["origin"] as? String == "builtin", "\(builtIn)")
        }
        let expected: [(String, String?, Int, Bool, String)] = [
            ("demo:link", "text_link", 3, false, "DemoMessages"), ("demo:poll", "poll", 3, false, "DemoMessages"),
            ("demo:typing", nil, 16, false, "DemoMessages"), ("demo:sticker", "sticker", 3, true, "DemoMedia"),
            ("demo:rating", "evaluation", 3, false, "CRating"), ("matrix:text", "m.text", 3, false, "MatrixBridge"),
            ("matrix:notice", "m.notice", 1, false, "MatrixBridge"), ("matrix:emote", "m.emote", 3, false, "MatrixBridge"),
        ]
        for (name, businessID, persistence, media, plugin) in expected {
            let type = try #require(byName[name], "\(name) missing")
            #expect(type["businessID"] as? String == businessID)
            #expect((type["persistence"] as? [String: Any])?["value"] as? Int == persistence)
            #expect(type["media"] as? Bool == media)
            let info = try #require(type["plugin"] as? [String: Any])
            #expect(info["name"] as? String == plugin)
            #expect(info["file"] as? String == Fixtures.library(plugin))
        }
        #expect(byName["demo:link"]?["container"] as? String == "MS:Custom")
        #expect(byName["matrix:text"]?["container"] as? String == "m.room.message")
        #expect(byName["demo:typing"]?["container"] is NSNull)
        let matrix = try #require(byName["m.room.message"]?["dispatchesOn"] as? [String: Any])
        #expect(matrix["key"] as? String == "msgtype" && matrix["keyKind"] as? String == "string")
        #expect((byName["MS:Custom"]?["dispatchesOn"] as? [String: Any])?["key"] as? String == "businessID")
        // Only built-ins and samples: the broken test plugins are built elsewhere.
        #expect(types.allSatisfy { !($0["objectName"] as! String).hasPrefix("fixture") })
        #expect((json["rejected"] as? [Any])?.isEmpty == true)
        for plugin in try #require(json["plugins"] as? [[String: Any]]) {
            #expect(plugin["abiVersion"] as? String == "1.1")
        }
    }

    /// What a newcomer sees first: `swift build && swift run missive list` on a fresh clone. Run with empty
    /// per-user and system folders, so that only the build folder's plugins count.
    @Test func listInTheBuildFolderShowsOnlyBuiltInsAndSamplesWithoutWarnings() async throws {
        let empty = try Fixtures.temporaryDirectory()
        let run = try await Fixtures.missive(
            ["list"], environment: ["XDG_DATA_HOME": empty, PluginSearchPath.systemDirectoryVariable: empty, "MISSIVE_METADATA_CACHE": "off"])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        #expect(!run.stdout.contains("Rejected"))
        #expect(!run.stdout.contains("fixture:"))
        #expect(run.stdout.contains("Registered types (17):"))
        #expect(run.stdout.contains("matrix:text     m.room.message msgtype=m.text"))

        // With -v the loader says what it did; with -q nothing is logged.
        let verbose = try await Fixtures.missive(
            ["list", "-v"], environment: ["XDG_DATA_HOME": empty, PluginSearchPath.systemDirectoryVariable: empty, "MISSIVE_METADATA_CACHE": "off"])
        #expect(verbose.stderr.contains("missive: debug: loaded plugin CRating 1.0.0 by Missive Samples (ABI 1.1, no Swift runtime): demo:rating"))
        #expect(verbose.stderr.contains("missive: debug: loaded plugin DemoMessages 1.0.0 by Missive Samples (ABI 1.1, Swift \(SwiftCompiler.version))"))
    }

    @Test func decodeLogsRefusedPluginsAsWarningsUnlessQuiet() async throws {
        let directory = try Fixtures.stage(["BrokenNoEntry", "CRating"])
        let input = #"{"id":"r","conversationID":"c","senderID":"s","sentAt":1,"objectName":"demo:rating","content":{"score":4}}"#
        let run = try await Fixtures.missive(["decode", "-", "--plugin-path", directory], input: input)
        #expect(run.status == 0)
        #expect(run.stderr.contains("missive: warning: refused plugin: the library does not export missive_plugin_entry_v1 (code=missing-entry, file=\(directory)/libBrokenNoEntry.so)"))
        #expect(run.stdout.contains("known"))
        let quiet = try await Fixtures.missive(["decode", "-", "--plugin-path", directory, "--quiet"], input: input)
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
        #expect(quiet.stdout == run.stdout)
        #expect(try await Fixtures.missive(["decode", "-", "-q", "-v"], input: input).status == 2)
    }

    @Test func decodeShowsKnownAndUnknownMessagesWithNothingLost() async throws {
        let path = Fixtures.repositoryRoot + "/SampleData/conversation.jsonl"
        let run = try await Fixtures.missive("decode", path, "--format", "json")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.stdout.split(separator: "\n").map(Self.object)
        let lines = try Fixtures.conversationLines()
        #expect(records.count == lines.count)
        for (record, line) in zip(records, lines) {
            let envelope = try Envelope(parsing: line)
            #expect(record["id"] as? String == envelope.id)
            #expect(record["objectName"] as? String == envelope.objectName)
            // Content is printed exactly as received; what a terminal would act on is written as a \u escape,
            // which is the same JSON value.
            if envelope.content.text.unicodeScalars.contains(where: TextHygiene.isUnsafe) {
                let printed = try JSONSerialization.data(withJSONObject: try #require(record["content"]), options: [.sortedKeys])
                let received = try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: Data(envelope.content)), options: [.sortedKeys])
                #expect(printed == received, "\(envelope.id)")
            } else {
                #expect(run.stdout.contains(#""content":"# + envelope.content.text + #",""#), "\(envelope.id)")
            }
            if record["known"] as? Bool == false {
                #expect((record["reason"] as? String)?.isEmpty == false)
            } else {
                #expect(record["reason"] is NSNull)
            }
        }
        let byID = Dictionary(uniqueKeysWithValues: records.map { ($0["id"] as! String, $0) })
        #expect(byID["m03"]?["decodedAs"] as? String == "demo:poll")
        #expect(byID["m07"]?["digest"] as? String == "[Rating] ★★★★☆ Great sushi place")
        #expect(byID["m11"]?["digest"] as? String == "[Order] A-1042, 42.50 EUR")
        #expect((byID["m11"]?["persistence"] as? [String: Any])?["name"] as? String == "counted")
        #expect(byID["m12"]?["digest"] as? String == "[Unsupported message: acme:receipt]")
        #expect(byID["m14"]?["known"] as? Bool == false)
        #expect(byID["m05"]?["parentID"] as? String == "m03")
        #expect((byID["m06"]?["media"] as? [String: Any])?["mimeType"] as? String == "image/webp")
    }

    @Test func decodeReportsMalformedLinesByNumberAndGoesOn() async throws {
        let good = #"{"id":"ok","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{"content":"hi"}}"#
        let input = [good, "{not json", "", #"{"id":"x"}"#, good].joined(separator: "\n")
        let run = try await Fixtures.missive("decode", "-", "--format", "json", input: input)
        #expect(run.status == 1)
        let records = try run.stdout.split(separator: "\n").map(Self.object)
        #expect(records.map { $0["line"] as? Int } == [1, 2, 4, 5])
        #expect(records.map { $0["id"] as? String } == ["ok", nil, nil, "ok"])
        #expect((records[1]["error"] as? [String: Any])?["code"] as? String == "malformed-envelope")
        #expect(run.stderr.contains("missive: <stdin>: line 2: [malformed-envelope]"))
        #expect(run.stderr.contains("missive: <stdin>: line 4: [malformed-envelope] missing required field 'conversationID'"))
    }

    @Test func decodeNamesAnInputItCannotRead() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let run = try await Fixtures.missive("decode", folder)
        #expect(run.status == 2)
        #expect(run.stderr == "missive: \(folder): cannot read: it is a folder\n")
        let missing = try await Fixtures.missive("decode", folder + "/none.jsonl")
        #expect(missing.status == 2)
        #expect(missing.stderr == "missive: \(folder)/none.jsonl: cannot read: no such file\n")
        // A malformed line names the file.
        try Data("{not json\n".utf8).write(to: URL(fileURLWithPath: folder + "/bad.jsonl"))
        let bad = try await Fixtures.missive("decode", folder + "/bad.jsonl")
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("missive: \(folder)/bad.jsonl: line 1: [malformed-envelope]"))
    }

    /// The sample conversation's hostile messages carry escape sequences, C1 controls, DEL, bidi overrides
    /// and line separators in content, fallback text, push text and objectName. None of it reaches the
    /// terminal, in any format, on any command that prints message text.
    @Test func noControlCharacterFromASenderOrPluginReachesTheTerminal() async throws {
        let path = Fixtures.repositoryRoot + "/SampleData/conversation.jsonl"
        let hostile = try Fixtures.conversationLines().filter { $0.text.contains("mallory") }
        #expect(hostile.count == 3)
        var runs = [
            try await Fixtures.missive("decode", path),
            try await Fixtures.missive("decode", path, "--format", "json"),
            try await Fixtures.missive(["decode", "-"], input: hostile.map(\.text).joined(separator: "\n")),
            try await Fixtures.missive("render", path, "--me", "mallory"),
            try await Fixtures.missive("render", path, "--format", "html"),
            try await Fixtures.missive("render", path, "--width", "20"),
        ]
        // A check report quotes what plugins write: the fixture's digest has a line feed.
        runs.append(try await Fixtures.missive("check", "--include", "^digest", try Fixtures.fixtureLibrary("BrokenDigestNewline")))
        for run in runs {
            for (name, output) in [("stdout", run.stdout), ("stderr", run.stderr)] {
                let unsafe = output.unicodeScalars.filter { TextHygiene.isUnsafe($0) && $0 != "\n" }
                #expect(unsafe.isEmpty, "\(name) has \(unsafe.map { String($0.value, radix: 16) })")
            }
        }
        #expect(runs[0].stdout.contains("digest:      Hi gnp.exe, see <script>alert(1)</script>"))
        #expect(runs[0].stdout.contains("digest:      line one line two blink"))
        // The renderer draws the same cleaned text; HTML escapes it on top.
        #expect(runs[3].stdout.contains("Hi gnp.exe, see <script>alert(1)</script>"))
        #expect(runs[4].stdout.contains("Hi gnp.exe, see &lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!runs[4].stdout.contains("<script"))
        // The JSON is still JSON, and says the same.
        for line in runs[1].stdout.split(separator: "\n") { _ = try Self.object(line) }
    }

    @Test func renderWritesItsOutputInPlaceAndNeverOverItsInput() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let input = folder + "/chat.jsonl"
        try FileManager.default.copyItem(atPath: Fixtures.repositoryRoot + "/SampleData/conversation.jsonl", toPath: input)
        // Over the input: refused, and the conversation is intact.
        let over = try await Fixtures.missive("render", input, "--output", input)
        #expect(over.status == 2 && over.stderr.contains("cannot write: it is the input file"), "\(over.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == Data(contentsOf: URL(fileURLWithPath: Fixtures.repositoryRoot + "/SampleData/conversation.jsonl")))
        // An existing private file keeps its mode, and a link is written through.
        let page = folder + "/page.html"
        _ = FileManager.default.createFile(atPath: page, contents: Data("old".utf8), attributes: [.posixPermissions: 0o600])
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.html", withDestinationPath: page)
        let written = try await Fixtures.missive("render", input, "--format", "html", "--output", folder + "/link.html")
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try String(contentsOfFile: page, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        #expect((try FileManager.default.attributesOfItem(atPath: page)[.posixPermissions] as? Int) == 0o600)
        // A folder that does not exist: the system's reason.
        let missing = try await Fixtures.missive("render", input, "--output", folder + "/no/such/folder/page.html")
        #expect(missing.status == 2 && missing.stderr.contains("No such file or directory"), "\(missing.stderr)")
    }

    @Test func inspectReadsMetadataAndRefusesNonPlugins() async throws {
        let run = try await Fixtures.missive("inspect", Fixtures.library("DemoMedia"), "--format", "json")
        #expect(run.status == 0)
        let json = try Self.object(run.stdout)
        #expect(json["name"] as? String == "DemoMedia")
        #expect(json["abi"] as? Int == 1)
        #expect(json["abiVersion"] as? String == "1.1")
        #expect(json["swiftVersion"] as? String == SwiftCompiler.version)
        let types = try #require(json["types"] as? [[String: Any]])
        #expect(types.map { $0["objectName"] as? String } == ["demo:sticker"])
        #expect(types.first?["media"] as? Bool == true)

        // A C plugin records no compiler: it needs no Swift runtime.
        let c = try Self.object(try await Fixtures.missive("inspect", Fixtures.library("CRating"), "--format", "json").stdout)
        #expect(c["swiftVersion"] is NSNull)
        let text = try await Fixtures.missive("inspect", Fixtures.library("CRating")).stdout
        #expect(text.contains("ABI:       1.1"))
        #expect(text.contains("toolchain: none recorded"))

        // A container and the types under it.
        let matrix = try Self.object(try await Fixtures.missive("inspect", Fixtures.library("MatrixBridge"), "--format", "json").stdout)
        let containers = try #require(matrix["containers"] as? [[String: Any]])
        #expect(containers.map { $0["objectName"] as? String } == ["m.room.message"])
        #expect(containers.first?["key"] as? String == "msgtype")
        let matrixTypes = try #require(matrix["types"] as? [[String: Any]])
        #expect(matrixTypes.map { "\($0["container"] ?? "") \($0["businessID"] ?? "")" }.sorted()
            == ["m.room.message m.emote", "m.room.message m.notice", "m.room.message m.text"])

        let notPlugin = try await Fixtures.missive("inspect", Fixtures.repositoryRoot + "/Package.swift")
        #expect(notPlugin.status == 1)
        #expect(notPlugin.stderr.contains("Package.swift: [not-a-plugin] not an ELF shared object"))
        #expect(notPlugin.stdout.isEmpty)
    }
}
