import Foundation
import Missive
import MissiveTestSupport
import Testing

/// `isolation.worker` runs the plugin in the same confined worker a host uses (docs/PROTECTION.md, "The worker's own
/// world") and names what the plugin looked for outside its view while it loaded, on real fixtures run by the real
/// `missive check`.
@Suite struct IsolationCheckTests {
    static func result(_ file: String) async throws -> [String: Any] {
        let run = try await Fixtures.missive(["check", "--format", "json", "--seed", "1", "--include", "^(load|abi|process|isolation)"] + [file])
        let name = URL(fileURLWithPath: file).lastPathComponent
        return try #require(try ConformanceTests.Report(run.stdout).results[name]?["isolation.worker"], "\(run.stdout)")
    }

    @Test func theCheckNamesWhatAHostilePluginTriedToOpenOutsideItsView() async throws {
        let folder = try Fixtures.stage(["BrokenSnoops"])
        let result = try await Self.result(folder + "/libBrokenSnoops.so")
        #expect(result["outcome"] as? String == "warning", "\(result)")
        let detail = result["detail"] as? String ?? ""
        for path in ["/etc/passwd", "/root", "/home"] {
            #expect(detail.contains(path), "\(detail)")
        }
    }

    @Test func thePluginsThatLookForNothingPassIt() async throws {
        for file in Fixtures.samplePlugins.map(Fixtures.library) {
            let result = try await Self.result(file)
            #expect(result["outcome"] as? String == "passed", "\(file): \(result)")
        }
    }
}
