import Foundation
import Missive
import MissiveTestSupport
import Testing

/// `process.state`: the checker sees what a plugin does to the process around it, on real fixtures run by
/// the real `missive check`.
@Suite struct ProcessChecksTests {
    static func result(_ fixture: String, _ options: [String] = []) async throws -> (status: Int32, result: [String: Any]) {
        let path = try Fixtures.fixtureLibrary(fixture)
        let run = try await Fixtures.missive(["check", "--format", "json", "--seed", "1", "--include", "^(load|abi|process)"] + options + [path])
        let file = URL(fileURLWithPath: path).lastPathComponent
        return (run.status, try #require(try ConformanceTests.Report(run.stdout).results[file]?["process.state"], "\(run.stdout)"))
    }

    @Test(arguments: [
        ("BrokenClosesStandardStream", "closed standard output (fd 1)"),
        ("BrokenChangesDirectory", "changed the working directory"),
        ("BrokenChangesLocaleOrUmask", "changed the locale (LC_ALL) and changed the umask"),
        ("BrokenOwnSignalHandler", "replaced the handler of SIGSEGV, SIGABRT"),
    ])
    func aPluginThatChangesTheProcessWhileLoadingFailsTheCheck(fixture: String, change: String) async throws {
        let (status, result) = try await Self.result(fixture)
        #expect(status == 1)
        #expect(result["outcome"] as? String == "failed", "\(result)")
        #expect(result["level"] as? Int == 1, "\(result)")
        #expect((result["detail"] as? String)?.contains("saw loading it (initialisers and entry) \(change)") == true, "\(result)")
    }

    @Test func exitInACallIsACrashWithTheGuardsWords() async throws {
        let (status, result) = try await Self.result("BrokenExitOnInput")
        #expect(status == 1)
        #expect(result["outcome"] as? String == "crashed", "\(result)")
        #expect((result["detail"] as? String)?.contains("exited with code 70") == true, "\(result)")
        let output = result["output"] as? [String] ?? []
        #expect(output.contains { $0.contains("called exit() during decode") }, "\(result)")
        #expect((result["input"] as? String)?.contains(#"example 1: "{\"say\":\"bye\",\"fixture\":true}""#) == true, "\(result)")
    }

    @Test func aCrashOnThePluginsOwnThreadIsACrash() async throws {
        let (status, result) = try await Self.result("BrokenCrashOnOwnThread")
        #expect(status == 1)
        #expect(result["outcome"] as? String == "crashed", "\(result)")
        #expect((result["detail"] as? String)?.contains("SIGSEGV") == true, "\(result)")
    }

    @Test func theSamplesLeaveTheProcessAsItWas() async throws {
        let files = Fixtures.samplePlugins.map(Fixtures.library) + [try Fixtures.fixtureLibrary("Legacy10")]
        let run = try await Fixtures.missive(["check", "--format", "json", "--include", "^(load|abi|process)"] + files)
        #expect(run.status == 0, "\(run.stdout)")
        let report = try ConformanceTests.Report(run.stdout)
        for file in files.map({ URL(fileURLWithPath: $0).lastPathComponent }) {
            #expect(report.outcome(file, "process.state") == "passed", "\(file): \(report.results[file]?["process.state"] ?? [:])")
        }
    }
}
