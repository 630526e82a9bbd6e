import Foundation
import Missive
import MissiveTestSupport
import Testing

/// `missive install` installs the data files a plugin declares with it, and `missive uninstall` removes them: an
/// installed plugin reads its file where a host runs it, in process or behind a confined worker's walls.
@Suite struct InstallDataFileTests {
    @Test func aPluginsDataFilesAreInstalledWithItAndRemovedWithIt() async throws {
        let home = try InstallTests.Home()
        let plugin = try DataFileFixture.stage()
        let run = try await home.missive("install", plugin)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("installed DataFile 1.0.0 as \(home.userFolder)/libDataFile.so (with its data file \(DataFileFixture.declared))"), "\(run.stdout)")
        #expect(home.files(home.userFolder) == ["DataFile", "libDataFile.so"])
        // The declared file, and not the undeclared one beside it.
        #expect(home.files(home.userFolder + "/DataFile") == ["words.txt"])

        // A host reads the installed copy's file. (The fixture opens it in decode, which the filter of an isolated
        // worker forbids once the plugin has loaded; ConfinementTests reads it behind the walls with the filter off.)
        let input = try Fixtures.temporaryDirectory() + "/read.jsonl"
        let envelope = #"{"id":"d1","conversationID":"c1","senderID":"bob","sentAt":1700000000000,"objectName":"\#(DataFileFixture.objectName)","content":\#(DataFileFixture.readContent)}"#
        try Data((envelope + "\n").utf8).write(to: URL(fileURLWithPath: input))
        let decoded = try await Fixtures.missive(["decode", input, "--plugin-path", home.userFolder, "--isolation", "in-process", "--format", "json"], environment: home.environment)
        #expect(decoded.stdout.contains(#""digest":"first line of the words""#), "\(decoded.stdout)\(decoded.stderr)")

        // Installed again, the same: the file is replaced in place.
        #expect(try await home.missive("install", plugin).status == 0)
        #expect(home.files(home.userFolder + "/DataFile") == ["words.txt"])

        let removed = try await home.missive("uninstall", "DataFile")
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(home.files(home.userFolder).isEmpty, "the data file and its folder go with the plugin: \(home.files(home.userFolder))")
    }

    @Test func aPluginWhoseDeclaredFileIsMissingIsRefusedAndNothingIsInstalled() async throws {
        let home = try InstallTests.Home()
        let run = try await home.missive("install", try DataFileFixture.stage(words: nil))
        #expect(run.status == 1)
        #expect(run.stderr.contains("it declares the data file \(DataFileFixture.declared), but"), "\(run.stderr)")
        #expect(home.files(home.userFolder).isEmpty)

        // A file in the way that no installed plugin declares is not overwritten.
        try FileManager.default.createDirectory(atPath: home.userFolder + "/DataFile", withIntermediateDirectories: true)
        try "the user's own\n".write(toFile: home.userFolder + "/" + DataFileFixture.declared, atomically: true, encoding: .utf8)
        let blocked = try await home.missive("install", try DataFileFixture.stage())
        #expect(blocked.status == 1)
        #expect(blocked.stderr.contains("which no installed plugin declares"), "\(blocked.stderr)")
        #expect(try String(contentsOfFile: home.userFolder + "/" + DataFileFixture.declared, encoding: .utf8) == "the user's own\n")
    }
}
