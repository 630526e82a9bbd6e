import Foundation
import Missive
import MissiveConformance
import MissiveTestSupport
import Testing

/// `missive install` and `missive uninstall`, run as users run them, each test with its own per-user and
/// system folders (`XDG_DATA_HOME` and `MISSIVE_SYSTEM_PLUGIN_DIR`), so that nothing of the machine's is touched.
@Suite struct InstallTests {
    /// A private home for the plugin folders, and the environment that points `missive` at it.
    struct Home {
        let root: String
        var environment: [String: String] { ["XDG_DATA_HOME": root + "/data", PluginSearchPath.systemDirectoryVariable: root + "/system"] }
        var userFolder: String { root + "/data/missive/plugins" }
        var systemFolder: String { root + "/system" }

        init() throws { root = try Fixtures.temporaryDirectory() }

        func missive(_ arguments: String...) async throws -> Fixtures.Run {
            try await Fixtures.missive(arguments, environment: environment)
        }

        func files(_ folder: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        }
    }

    @Test func installChecksCopiesIntoANewUserFolderAndUninstallRemoves() async throws {
        let home = try Home()
        #expect(!FileManager.default.fileExists(atPath: home.userFolder))
        let run = try await home.missive("install", Fixtures.library("CRating"), Fixtures.library("DemoMessages"))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("installed CRating 1.0.0 as \(home.userFolder)/libCRating.so"))
        #expect(home.files(home.userFolder) == ["libCRating.so", "libDemoMessages.so"])
        let installed = try Data(contentsOf: URL(fileURLWithPath: home.userFolder + "/libCRating.so"))
        #expect(installed == (try Data(contentsOf: URL(fileURLWithPath: Fixtures.library("CRating")))))

        // A host finds them on the standard search path.
        let path = PluginSearchPath.standard(environment: home.environment, includeDefaults: true)
        let found = MessageRegistry.discover(searchPath: PluginSearchPath(entries: path.entries.filter { $0.source == .user }))
        #expect(found.rejections.isEmpty, "\(found.rejections)")
        #expect(found.registry.type(objectName: "demo:rating")?.origin == .plugin(found.plugins[0].info))

