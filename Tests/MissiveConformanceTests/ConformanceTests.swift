import Foundation
import Missive
import MissiveTestSupport
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `missive check`, run as users run it: every check in a child process of the real executable, on the
/// real samples and the deliberately broken fixtures.
@Suite struct ConformanceTests {
    /// The JSON report's results, by plugin file name and check id.
    struct Report {
        let json: [String: Any]
        let results: [String: [String: [String: Any]]]

        init(_ text: String) throws {
            json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            var results: [String: [String: [String: Any]]] = [:]
            for plugin in json["plugins"] as? [[String: Any]] ?? [] {
                let file = URL(fileURLWithPath: plugin["file"] as! String).lastPathComponent
                for result in plugin["results"] as? [[String: Any]] ?? [] { results[file, default: [:]][result["id"] as! String] = result }
            }
            self.results = results
        }

        func outcome(_ file: String, _ id: String) -> String? { results[file]?[id]?["outcome"] as? String }
    }

    static let allCheckIDs: [String] = {
        let run = try! Fixtures.missiveBlocking("check", "--list", "--format", "json")
        let list = try! JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [String: Any]
        return (list["checks"] as! [[String: Any]]).map { $0["id"] as! String }
    }()

    @Test func theSamplesPassAtStrictness10() async throws {
        let files = Fixtures.samplePlugins.map(Fixtures.library)
        let run = try await Fixtures.missive(["check", "--strictness", "10", "--format", "json", "--seed", "7"] + files)
        #expect(run.status == 0, "\(run.stdout)")
        let report = try Report(run.stdout)
        #expect(report.json["passed"] as? Bool == true)
        #expect(report.json["seed"] as? String == "7")
        for file in files.map({ URL(fileURLWithPath: $0).lastPathComponent }) {
            let outcomes = report.results[file] ?? [:]
            #expect(Set(outcomes.keys) == Set(Self.allCheckIDs), "every check ran on \(file)")
            for (id, result) in outcomes {
                let outcome = result["outcome"] as? String
                #expect(["passed", "skipped", "warning"].contains(outcome), "\(file) \(id): \(result)")
            }
            #expect(report.outcome(file, "memory.release") == SanitizerRun.memoryCheck("passed"))
            #expect(report.outcome(file, "threads.consistent") == "passed")
            #expect(report.outcome(file, "decode.large") == "passed")
        }
        #expect(report.outcome("libDemoMedia.so", "media.valid") == "passed")
    }

