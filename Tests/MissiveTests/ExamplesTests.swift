import Foundation
import Missive
import MissiveTestSupport
import Testing

/// The README's code is the code of `Examples/`, and the examples build and run as the README says: a
/// plugin package (`Examples/AcmeMessages`) and a host (`Examples/ChatHost`), each depending on Missive by
/// its published URL, resolved here to a snapshot of this checkout tagged with the current version
/// (Scripts/examples.sh).
@Suite struct ExamplesTests {
    /// A fenced Swift block of a Markdown file, and the file it says it shows.
    struct Snippet {
        let document: String
        let line: Int
        let shownFile: String?
        let code: String
    }

    /// Every ```swift block of the README, docs/ and the DocC catalogs' articles (`Sources/*/Documentation.docc`),
    /// with the `<!-- file: PATH -->` line above it, if any.
    static func swiftSnippets() throws -> [Snippet] {
        let manager = FileManager.default
        let docs = (try? manager.contentsOfDirectory(atPath: Fixtures.repositoryRoot + "/docs")) ?? []
        var documents = ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        for module in try manager.contentsOfDirectory(atPath: Fixtures.repositoryRoot + "/Sources").sorted() {
            let catalog = "Sources/" + module + "/Documentation.docc"
            guard let files = manager.enumerator(atPath: Fixtures.repositoryRoot + "/" + catalog) else { continue }
            documents += files.compactMap { $0 as? String }.filter { $0.hasSuffix(".md") }.sorted().map { catalog + "/" + $0 }
        }
        var snippets: [Snippet] = []
        for document in documents {
            let lines = try String(contentsOfFile: Fixtures.repositoryRoot + "/" + document, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var index = 0
            while index < lines.count {
                defer { index += 1 }
                guard lines[index] == "```swift" else { continue }
                let start = index
                let marker = lines[..<start].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                let shownFile = marker.flatMap { line -> String? in
                    guard line.hasPrefix("<!-- file: "), line.hasSuffix(" -->") else { return nil }
                    return String(line.dropFirst("<!-- file: ".count).dropLast(" -->".count))
                }
                index += 1
                while index < lines.count && lines[index] != "```" { index += 1 }
                snippets.append(Snippet(document: document, line: start + 1, shownFile: shownFile,
                                        code: lines[(start + 1)..<index].joined(separator: "\n") + "\n"))
            }
        }
        return snippets
    }

    @Test func everySwiftSnippetIsAnExampleFileShownWhole() throws {
        let snippets = try Self.swiftSnippets()
        #expect(snippets.count >= 5)
        for snippet in snippets {
            let file = try #require(snippet.shownFile, "\(snippet.document):\(snippet.line): a Swift block needs a <!-- file: PATH --> line above it")
            let text = try String(contentsOfFile: Fixtures.repositoryRoot + "/" + file, encoding: .utf8)
            #expect(snippet.code == text, "\(snippet.document):\(snippet.line) differs from \(file)")
        }
        // Every Swift file of the examples is shown, so none can drift unseen.
        let shown = Set(snippets.compactMap(\.shownFile))
        let examples = FileManager.default.enumerator(atPath: Fixtures.repositoryRoot + "/Examples")!.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") && !$0.contains(".build") }.map { "Examples/" + $0 }
        #expect(Set(examples).subtracting(shown).isEmpty, "not shown in the README: \(Set(examples).subtracting(shown).sorted())")
    }

    @Test func theReadmesDependencyLineIsTheOneTheExamplesUse() throws {
        let readme = try String(contentsOfFile: Fixtures.repositoryRoot + "/README.md", encoding: .utf8)
        let line = ".package(url: \"\(Self.packageURL)\", from: \"\(MissiveVersion.string)\"),"
        #expect(readme.contains("```\n" + line + "\n```"))
        for example in ["AcmeMessages", "ChatHost", "ChatService"] {
            let manifest = try String(contentsOfFile: Fixtures.repositoryRoot + "/Examples/\(example)/Package.swift", encoding: .utf8)
            #expect(manifest.contains("        " + line + "\n"), "\(example)")
        }
    }

    /// The URL the examples (and the README) depend on Missive by.
    static let packageURL = "https://github.com/missive-chat/missive"

    // The limit guards against a hang. A first build of the examples runs in the idle scheduling class, on what the
    // other tests leave of the processor, so it may end after all the others; CI starts the same build beside
    // `swift test`'s (Scripts/examples.sh --build), so that it is done by then.
    @Test(SanitizerRun.timeLimit(minutes: 40))
    func thePluginAndTheHostExamplesBuildTestAndRunAsTheReadmeShows() async throws {
        // The packages in .build/examples, depending on a snapshot of this checkout by Missive's URL (the script says
        // how), where an earlier run's or CI's build of them is found up to date.
        let prepare = try await Fixtures.run("/usr/bin/env", ["bash", Fixtures.repositoryRoot + "/Scripts/examples.sh"], directory: Fixtures.repositoryRoot, priority: .immediate)
        try #require(prepare.status == 0, "Scripts/examples.sh: \(prepare.stderr)")
        let work = prepare.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let configuration = work + "/swiftpm-configuration"
        let scratch = try Fixtures.temporaryDirectory()
        // A first build of the examples (Missive, swift-syntax and BoringSSL once more: minutes of processor time) runs
        // in the idle class, so that it does not slow the tests that measure time. Once built (by an earlier run, or
        // by CI beside `swift test`'s build), the builds below only check that all is up to date, in a few seconds
        // each, at the normal priority: in the idle class they would wait for the end of every other test.
        let examplesBuilt = FileManager.default.fileExists(atPath: work + "/AcmeMessages/.build/debug/missive-check")
        func swift(_ arguments: [String], in package: String, environment: [String: String] = [:]) async throws -> Fixtures.Run {
            // Right after the subcommand: after a command plugin's name, options go to the plugin. SwiftPM remembers
            // the revision each version resolved to, and the snapshot's version is a new revision whenever the
            // checkout changes: only a warning (Scripts/examples.sh).
            let run = try await Fixtures.run(
                "/usr/bin/env", ["swift", arguments[0], "--config-path", configuration, "--resolver-fingerprint-checking", "warn"] + arguments.dropFirst(),
                directory: work + "/" + package,
                environment: environment, priority: examplesBuilt ? .normal : .background)
            #expect(run.status == 0, "swift \(arguments.joined(separator: " ")) in \(package):\n\(run.stdout)\n\(run.stderr)")
            return run
        }

        // The plugin author: build, unit-test the type, check the plugin with the command plugin.
        _ = try await swift(["build"], in: "AcmeMessages")
        let unitTests = try await swift(["test"], in: "AcmeMessages")
        #expect((unitTests.stdout + unitTests.stderr).contains("2 tests"))
        let check = try await swift(["package", "missive-check", "--product", "AcmeMessages"], in: "AcmeMessages")
        #expect(check.stdout.contains("PASSED: 1 plugin(s)"))
        let plugin = work + "/AcmeMessages/.build/debug/libAcmeMessages.so"

        // The check built `missive-check` alone, not the whole `missive` command with its store and database client.
        let built = ["Modules", "Modules-tool", "."].flatMap { folder in
            (try? FileManager.default.contentsOfDirectory(atPath: work + "/AcmeMessages/.build/debug/" + folder)) ?? []
        }
        #expect(built.contains { $0.hasPrefix("missive_check") }, "\(built.sorted())")
        #expect(!built.contains { $0 == "PostgresNIO.swiftmodule" || $0 == "GRDB.swiftmodule" || $0 == "missive" || $0 == "missive-tool" }, "\(built.sorted())")

        // Installing it with the `missive` command. The README runs it with `swift run missive install` in the
        // plugin's package, which builds this checkout's `missive` once more (five minutes of the suite); the
        // test runs the one the suite built from the same source.
        let home = scratch + "/home"
        let environment = ["XDG_DATA_HOME": home, PluginSearchPath.systemDirectoryVariable: scratch + "/system"]
        let install = try await Fixtures.run(
            Fixtures.buildDirectory + "/missive", ["install", plugin], directory: work + "/AcmeMessages",
            environment: environment.merging(Fixtures.missiveEnvironment(journal: Fixtures.scratchPath("crashes"))) { own, _ in own })
        #expect(install.status == 0, "\(install.stdout)\n\(install.stderr)")
        #expect(install.stdout.contains("installed AcmeMessages 1.0.0 as \(home)/missive/plugins/libAcmeMessages.so"), "\(install.stdout)")
        #expect(FileManager.default.fileExists(atPath: home + "/missive/plugins/libAcmeMessages.so"))

        // The host developer: build and run the host on the sample conversation and a notice of its own.
        // Under a sanitizer the sample plugins in the build folder are instrumented, and load only into a host
        // built with the same sanitizer, so the host is built as they were (the plugin above loads into either).
        if SanitizerRun.current != nil {
            #expect(!SanitizerRun.buildFlags.isEmpty, "run the tests under a sanitizer with Scripts/sanitize.sh, which passes MISSIVE_SANITIZER_BUILD_FLAGS")
        }
        // The host builds in the plugin's build folder, as a developer's second package may: what the two share
        // (Missive and its dependencies, the same versions and flags) is compiled once, not once per package. A host
        // searches its own folder for plugins first, so the plugin's build output there goes: the host must find the
        // installed copy, as on a machine that has only the host and what was installed.
        let shared = work + "/AcmeMessages/.build"
        try FileManager.default.removeItem(atPath: plugin)
        _ = try await swift(["build", "--scratch-path", shared] + SanitizerRun.buildFlags, in: "ChatHost")
        let notice = #"{"id":"n1","conversationID":"team","senderID":"app","sentAt":1767225800000,"objectName":"chat:notice","content":{"text":"Frank joined"}}"#
        let conversation = try String(contentsOfFile: Fixtures.repositoryRoot + "/SampleData/conversation.jsonl", encoding: .utf8)
        try Data((conversation + notice + "\n").utf8).write(to: URL(fileURLWithPath: scratch + "/input.jsonl"))
        let host = try await Fixtures.run(
            shared + "/debug/chat-host", [scratch + "/input.jsonl"], directory: scratch,
            environment: environment.merging([PluginSearchPath.environmentVariable: Fixtures.buildDirectory]) { $1 })
        #expect(host.status == 0, "\(host.stderr)")
        // The installed plugin decodes the order that hosts without it keep as unknown.
        #expect(host.stdout.contains("m11 acme:order: [Order] A-1042, 42.50 EUR\n  persistence: counted (3)\n  re-encoded:  "))
        #expect(host.stdout.contains("n1 chat:notice: [Notice] Frank joined\n  persistence: persisted (1)"))
        #expect(host.stdout.contains("m03 demo:poll: [Poll] Where to?"))
        // Unknown content goes out as it came in.
        #expect(host.stdout.contains(#"m12 acme:receipt: [Unsupported message: acme:receipt]"#))
        #expect(host.stdout.contains(#"re-encoded:  {"receipt":  "R-77" ,"lines":[1, 2.50e1, -0.5]}"#))
        // The conversation drawn: the installed plugin's order card, a thread counter, a card for what is unknown.
        #expect(host.stdout.contains("│ Order A-1042"), "\(host.stdout)")
        // The composer menu, and the installed plugin's action as a button on its card.
        #expect(host.stdout.hasPrefix("composer: Poll (demo.poll.create), Rate (demo.rating.create)\n"), "\(host.stdout)")
        #expect(host.stdout.contains("[ Track order ]"))
        #expect(host.stdout.contains("↳ 2 replies"))
        #expect(host.stdout.contains("type acme:receipt is not installed"))
        // The sample plugins in the build folder, and the one installed above.
        #expect(host.stderr.contains("ready: \(Fixtures.samplePlugins.count + 1) plugins loaded, 0 deferred, 0 refused"), "\(host.stderr)")
    }
}
