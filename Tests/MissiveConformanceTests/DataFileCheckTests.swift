import Foundation
import Missive
import MissiveTestSupport
import Testing

/// `metadata.files`: the checker lists the data files a plugin declares, and fails when one is missing, not a
/// regular file, or a symbolic link out of the plugin's folder. And the C macro refuses an absolute path.
@Suite struct DataFileCheckTests {
    /// The `metadata.files` result of each plugin file of a JSON report, by the file's full path.
    static func results(_ json: String) throws -> [String: [String: Any]] {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var results: [String: [String: Any]] = [:]
        for plugin in report["plugins"] as? [[String: Any]] ?? [] {
            let file = try #require(plugin["file"] as? String)
            results[file] = (plugin["results"] as? [[String: Any]] ?? []).first { $0["id"] as? String == "metadata.files" }
        }
        return results
    }

    @Test func theCheckListsTheDeclaredFilesAndFailsWhenOneCannotServe() async throws {
        let present = try DataFileFixture.stage(words: "apple\n")
        let missing = try DataFileFixture.stage(words: nil)
        let folder = try DataFileFixture.stage(words: nil)
        try FileManager.default.createDirectory(atPath: Self.folder(of: folder) + "/" + DataFileFixture.declared, withIntermediateDirectories: true)
        let outside = try Fixtures.temporaryDirectory() + "/words.txt"
        try "elsewhere\n".write(toFile: outside, atomically: true, encoding: .utf8)
        let escapes = try DataFileFixture.stage(words: nil)
        try FileManager.default.createSymbolicLink(atPath: Self.folder(of: escapes) + "/" + DataFileFixture.declared, withDestinationPath: outside)
        let inside = try DataFileFixture.stage(words: nil)
        try "kept\n".write(toFile: Self.folder(of: inside) + "/words-1.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: Self.folder(of: inside) + "/" + DataFileFixture.declared, withDestinationPath: "../words-1.txt")
        let rating = Fixtures.library("CRating")

        let run = try await Fixtures.missive(
            ["check", "--format", "json", "--include", #"^(load\.elf|metadata\.present|metadata\.files)$"#, present, missing, folder, escapes, inside, rating])
        #expect(run.status == 1, "\(run.stdout)\n\(run.stderr)")
        let results = try Self.results(run.stdout)
        func outcome(_ file: String) -> String? { results[file]?["outcome"] as? String }
        func detail(_ file: String) -> String { results[file]?["detail"] as? String ?? "" }

        #expect(outcome(present) == "passed")
        #expect(detail(present) == "1 data file in \(Self.folder(of: present)): DataFile/words.txt (6 bytes)")
        #expect(outcome(inside) == "passed", "\(detail(inside))")
        #expect(outcome(missing) == "failed")
        #expect(detail(missing).hasSuffix("saw DataFile/words.txt: missing (no file at \(Self.folder(of: missing))/DataFile/words.txt)"), "\(detail(missing))")
        #expect(outcome(folder) == "failed")
        #expect(detail(folder).hasSuffix("saw DataFile/words.txt: not a regular file (a folder)"), "\(detail(folder))")
        #expect(outcome(escapes) == "failed")
        #expect(detail(escapes).contains("DataFile/words.txt: leaves the plugin's folder through a symbolic link (it resolves to "), "\(detail(escapes))")
        #expect(outcome(rating) == "skipped")
        #expect(detail(rating) == "the plugin declares no data file")

        // The text report lists them on the check's line.
        let text = try await Fixtures.missive(["check", "--include", #"^metadata\.files$"#, present])
        #expect(text.status == 0)
        #expect(text.stdout.contains("PASS    metadata.files              1 data file in "), "\(text.stdout)")
    }

    @Test func thePluginPassesTheChecksWithItsFile() async throws {
        let run = try await Fixtures.missive(["check", "--format", "json", "--strictness", "2", try DataFileFixture.stage()])
        #expect(run.status == 0, "\(run.stdout)")
    }

    @Test func theMacroRefusesAnAbsolutePathWhileCompiling() async throws {
        let folder = try Fixtures.temporaryDirectory()
        try """
            #include "missive_plugin.h"
            MISSIVE_METADATA_PLUGIN("Absolute", "1.0.0", "Tests");
            MISSIVE_METADATA_FILE("/etc/passwd");
            """.write(toFile: folder + "/absolute.c", atomically: true, encoding: .utf8)
        let include = Fixtures.repositoryRoot + "/Sources/CMissivePlugin/include"
        let run = try await Fixtures.run("/bin/sh", ["-c", "cc -c -I '\(include)' absolute.c -o absolute.o"], directory: folder)
        #expect(run.status != 0)
        // GCC escapes the quotes around the path in its message; Clang does not.
        #expect(run.stderr.contains("/etc/passwd") && run.stderr.contains("must be a path relative to the folder that holds the plugin"), "\(run.stderr)")
    }

    static func folder(of plugin: String) -> String { (plugin as NSString).deletingLastPathComponent }
}
