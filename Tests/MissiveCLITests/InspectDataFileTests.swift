import Foundation
import Missive
import MissiveTestSupport
import Testing

/// `missive inspect` shows the data files a plugin declares, in its text and its JSON, from the metadata alone.
@Suite struct InspectDataFileTests {
    @Test func inspectShowsTheDeclaredDataFiles() async throws {
        // The files need not be there: inspect reads the declaration.
        let plugin = try DataFileFixture.stage(words: nil)
        let run = try await Fixtures.missive("inspect", plugin, "--format", "json")
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(json["dataFiles"] as? [String] == [DataFileFixture.declared])

        let text = try await Fixtures.missive("inspect", plugin)
        let folder = (plugin as NSString).deletingLastPathComponent
        #expect(text.stdout.contains("Data files (1, read-only, relative to \(folder)):\n  DataFile/words.txt\n"), "\(text.stdout)")

        // A plugin that declares none: an empty list, and no section in the text.
        let rating = try await Fixtures.missive("inspect", Fixtures.library("CRating"), "--format", "json")
        let ratingJSON = try #require(try JSONSerialization.jsonObject(with: Data(rating.stdout.utf8)) as? [String: Any])
        #expect(ratingJSON["dataFiles"] as? [String] == [])
        #expect(!(try await Fixtures.missive("inspect", Fixtures.library("CRating")).stdout.contains("Data files")))
    }
}