    @Test(arguments: [
        ("WrongABI", ["abi.version": "failed"], [String]()),
        ("NoEntry", ["load.entry": "failed"], []),
        ("UnresolvedSymbol", ["load.dlopen": "failed"], []),
        ("DuplicateNames", ["names.unique": "failed"], []),
        ("ReservedPrefix", ["names.reserved": "failed", "names.grammar": "failed"], []),
        ("MetadataMismatch", ["metadata.agrees": "failed"], []),
        ("UnknownPersistence", ["persistence.valid": "failed"], []),
        ("StatusPush", ["persistence.status-no-push": "failed"], []),
        ("NoRoundTrip", ["roundtrip.examples": "failed"], []),
        ("DigestNewline", ["digest.valid": "failed"], []),
        ("DigestInvalidUTF8", ["digest.valid": "failed"], []),
        ("LeakyRelease", ["memory.release": "failed"], ["--strictness", "6"]),
        ("AcceptsGarbage", ["decode.empty": "failed", "decode.truncated": "failed", "decode.wrong-shape": "failed",
                            "decode.invalid-utf8": "failed", "decode.nul": "failed", "decode.trailing": "failed", "decode.random": "failed",
                            "decode.deep": "failed", "decode.large": "failed"], []),
        // Its encoding is not JSON, so it cannot round-trip either.
        ("BadOutputs", ["encode.json": "failed", "words.valid": "failed", "push.valid": "failed", "media.valid": "failed",
                        "roundtrip.examples": "failed"], []),
        ("CrashInDecode", ["examples.decode": "crashed"], []),
        ("ExitInDecode", ["examples.decode": "crashed"], []),
        ("AbortOnLoad", ["load.entry": "crashed"], []),
        ("HangInDecode", ["examples.decode": "timed-out"], ["--timeout", "1", "--include", "^(load|abi|types|examples)"]),
        ("FloodInDecode", ["examples.decode": "timed-out"], ["--timeout", "1", "--include", "^(load|abi|types|examples)"]),
        ("LossyEncode", ["roundtrip.examples": "failed"], []),
        ("SlowLeak", ["memory.release": "failed"], ["--strictness", "6"]),
        ("DeepRecursion", ["decode.deep": "crashed"], []),
        ("AcceptsTrailingData", ["decode.trailing": "failed"], []),
        // The fixtures' shared echo decoder refuses re-spelled examples (roundtrip.variations, level 7).
        ("LeaksOnWrongKind", ["memory.errors": "failed"], ["--strictness", "7", "--exclude", #"^roundtrip\.variations$"#]),
        // Both checks that give mutations meet the one that aborts: each crash is reported under each check.
        ("AbortsOnMutation", ["decode.mutations": "crashed", "digest.mutations": "crashed"],
         ["--strictness", "9", "--include", "^(load|abi|types|examples|decode|digest)"]),
        ("DigestEchoesControls", ["digest.mutations": "failed"], ["--strictness", "9", "--include", "^(load|abi|types|examples|decode|digest)"]),
        ("TextsDisagree", ["texts.agree": "failed"], []),
        // What a plugin does to the process (process.state, level 1): a change while loading fails the check; an exit in
        // a call and a crash on the plugin's own thread (both reached through an example) end the child.
        ("ClosesStandardStream", ["process.state": "failed"], []),
        ("ChangesDirectory", ["process.state": "failed"], []),
        ("ChangesLocaleOrUmask", ["process.state": "failed"], []),
        ("OwnSignalHandler", ["process.state": "failed"], []),
        ("ExitOnInput", ["process.state": "crashed", "examples.decode": "crashed"], []),
        ("CrashOnOwnThread", ["process.state": "crashed", "examples.decode": "crashed"], []),
        // Views, actions, memory and containers: a 1 GiB peak in the first decode, a button for an undeclared action, a leak in the
        // view function only, control sequences in a view's text, a view buffer shared by threads, and a plugin that declares
        // MS:Custom again (a host refuses only that container and its type; the checker names the reserved prefix).
        ("HugeAllocation", ["memory.peak": "failed"], ["--strictness", "6"]),
        ("ViewUndeclaredAction", ["view.actions": "failed"], []),
        ("ViewLeak", ["memory.release": "failed"], ["--strictness", "6"]),
        ("ViewControlText", ["view.valid": "failed"], []),
        ("ViewSharedBufferRace", ["view.threads": "failed"], ["--strictness", "6"]),
        ("ConflictingContainer", ["names.reserved": "failed"], []),
    ])
    func eachBrokenFixtureIsReportedUnderTheRightCheck(fixture: String, expected: [String: String], options: [String]) async throws {
        let file = "libBroken\(fixture).so"
        // Under a sanitizer the heap check skips, so the leak goes unseen and the run passes.
        let expected = Dictionary(uniqueKeysWithValues: expected.map { ($0.key, $0.key.hasPrefix("memory.") ? SanitizerRun.memoryCheck($0.value) : $0.value) })
        let run = try await Fixtures.missive(
            ["check", "--format", "json", "--seed", "1"] + options + [try Fixtures.fixtureLibrary("Broken\(fixture)"), Fixtures.library("CRating")])
        #expect(run.status == (expected.values.allSatisfy { $0 == "skipped" } ? 0 : 1))
        let report = try Report(run.stdout)
        for (check, outcome) in expected {
            #expect(report.outcome(file, check) == outcome, "\(check): \(report.results[file]?[check] ?? [:])")
        }
        let detail = report.results[file]?[expected.keys.first!]?["detail"] as? String ?? ""
        switch fixture {
        case "CrashInDecode": #expect(detail.contains(SanitizerRun.segfaultInCheck), "\(detail)")
        case "AbortOnLoad": #expect(detail.contains("SIGABRT (signal 6)"), "\(detail)")
        case "ExitInDecode": #expect(detail.contains("exited with code 70 without a result"), "\(detail)")
        case "DeepRecursion": #expect(detail.contains(SanitizerRun.stackOverflowInCheck), "\(detail)")
        case "HugeAllocation" where SanitizerRun.current == nil:
            #expect(detail.contains("fixture:huge example 0: decode took the peak 10"), "\(detail)")
        case "ViewUndeclaredAction": #expect(detail.contains(#"the button "Delete" (root.children[2]) names the action 'delete', which the type does not declare (its message actions are pin)"#), "\(detail)")
        case "ViewControlText":
            #expect(detail.contains(#"root.children[1].text: escape sequences removed, control characters made spaces: "Status: \u{1B}[31mred"#), "\(detail)")
        case "ViewSharedBufferRace": #expect(detail.contains("Content: ") && detail.contains("on one thread"), "\(detail)")
        case "ConflictingContainer": #expect(detail.contains("MS:Custom"), "\(detail)")
        default: break
        }
        // Every other check passed, warned or was skipped; after a crash or timeout, the checks that meet it again
        // crash or time out too.
        let crashes = expected.values.contains { $0 == "crashed" || $0 == "timed-out" }
        for (id, result) in report.results[file] ?? [:] where expected[id] == nil {
            let allowed = ["passed", "skipped", "warning"] + (crashes ? ["crashed", "timed-out"] : [])
            #expect(allowed.contains(result["outcome"] as? String ?? ""), "\(fixture) \(id): \(result)")
        }
        // The checker survived and went on: the file-level checks ran, and the next plugin passed.
        #expect(report.outcome(file, "load.elf") == "passed")
        #expect(report.results["libCRating.so"]?.values.allSatisfy { ["passed", "skipped"].contains($0["outcome"] as? String) } == true)
    }

    @Test func aCrashShowsThePluginsLastWordsNamesTheInputAndHowToReproduceIt() async throws {
        let path = try Fixtures.fixtureLibrary("BrokenAbortsOnMutation")
        let arguments = ["check", "--strictness", "9", "--include", #"^decode\.mutations$"#, "--seed", "2", path]
        let run = try await Fixtures.missive(arguments + ["--format", "json"])
        #expect(run.status == 1)
        let result = try #require(try Report(run.stdout).results["libBrokenAbortsOnMutation.so"]?["decode.mutations"])
        #expect(result["outcome"] as? String == "crashed")
        #expect((result["detail"] as? String)?.hasPrefix("killed by SIGABRT (signal 6) while running decode.mutations: aborts_on_mutation.c:") == true)
        let output = try #require(result["output"] as? [String])
        #expect(output.contains { $0.contains("decode: unexpected byte") }, "\(output)")
        let input = try #require(result["input"] as? String)
        #expect(input.hasPrefix("fixture:aborts, mutation "), "\(input)")
        #expect(input.contains(" of 2000 (of example 0): "), "\(input)")
        let reproduce = try #require(result["reproduce"] as? String)
        #expect(reproduce == #"missive check \#(path) --strictness 9 --include '^decode\.mutations$' --seed 2"#)

        // The command, run as printed, meets the same input.
        let words = Self.shellWords(reproduce)
        #expect(words.first == "missive")
        let again = try await Fixtures.missive(Array(words.dropFirst()) + ["--format", "json"])
        #expect(try Report(again.stdout).results["libBrokenAbortsOnMutation.so"]?["decode.mutations"]?["input"] as? String == input)

        // The text report shows the same under the result's line; JUnit keeps it in the error.
        let text = try await Fixtures.missive(arguments)
        #expect(text.stdout.contains("          input: \(input)"), "\(text.stdout)")
        #expect(text.stdout.contains("          reproduce: \(reproduce)"))
        #expect(text.stdout.contains("          | aborts_on_mutation.c:"))
        let junit = try await Fixtures.missive(arguments + ["--format", "junit"])
        #expect(junit.stdout.contains("reproduce: missive check"), "\(junit.stdout)")
        #expect(junit.stdout.contains("| aborts_on_mutation.c:"))
    }

    /// `missive-check`, the checker the command plugin runs, is `missive check` on its own: the same report and
    /// exit codes, its own name in its messages, and a reproducing command that runs it again.
    @Test func theStandaloneCheckerIsTheSameCheckUnderItsOwnName() async throws {
        let checker = Fixtures.buildDirectory + "/missive-check"
        let path = try Fixtures.fixtureLibrary("BrokenAbortsOnMutation")
        let arguments = ["--strictness", "9", "--include", #"^decode\.mutations$"#, "--seed", "2", path, "--format", "json"]
        let environment = Fixtures.missiveEnvironment(journal: Fixtures.scratchPath("crashes"))
        let run = try await Fixtures.run(checker, arguments, environment: environment, inherit: false)
        #expect(run.status == 1, "\(run.stderr)")
        let result = try #require(try Report(run.stdout).results["libBrokenAbortsOnMutation.so"]?["decode.mutations"])
        #expect(result["outcome"] as? String == "crashed")
        let reproduce = try #require(result["reproduce"] as? String)
        #expect(reproduce == #"missive-check \#(path) --strictness 9 --include '^decode\.mutations$' --seed 2"#)
        let words = Self.shellWords(reproduce)
        let again = try await Fixtures.run(checker, Array(words.dropFirst()) + ["--format", "json"], environment: environment, inherit: false)
        #expect(try Report(again.stdout).results["libBrokenAbortsOnMutation.so"]?["decode.mutations"]?["input"] as? String == result["input"] as? String)

        // A plugin that passes, and the usage errors, as `missive check` has them.
        let passing = try await Fixtures.run(checker, [Fixtures.library("CRating")], environment: environment, inherit: false)
        #expect(passing.status == 0 && passing.stdout.contains("PASSED: 1 plugin(s)"), "\(passing.stdout)\n\(passing.stderr)")
        let usage = try await Fixtures.run(checker, ["--strictness", "11", path], environment: environment, inherit: false)
        #expect(usage.status == 2 && usage.stderr.contains("--strictness must be from 1 to 10"), "\(usage.stderr)")
        let missing = try await Fixtures.run(checker, ["/nonexistent/libX.so"], environment: environment, inherit: false)
        #expect(missing.status == 2 && missing.stderr == "missive-check: /nonexistent/libX.so: no such file\n", "\(missing.stderr)")
        let version = try await Fixtures.run(checker, ["--version"], environment: environment, inherit: false)
        #expect(version.stdout == MissiveVersion.string + "\n")
    }

    /// The words of a command as a POSIX shell splits them, for commands quoted with single quotes only.
    static func shellWords(_ command: String) -> [String] {
        var words: [String] = [], word = "", quoted = false, started = false
        for character in command {
            if character == "'" {
                quoted.toggle()
                started = true
            } else if character == " " && !quoted {
                if started { words.append(word) }
                word = ""
                started = false
            } else {
                word.append(character)
                started = true
            }
        }
        if started { words.append(word) }
        return words
    }

    @Test func aSlowButCorrectPluginGetsWarningsNotTimeouts() async throws {
        // The C sample with a 3 ms decode. The time limit of 8 s gives the repeating checks 2 s each; at the
        // default 30 s they take 7.5 s, and the whole run at strictness 10 passes.
        let run = try await Fixtures.missive(
            "check", "--strictness", "10", "--timeout", "8", "--include", #"^(examples\.decode|memory\..*|threads\.stress|speed\.decode)$"#,
            "--format", "json", "--seed", "4", try Fixtures.fixtureLibrary("SlowRating"))
        #expect(run.status == 0, "\(run.stdout)")
        let results = try #require(try Report(run.stdout).results["libSlowRating.so"])
        // examples.decode, memory.release, memory.errors, memory.peak, threads.stress and speed.decode.
        #expect(results.count == 6)
        for (id, result) in results {
            let allowed = id.hasPrefix("memory.") ? [SanitizerRun.memoryCheck("passed"), SanitizerRun.memoryCheck("warning")] : ["passed", "warning"]
            #expect(allowed.contains(result["outcome"] as? String ?? ""), "\(id): \(result)")
        }
        #expect((results["speed.decode"]?["detail"] as? String)?.contains("over the 50 µs budget") == true)
        if SanitizerRun.current == nil {
            #expect((results["memory.release"]?["detail"] as? String)?.contains("the plugin is slow") == true)
        }
    }

    @Test(arguments: 1...20)
    func theSamplesAndACorrectPluginPassTheSeededChecks(seed: Int) async throws {
        // The checks whose inputs the seed makes, in one process per seed to keep this quick.
        let files = Fixtures.samplePlugins.map(Fixtures.library) + [try Fixtures.fixtureLibrary("Legacy10")]
        let run = try await Fixtures.missive(
            ["check", "--in-process", "--strictness", "10", "--seed", String(seed), "--format", "json",
             "--include", #"^(decode\.(random|trailing|mutations)|view\.mutations|digest\.mutations|roundtrip\.(examples|variations))$"#]
                + files)
        #expect(run.status == 0, "seed \(seed): \(run.stdout)")
    }

    @Test func aPluginThatForksIsJudgedOnItsCheckAndItsProcessesDoNotOutliveIt() async throws {
        let run = try await Fixtures.missive("check", "--include", "^examples.decode$", "--timeout", "20", "--format", "json",
                                       try Fixtures.fixtureLibrary("BrokenForkInDecode"))
        #expect(run.status == 0, "\(run.stdout)")
        #expect(try Report(run.stdout).outcome("libBrokenForkInDecode.so", "examples.decode") == "passed")
        #expect(run.duration < .seconds(15), "the forked process (it sleeps 60 s) must not hold the checker")
    }

    @Test func aRelativePathChecksThatFileAndNoOtherOfTheSameName() async throws {
        // A leaky plugin named like a sample, in the working folder: dlopen must not find the real sample instead.
        let directory = try Fixtures.stage(["BrokenLeakyRelease"], renamed: ["BrokenLeakyRelease": "libDemoMessages.so"])
        let run = try await Fixtures.missive(["check", "--strictness", "6", "--include", "^(load|abi|types|examples|memory.release)",
                                        "--format", "json", "libDemoMessages.so"], directory: directory)
        let report = try Report(run.stdout)
        // The leak tells the two files apart. Under a sanitizer the heap check skips, and only the name that
        // the checker read from the file is left to do it.
        #expect(run.status == (SanitizerRun.current == nil ? 1 : 0))
        #expect(report.outcome("libDemoMessages.so", "memory.release") == SanitizerRun.memoryCheck("failed"))
        let plugin = (report.json["plugins"] as? [[String: Any]])?.first
        #expect(plugin?["name"] as? String == "BrokenLeakyRelease", "\(plugin ?? [:])")
    }

    @Test func runsThatWouldCheckNothingAreUsageErrors() async throws {
        let empty = try Fixtures.temporaryDirectory()
        #expect(try await Fixtures.missive("check", empty).status == 2)
        #expect(try await Fixtures.missive("check", "--include", "^decode.emtpy$", Fixtures.library("CRating")).status == 2)
    }

    @Test func expectedFailuresAreReportedAndCannotGoStale() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let list = directory + "/expected.txt"
        let fixture = try Fixtures.fixtureLibrary("BrokenDuplicateNames")
        try "# known problems\nnames.unique BrokenDuplicateNames\n".write(toFile: list, atomically: true, encoding: .utf8)
        let listed = try await Fixtures.missive("check", "--expected-failures", list, "--include", "^names", "--format", "json", fixture)
        #expect(listed.status == 0, "\(listed.stdout)")
        let result = try Report(listed.stdout).results["libBrokenDuplicateNames.so"]?["names.unique"]
        #expect(result?["outcome"] as? String == "failed")
        #expect(result?["expectedFailure"] as? Bool == true)

        try "names.grammar libBrokenDuplicateNames.so\n".write(toFile: list, atomically: true, encoding: .utf8)
        let stale = try await Fixtures.missive("check", "--expected-failures", list, "--include", "^names.grammar$", "--format", "json", fixture)
        #expect(stale.status == 1)
        let staleResult = try Report(stale.stdout).results["libBrokenDuplicateNames.so"]?["names.grammar"]
        #expect((staleResult?["seen"] as? String)?.contains("remove 'names.grammar'") == true)

        // Windows line endings are read the same.
        try "names.unique\r\nnames.grammar libBrokenDuplicateNames.so\r\n".write(toFile: list, atomically: true, encoding: .utf8)
        let crlf = try await Fixtures.missive("check", "--expected-failures", list, "--include", "^names.unique$", fixture)
        #expect(crlf.status == 0, "\(crlf.stdout)\(crlf.stderr)")

        try "names.typo\n".write(toFile: list, atomically: true, encoding: .utf8)
        let typo = try await Fixtures.missive("check", "--expected-failures", list, fixture)
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("no check has the id 'names.typo'"))
    }

    @Test func junitOutputIsValidXMLWithOneCasePerCheck() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let output = directory + "/report.xml"
        let run = try await Fixtures.missive(
            "check", "--format", "junit", "--output", output, "--timeout", "5",
            Fixtures.library("CRating"), try Fixtures.fixtureLibrary("BrokenNoRoundTrip"), try Fixtures.fixtureLibrary("BrokenCrashInDecode"))
        #expect(run.status == 1)
        #expect(run.stderr.contains("report written to \(output)"))

        let collector = JUnitCollector()
        let parser = try #require(XMLParser(contentsOf: URL(fileURLWithPath: output)))
        parser.delegate = collector
        #expect(parser.parse(), "\(String(describing: parser.parserError))")
        #expect(collector.suites.map(\.name) == ["CRating", "BrokenNoRoundTrip", "BrokenCrashInDecode"])
        for suite in collector.suites {
            #expect(suite.cases.count == Int(suite.attributes["tests"] ?? ""))
            #expect(suite.cases.filter { $0.element == "failure" }.count == Int(suite.attributes["failures"] ?? ""))
            #expect(suite.cases.filter { $0.element == "error" }.count == Int(suite.attributes["errors"] ?? ""))
        }
        let drift = try #require(collector.suites.first { $0.name == "BrokenNoRoundTrip" })
        #expect(drift.cases.first { $0.name == "roundtrip.examples" }?.element == "failure")
        let crash = try #require(collector.suites.first { $0.name == "BrokenCrashInDecode" })
        #expect(crash.cases.first { $0.name == "examples.decode" }?.element == "error")
        #expect(collector.suites[0].cases.allSatisfy { $0.element == nil || $0.element == "skipped" })
    }

    @Test func listGivesEveryCheckWithALevel() async throws {
        let run = try await Fixtures.missive("check", "--list", "--format", "json")
        #expect(run.status == 0)
        let checks = try #require((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])?["checks"] as? [[String: Any]])
        let ids = checks.map { $0["id"] as! String }
        #expect(Set(ids).count == ids.count)
        #expect(checks.allSatisfy { (1...10).contains($0["level"] as? Int ?? 0) && !($0["summary"] as? String ?? "").isEmpty })
        for required in ["abi.version", "names.grammar", "decode.random", "decode.deep", "decode.large", "memory.release", "threads.consistent", "speed.decode"] {
            #expect(ids.contains(required))
        }
        // Requirements come before the checks that need them.
        for (index, check) in checks.enumerated() {
            for requirement in check["requires"] as? [String] ?? [] {
                #expect(ids.firstIndex(of: requirement).map { $0 < index } == true, "\(check["id"]!) requires \(requirement)")
            }
        }
    }

    @Test func usageErrorsExitWith2() async throws {
        #expect(try await Fixtures.missive("check", "--strictness", "11", Fixtures.library("CRating")).status == 2)
        #expect(try await Fixtures.missive("check", "/no/such/plugin.so").status == 2)
        #expect(try await Fixtures.missive("check", "--include", "([", Fixtures.library("CRating")).status == 2)
        #expect(try await Fixtures.missive("check").status == 2)
    }

    @Test func clashesWithOtherFoldersNameBothPlugins() async throws {
        let rival = try Fixtures.stage(["RatingRival"])
        let run = try await Fixtures.missive("check", "--include", "^names.clash$", "--against", rival, "--format", "json", Fixtures.library("CRating"))
        #expect(run.status == 1)
        let seen = try Report(run.stdout).results["libCRating.so"]?["names.clash"]?["seen"] as? String ?? ""
        #expect(seen.contains("objectName 'demo:rating' is also declared by RivalRating 1.0.0 (\(rival)/libRatingRival.so)"), "\(seen)")
        #expect(seen.contains("businessID 'evaluation'"))
    }

    @Test func anotherCopyOfTheSamePluginIsAReplacementNotAClash() async throws {
        // An older copy under another file name, as when checking an upgrade against the installed folder.
        let installed = try Fixtures.stage(["RatingOlder"])
        let run = try await Fixtures.missive("check", "--include", "^names.clash$", "--against", installed, "--format", "json", Fixtures.library("CRating"))
        #expect(run.status == 0, "\(run.stdout)")
        #expect(try Report(run.stdout).outcome("libCRating.so", "names.clash") == "passed")
    }

    @Test func inProcessModeRunsTheSameChecks() async throws {
        let run = try await Fixtures.missive("check", "--in-process", "--strictness", "6", "--format", "json", Fixtures.library("DemoMessages"))
        #expect(run.status == 0, "\(run.stdout)")
        #expect(try Report(run.stdout).outcome("libDemoMessages.so", "memory.release") == SanitizerRun.memoryCheck("passed"))
    }
}

/// Collects `<testsuite>` and `<testcase>` elements with what each test case contains.
final class JUnitCollector: NSObject, XMLParserDelegate {
    struct TestCase {
        var name: String
        var element: String?
    }

    struct Suite {
        var name: String
        var attributes: [String: String]
        var cases: [TestCase] = []
    }

    var suites: [Suite] = []

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
        switch name {
        case "testsuite": suites.append(Suite(name: attributes["name"] ?? "", attributes: attributes))
        case "testcase": suites[suites.count - 1].cases.append(TestCase(name: attributes["name"] ?? ""))
        case "failure", "error", "skipped":
            suites[suites.count - 1].cases[suites[suites.count - 1].cases.count - 1].element = name
        default: break
        }
    }
}
