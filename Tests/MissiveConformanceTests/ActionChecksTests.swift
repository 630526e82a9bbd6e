import Foundation
@_spi(Benchmarks) import Missive
@testable import MissiveConformance
import MissiveTestSupport
import Testing

/// The action checks of `missive check` (`actions.*`), run as users run them, on the samples and on fixtures
/// that each break one rule of `missive.actions.v1`.
@Suite struct ActionChecksTests {
    /// Every action check, as the catalog lists them.
    static let actionCheckIDs = ConformanceCatalog.checks.map(\.id).filter { $0.hasPrefix("actions.") }

    /// As for the view fixtures: the other checks above level 6 are left out of the fixture runs.
    /// Left out: the checks above level 6, and the memory checks, which measure for a time and warn when the
    /// plugin is slow (as a machine loaded by other builds makes every plugin); ConformanceTests checks those on
    /// the fixtures made for them.
    static let outOfScope = ConformanceCatalog.checks.filter { !$0.id.hasPrefix("actions.") && ($0.level > 6 || $0.id.hasPrefix("memory.")) }.map(\.id)

    @Test func theCatalogHasTheActionChecksAfterTheViewChecks() throws {
        #expect(Self.actionCheckIDs == ["actions.metadata", "actions.declared", "actions.examples", "actions.refusals", "actions.strings", "actions.threads"])
        let levels = Dictionary(uniqueKeysWithValues: ConformanceCatalog.checks.map { ($0.id, $0.level) })
        #expect(Self.actionCheckIDs.map { levels[$0]! } == [1, 1, 2, 4, 5, 6])
        let ids = ConformanceCatalog.checks.map(\.id)
        #expect(try #require(ids.firstIndex(of: "view.mutations")) < (try #require(ids.firstIndex(of: "actions.metadata"))))
    }

    @Test func theSamplesPassEveryActionCheckAtStrictness10() async throws {
        let files = Fixtures.samplePlugins.map(Fixtures.library)
        let run = try await Fixtures.missive(["check", "--strictness", "10", "--include", #"^actions\."#, "--format", "json", "--seed", "13"] + files)
        #expect(run.status == 0, "\(run.stdout)")
        let report = try ConformanceTests.Report(run.stdout)
        for file in ["libDemoMessages.so", "libCRating.so"] {
            for id in Self.actionCheckIDs {
                #expect(report.outcome(file, id) == "passed", "\(file) \(id): \(report.results[file]?[id] ?? [:])")
            }
        }
        // The samples without actions skip them.
        for file in ["libDemoMedia.so", "libMatrixBridge.so"] {
            #expect(report.results[file]?["actions.declared"]?["detail"] as? String == "the plugin declares no action")
            for id in Self.actionCheckIDs { #expect(report.outcome(file, id) == "skipped", "\(file) \(id)") }
        }
    }

    @Test(arguments: [
        ("ActionBadSignature", "actions.declared", "failed", ["action 'scale'", "'float', which is not one of int32"]),
        ("ActionMissingSymbol", "actions.declared", "failed", ["missing_symbol_touch is not exported by the library"]),
        ("ActionMetadataMismatch", "actions.metadata", "failed", ["title 'Vote' vs 'Poll'"]),
        ("ActionInvalidResult", "actions.examples", "failed", ["[invalid-result] reset gave content that is not valid for fixture:invalid-result"]),
        ("ActionBadURL", "actions.examples", "failed", ["'javascript:alert(1)', which is not an http or https URL"]),
        ("ActionNoExamples", "actions.examples", "failed", ["repeat declares no example arguments"]),
        ("ActionCrashesOnOddString", "actions.strings", "crashed", [SanitizerRun.segfaultInCheck, "while running actions.strings"]),
        // Which example's calls collide first varies from run to run.
        ("ActionThreadUnsafe", "actions.threads", "failed", [#"fixture.label with "[\""#, "on one thread", "differences in all"]),
    ])
    func eachBrokenFixtureFailsExactlyItsActionCheck(fixture: String, check: String, outcome: String, details: [String]) async throws {
        let file = "libBroken\(fixture).so"
        let run = try await Fixtures.missive([
            "check", "--strictness", "10", "--exclude", "^(" + Self.outOfScope.map(NSRegularExpression.escapedPattern(for:)).joined(separator: "|") + ")$",
            "--format", "json", "--seed", "5",
            try Fixtures.fixtureLibrary("Broken\(fixture)"),
        ])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let report = try ConformanceTests.Report(run.stdout)
        let results = try #require(report.results[file])
        #expect(report.outcome(file, check) == outcome, "\(results[check] ?? [:])")
        let detail = results[check]?["detail"] as? String ?? ""
        for expected in details {
            #expect(detail.contains(expected), "\(check): \(detail)")
        }
        for (id, result) in results where id != check {
            #expect(["passed", "skipped"].contains(result["outcome"] as? String), "\(file) \(id): \(result)")
        }
    }

    /// ActionTypes passes every action check but one: fixture.calls reports how many calls ran before it, by
    /// design, and actions.threads sees that.
    @Test func theMarshallingFixturePassesAllButTheThreadsCheck() async throws {
        let run = try await Fixtures.missive("check", "--strictness", "10", "--include", #"^actions\."#, "--format", "json", try Fixtures.fixtureLibrary("ActionTypes"))
        let results = try #require(try ConformanceTests.Report(run.stdout).results["libActionTypes.so"])
        for id in Self.actionCheckIDs where id != "actions.threads" {
            #expect(results[id]?["outcome"] as? String == "passed", "\(id): \(results[id] ?? [:])")
        }
        #expect(results["actions.threads"]?["outcome"] as? String == "failed")
        #expect((results["actions.threads"]?["detail"] as? String)?.contains("fixture.calls") == true)
    }

    /// actions.refusals can fail: with an argument check that lets wrong arguments through, the libffi closure
    /// in front of each function sees them arrive.
    @Test func theRefusalsCheckFailsWhenWrongArgumentsGetThrough() throws {
        let path = try Fixtures.stage(["ActionTypes"]) + "/libActionTypes.so"
        let context = CheckContext(path: path, seed: 1, against: [])
        #expect(ActionChecks.refusals(context, validate: ActionArgumentChecker.values) == .passed)
        // A check that ignores what it is given and passes valid values instead.
        let lenient: ([ActionArgument], ActionDeclaration) throws(MissiveError) -> [ActionValue] = { _, action throws(MissiveError) in
            try ActionArgumentChecker.values(ActionChecks.defaults(for: action.signature), for: action)
        }
        guard case .failed(_, let seen) = ActionChecks.refusals(context, validate: lenient) else {
            Issue.record("the check passed although every wrong argument got through")
            return
        }
        // fixture.mixed comes first (composer actions, then message actions), with its 16 parameters' wrong values.
        #expect(seen.hasPrefix("fixture.mixed was called 129 times with arguments it should never see; fixture.mixed accepted"), "\(seen)")
    }
}