        let removed = try await home.missive("uninstall", "CRating", "libDemoMessages.so")
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("removed CRating 1.0.0 \(home.userFolder)/libCRating.so"))
        #expect(home.files(home.userFolder).isEmpty)

        let again = try await home.missive("uninstall", "CRating")
        #expect(again.status == 1)
        #expect(again.stderr.contains("CRating: no plugin of that name or file name is installed in \(home.userFolder)"))
    }

    @Test func aBrokenPluginIsRefusedWithTheFailingCheckAndNothingIsInstalled() async throws {
        let home = try Home()
        let run = try await home.missive("install", try Fixtures.fixtureLibrary("BrokenNoRoundTrip"))
        #expect(run.status == 1)
        #expect(run.stderr.contains("libBrokenNoRoundTrip.so: refused: it fails the conformance checks at strictness 5"))
        #expect(run.stderr.contains("roundtrip.examples: failed"))
        #expect(home.files(home.userFolder).isEmpty)

        // One that kills its process on load is refused too, and the command goes on with the next file.
        let crash = try await home.missive("install", try Fixtures.fixtureLibrary("BrokenAbortOnLoad"), Fixtures.library("CRating"))
        #expect(crash.status == 1)
        #expect(crash.stderr.contains("load.entry: crashed: killed by SIGABRT"))
        #expect(home.files(home.userFolder) == ["libCRating.so"])
    }

    @Test func theStrictnessDecidesWhichChecksMustPass() async throws {
        let home = try Home()
        // The leak shows only at level 6.
        let leaky = try Fixtures.fixtureLibrary("BrokenLeakyRelease")
        await #expect(try home.missive("install", leaky).status == 0)
        let strict = try await home.missive("install", leaky, "--strictness", "6")
        if SanitizerRun.current == nil {
            #expect(strict.status == 1)
            #expect(strict.stderr.contains("memory.release: failed"))
        } else {
            // The heap check skips under a sanitizer, whose allocator glibc's counters do not see: no leak shows.
            #expect(strict.status == 0, "\(strict.stderr)")
        }
    }

    @Test func anOlderCopyIsReplacedAtomicallyAndADowngradeNeedsAFlag() async throws {
        let home = try Home()
        // The older copy has another file name; the newer one takes its name, so no second copy appears.
        let older = try Fixtures.stage(["RatingOlder"]) + "/libRatingOlder.so"
        await #expect(try home.missive("install", older).status == 0)
        #expect(home.files(home.userFolder) == ["libRatingOlder.so"])
        let upgrade = try await home.missive("install", Fixtures.library("CRating"))
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        #expect(upgrade.stdout.contains("upgraded CRating 0.9.0 → 1.0.0 as \(home.userFolder)/libRatingOlder.so"))
        #expect(home.files(home.userFolder) == ["libRatingOlder.so"])
        #expect(try PluginMetadata.read(fromFile: home.userFolder + "/libRatingOlder.so").version == "1.0.0")

        let downgrade = try await home.missive("install", older)
        #expect(downgrade.status == 1)
        #expect(downgrade.stderr.contains("version 0.9.0 is older than the installed CRating 1.0.0"))
        #expect(try PluginMetadata.read(fromFile: home.userFolder + "/libRatingOlder.so").version == "1.0.0")
        let forced = try await home.missive("install", older, "--allow-downgrade")
        #expect(forced.status == 0)
        #expect(forced.stdout.contains("downgraded CRating 1.0.0 → 0.9.0"))
        // No temporary file is left behind.
        #expect(home.files(home.userFolder) == ["libRatingOlder.so"])
    }

    @Test func aPluginWhoseNamesClashWithAnInstalledOneIsRefused() async throws {
        let home = try Home()
        await #expect(try home.missive("install", "--system", Fixtures.library("CRating")).status == 0)
        #expect(home.files(home.systemFolder) == ["libCRating.so"])
        let rival = try await home.missive("install", try Fixtures.fixtureLibrary("RatingRival"))
        #expect(rival.status == 1)
        #expect(rival.stderr.contains("its names clash with installed plugins: objectName 'demo:rating' is also declared by CRating 1.0.0 (\(home.systemFolder)/libCRating.so)"))
        #expect(rival.stderr.contains("businessID 'evaluation'"))
        #expect(home.files(home.userFolder).isEmpty)

        let removed = try await home.missive("uninstall", "--system", "CRating")
        #expect(removed.status == 0)
        #expect(home.files(home.systemFolder).isEmpty)
    }

    @Test func usageErrorsExitWithCode2() async throws {
        let home = try Home()
        await #expect(try home.missive("install", "--strictness", "11", Fixtures.library("CRating")).status == 2)
        await #expect(try home.missive("install").status == 2)
        let missing = try await home.missive("install", "/nonexistent/libX.so")
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/libX.so: no such readable file"))
        let notPlugin = try await home.missive("install", Fixtures.repositoryRoot + "/Package.swift")
        #expect(notPlugin.status == 1)
        #expect(notPlugin.stderr.contains("Package.swift: refused: [not-a-plugin]"))
    }

    @Test func versionsCompareByTheirNumbers() {
        #expect(PluginInstaller.isVersion("1.9.2", olderThan: "1.10.0"))
        #expect(PluginInstaller.isVersion("1.0", olderThan: "1.0.1"))
        #expect(!PluginInstaller.isVersion("1.0.0", olderThan: "1.0"))
        #expect(!PluginInstaller.isVersion("2.0.0", olderThan: "1.99.0"))
        // No order is known for other spellings, so they never count as a downgrade.
        #expect(!PluginInstaller.isVersion("1.0.0-beta", olderThan: "1.0.0"))
        #expect(!PluginInstaller.isVersion("0.9", olderThan: "nightly"))
    }
}
