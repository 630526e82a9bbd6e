import Foundation
import Missive
import MissiveConformance
import MissiveTestSupport
import Testing

/// The view checks of `missive check` (`view.*`), run as users run them, on the real samples and on fixtures
/// that each break one rule of `missive.view.v1`; the C sample's view; and the header's `missive_view_*`
/// writer helpers, compiled with a C compiler and read back by the host.
@Suite struct ViewChecksTests {
    /// Every view check, as the catalog lists them.
    static let viewCheckIDs = ConformanceCatalog.checks.map(\.id).filter { $0.hasPrefix("view.") }

    /// The non-view checks above level 6, left out of the fixture runs: the fixtures' shared echo decoder
    /// refuses re-spellings (`roundtrip.variations`) and is no JSON validator (`decode.mutations`), and the
    /// speed checks may warn on a loaded machine. Up to level 6 every fixture passes all but its own check.
    /// Left out: the checks above level 6, and the memory checks, which measure for a time and warn when the
    /// plugin is slow (as a machine loaded by other builds makes every plugin); ConformanceTests checks those on
    /// the fixtures made for them.
    static let outOfScope = ConformanceCatalog.checks.filter { !$0.id.hasPrefix("view.") && ($0.level > 6 || $0.id.hasPrefix("memory.")) }.map(\.id)

    @Test func theCatalogHasTheViewChecksAfterTheContentChecks() throws {
        #expect(Self.viewCheckIDs == [
            "view.extension", "view.status", "view.renders", "view.valid", "view.actions", "view.deterministic", "view.threads", "view.budget",
            "view.mutations",
        ])
        let ids = ConformanceCatalog.checks.map(\.id)
        let firstView = try #require(ids.firstIndex(of: "view.extension"))
        #expect(ids.firstIndex(of: "content.unknown-members").map { $0 < firstView } == true)
        let levels = Dictionary(uniqueKeysWithValues: ConformanceCatalog.checks.map { ($0.id, $0.level) })
        #expect(Self.viewCheckIDs.map { levels[$0]! } == [1, 2, 2, 3, 3, 3, 6, 8, 9])
    }

    @Test func everySamplePassesEveryViewCheckAtStrictness10() async throws {
        let files = Fixtures.samplePlugins.map(Fixtures.library)
        let run = try await Fixtures.missive(["check", "--strictness", "10", "--include", #"^view\."#, "--format", "json", "--seed", "11"] + files)
        #expect(run.status == 0, "\(run.stdout)")
        let report = try ConformanceTests.Report(run.stdout)
        for file in files.map({ URL(fileURLWithPath: $0).lastPathComponent }) {
            #expect(Set(report.results[file]?.keys.map { $0 } ?? []) == Set(Self.viewCheckIDs), "\(file)")
            for id in Self.viewCheckIDs {
                // Each sample offers a view, so no check is skipped. Only the time budget may warn, on a loaded machine.
                let allowed = id == "view.budget" ? ["passed", "warning"] : ["passed"]
                #expect(allowed.contains(report.outcome(file, id) ?? ""), "\(file) \(id): \(report.results[file]?[id] ?? [:])")
            }
        }
        #expect(report.outcome("libCRating.so", "view.budget") == "passed", "a C view takes microseconds")
    }

    @Test func theCSampleDrawsTheStarsAsATitleAndTheCommentAsBody() throws {
        let registry = try Fixtures.sampleRegistry()
        func view(_ content: String) throws -> (ViewReading, ViewElement?) {
            let message = registry.decode(Fixtures.envelope("MS:Custom", content))
            let content = try #require(message.content as? PluginContent)
            let described = try #require(try content.describedView())
            return (described, message.content.view)
        }
        let (commented, shown) = try view(#"{"businessID":"evaluation","score":4,"comment":"Solved it\nin the end"}"#)
        #expect(commented.problems.isEmpty, "\(commented.problems)")
        let expected = ViewElement.stack(ViewStack(axis: .vertical, spacing: 1, children: [
            .text("★★★★☆ 4/5", role: .title),
            .text("Solved it\nin the end", maxLines: 6),
        ]))
        #expect(commented.element == expected)
        #expect(shown == expected)
        // Without a comment, only the title.
        let (bare, _) = try view(#"{"businessID":"evaluation","score":1}"#)
        #expect(bare.element == .stack(ViewStack(axis: .vertical, spacing: 1, children: [.text("★☆☆☆☆ 1/5", role: .title)])))
        #expect(bare.problems.isEmpty)
    }

    @Test(arguments: [
        ("ViewBadStruct", "view.extension", "failed",
         ["fixture:short-view: its missive.view.v1 extension is 4 bytes; the view function needs 16",
          "fixture:null-view: its missive.view.v1 extension has no view function"]),
        ("ViewStatus", "view.status", "failed", ["fixture:status-view has persistence 16 (status) and offers missive.view.v1"]),
        ("ViewFails", "view.renders", "failed",
         ["view failed with status 3 (MISSIVE_FAILED): the view template is missing", "gives nothing to draw (root: not valid JSON"]),
        ("ViewAlwaysAbsent", "view.renders", "warning",
         ["fixture:view-absent offers a view but gives MISSIVE_ABSENT for every example"]),
        ("ViewInvalid", "view.valid", "failed",
         ["root.children[1].url: only http and https URLs are allowed", "root.children[2].width: must be 0 to 16384 pixels",
          #"root.children[3]: unknown element type "carousel" without a fallback"#]),
        ("ViewNondeterministic", "view.deterministic", "failed", [#"View number 1\",\"role\":\"body\"}]}" the first time"#]),
        ("ViewThreadUnsafe", "view.threads", "failed", ["Drawn by thread", "on one thread", "differences in all"]),
        ("ViewCrashesOnMutation", "view.mutations", "crashed", [SanitizerRun.segfaultInCheck, "while running view.mutations"]),
        ("ViewSlow", "view.budget", "warning", ["over the 1 ms budget: fixture:view-slow"]),
    ])
    func eachBrokenFixtureFailsExactlyItsViewCheck(fixture: String, check: String, outcome: String, details: [String]) async throws {
        let file = "libBroken\(fixture).so"
        let run = try await Fixtures.missive([
            "check", "--strictness", "10", "--exclude", "^(" + Self.outOfScope.map(NSRegularExpression.escapedPattern(for:)).joined(separator: "|") + ")$",
            "--format", "json", "--seed", "5",
            try Fixtures.fixtureLibrary("Broken\(fixture)"),
        ])
        #expect(run.status == (outcome == "warning" ? 0 : 1), "\(run.stdout)\(run.stderr)")
        let report = try ConformanceTests.Report(run.stdout)
        let results = try #require(report.results[file])
        #expect(Set(Self.viewCheckIDs).isSubset(of: Set(results.keys)))
        #expect(report.outcome(file, check) == outcome, "\(results[check] ?? [:])")
        let detail = results[check]?["detail"] as? String ?? ""
        for expected in details {
            #expect(detail.contains(expected), "\(check): \(detail)")
        }
        // Every other check passed, or was skipped because the failed one (or what it needs) does not hold.
        for (id, result) in results where id != check {
            // memory.release calls the view too: a slow view makes it measure fewer calls, and say so.
            let allowed = fixture == "ViewSlow" && id == "memory.release" ? ["passed", "skipped", "warning"] : ["passed", "skipped"]
            #expect(allowed.contains(result["outcome"] as? String ?? ""), "\(file) \(id): \(result)")
        }
    }

    @Test func aViewOfANewerKindWithAFallbackIsValid() async throws {
        let path = try Fixtures.fixtureLibrary("ViewFallback")
        let run = try await Fixtures.missive("check", "--strictness", "10", "--include", #"^view\."#, "--format", "json", "--seed", "3", path)
        #expect(run.status == 0, "\(run.stdout)")
        let report = try ConformanceTests.Report(run.stdout)
        for id in Self.viewCheckIDs {
            let allowed = id == "view.budget" ? ["passed", "warning"] : ["passed"]
            #expect(allowed.contains(report.outcome("libViewFallback.so", id) ?? ""), "\(id)")
        }

        // The host takes the fallback, and says so without calling it a violation.
        let registry = MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(["ViewFallback"]))).registry
        let message = registry.decode(Fixtures.envelope("fixture:view-fallback", #"{"fixture":true}"#))
        let content = try #require(message.content as? PluginContent)
        let reading = try #require(try content.describedView())
        #expect(reading.violations.isEmpty)
        #expect(reading.problems.map(\.severity) == [.fallback])
        #expect(reading.problems.first?.path == "root.children[1]")
        #expect(reading.element == .stack(ViewStack(axis: .vertical, spacing: 1, children: [
            .text("Meeting point", role: .title),
            .link("Open the map", url: "https://www.openstreetmap.org/#map=15/48.8584/2.2945"),
        ])))
    }

    @Test func pluginsWithoutAViewSkipTheViewChecks() async throws {
        let run = try await Fixtures.missive(
            "check", "--strictness", "10", "--include", #"^view\."#, "--format", "json", try Fixtures.fixtureLibrary("IntegerContainer"))
        #expect(run.status == 0, "\(run.stdout)")
        let results = try #require(try ConformanceTests.Report(run.stdout).results["libIntegerContainer.so"])
        #expect(results["view.extension"]?["detail"] as? String == "no type offers missive.view.v1")
        #expect(results["view.status"]?["detail"] as? String == "no type offers missive.view.v1")
        for id in Self.viewCheckIDs {
            #expect(results[id]?["outcome"] as? String == "skipped", "\(id): \(results[id] ?? [:])")
        }
    }

    // MARK: The C writer helpers

    /// What one scenario of the helper program wrote.
    struct Written {
        let status: Int32
        /// Where the reason mark fell, if it was written.
        let mark: Int?
        let bytes: [UInt8]

        /// What follows the mark.
        var reason: String? { mark.map { String(decoding: bytes[$0...], as: UTF8.self) } }
    }

    /// Compiles `helperProgram` with the warnings a careful C author turns on, as errors, runs it and gives what
    /// each scenario wrote, by name.
    static func runHelperProgram() async throws -> [String: Written] {
        let folder = try Fixtures.temporaryDirectory()
        try helperProgram.write(toFile: folder + "/helpers.c", atomically: true, encoding: .utf8)
        let include = Fixtures.repositoryRoot + "/Sources/CMissivePlugin/include"
        let build = try await Fixtures.run(
            "/bin/sh", ["-c", "cc -std=c11 -Wall -Wextra -Werror -pedantic -Wshadow -I '\(include)' helpers.c -o helpers"], directory: folder)
        try #require(build.status == 0, "\(build.stderr)")
        let run = try await Fixtures.run(folder + "/helpers", [])
        try #require(run.status == 0, "\(run.stderr)")
        var written: [String: Written] = [:]
        for line in run.stdout.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4, let status = Int32(fields[1]), let mark = Int(fields[2]) else { continue }
            var bytes: [UInt8] = []
            var hex = fields[3][...]
            while hex.count >= 2, let byte = UInt8(hex.prefix(2), radix: 16) {
                bytes.append(byte)
                hex = hex.dropFirst(2)
            }
            written[fields[0]] = Written(status: status, mark: mark >= 0 ? mark : nil, bytes: bytes)
        }
        return written
    }

    @Test func theHelpersWriteADocumentTheHostReadsWithoutAProblem() async throws {
        let written = try await Self.runHelperProgram()
        let document = try #require(written["every-helper"])
        #expect(document.status == 0)
        #expect(document.mark == nil)
        let reading = ViewDocument.read(document.bytes)
        #expect(reading.problems.isEmpty, "\(reading.problems) in \(document.bytes.text)")
        // A NULL axis is left out, and reads as vertical.
        #expect(document.bytes.text.hasPrefix(#"{"type":"stack","spacing":2,"children":["#))
        let control = "line one\nline two\ttab\u{01} ctl\u{00}after nul"
        #expect(reading.element == .stack(ViewStack(axis: .vertical, spacing: 2, children: [
            .text("Title \"quoted\" \\ back", role: .title, emphasis: .strong),
            .text(TextHygiene.block(control), role: .code, emphasis: .italic, maxLines: 3),
            .text("plain"),
            .link("Docs", url: "https://example.com/docs?a=1&b=2"),
            .image(url: "https://example.com/a.png", width: 640, height: 480, alt: "A picture"),
            .image(url: "https://example.com/b.png", alt: ""),
            .stack(ViewStack(axis: .horizontal, spacing: 1, children: [.badge("New", tone: .info), .badge("Plain"), .divider])),
            .facts([ViewFact("Score", "4/5"), ViewFact("By", "Ana \"A\" \\o/")]),
            .progress("Yes", fraction: 0.3333, detail: "1 vote"),
            .progress("None", fraction: 0),
            .progress("All", fraction: 1),
            .progress("Almost", fraction: 1),
            .button("Vote", action: "poll.vote", arguments: #"[2,"yes"]"#),
            .button("Open", action: "open"),
            .badge("Raw", tone: .success),
        ])))
        // The escapes are exact: the text as JSON gives back every byte, the NUL included, before the host cleans it.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(document.bytes)) as? [String: Any])
        let texts = (json["children"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        #expect(texts.prefix(2) == ["Title \"quoted\" \\ back", control])

        let single = try #require(written["single-text"])
        #expect(single.status == 0 && single.bytes.text == #"{"type":"text","text":"Alone"}"#)
        // An element of a newer kind, written raw with its fallback: the fallback is taken, and that is no violation.
        let newer = try #require(written["newer-kind"])
        #expect(newer.status == 0)
        let newerReading = ViewDocument.read(newer.bytes)
        #expect(newerReading.element == .text("A map"))
        #expect(newerReading.violations.isEmpty && newerReading.problems.count == 1)
    }

    @Test(arguments: [
        ("unclosed-stack", "a stack or fact list was left open"),
        ("two-roots", "the view has several top-level elements; put them in a stack"),
        ("fact-outside-facts", "missive_view_fact outside a fact list"),
        ("element-in-facts", "an element was written inside a fact list; only facts go there"),
        ("facts-end-closing-a-stack", "missive_view_facts_end without an open fact list"),
        ("raw-null", "missive_view_raw without an element"),
        ("nothing", "the view has no element"),
    ])
    func misusingTheHelpersFailsWithAReason(scenario: String, reason: String) async throws {
        let written = try #require(try await Self.runHelperProgram()[scenario])
        #expect(written.status == 3, "MISSIVE_FAILED")
        #expect(written.mark != nil, "the reason mark")
        #expect(written.reason == reason)
    }

    /// A C program that writes views with every `missive_view_*` helper into a sink that collects the bytes and
    /// notes the reason mark, and prints, for each scenario, its name, the status, the mark (-1 for none) and the
    /// bytes in hexadecimal, separated by tabs.
    static let helperProgram = #"""
        #include <stdio.h>
        #include <string.h>

        #include "missive_plugin.h"

        typedef struct collected {
            uint8_t bytes[16384];
            size_t length;
            long mark;
        } collected;

        static void collect(void *context, const uint8_t *bytes, size_t length) {
            collected *c = (collected *)context;
            if (bytes == NULL) {
                if (length == 0) c->mark = (long)c->length;
                return;
            }
            if (length > sizeof c->bytes - c->length) length = sizeof c->bytes - c->length;
            memcpy(c->bytes + c->length, bytes, length);
            c->length += length;
        }

        static int32_t every_helper(const missive_sink *out) {
            static const char control[] = "line one\nline two\ttab\x01 ctl\0after nul";
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_stack_begin(&w, NULL, 2);
            missive_view_text(&w, "Title \"quoted\" \\ back", "title", "strong", 0);
            missive_view_text_n(&w, control, sizeof control - 1, "code", "italic", 3);
            missive_view_text(&w, "plain", NULL, NULL, 0);
            missive_view_link(&w, "Docs", "https://example.com/docs?a=1&b=2");
            missive_view_image(&w, "https://example.com/a.png", 640, 480, "A picture");
            missive_view_image(&w, "https://example.com/b.png", -1, -1, NULL);
            missive_view_stack_begin(&w, "horizontal", 1);
            missive_view_badge(&w, "New", "info");
            missive_view_badge(&w, "Plain", NULL);
            missive_view_divider(&w);
            missive_view_stack_end(&w);
            missive_view_facts_begin(&w);
            missive_view_fact(&w, "Score", "4/5");
            missive_view_fact(&w, "By", "Ana \"A\" \\o/");
            missive_view_facts_end(&w);
            missive_view_progress(&w, "Yes", 1, 3, "1 vote");
            missive_view_progress(&w, "None", 0, 0, NULL);
            missive_view_progress(&w, "All", 5, 3, NULL);
            missive_view_progress(&w, "Almost", 99999, 100000, NULL);
            missive_view_button(&w, "Vote", "poll.vote", "[2,\"yes\"]");
            missive_view_button(&w, "Open", "open", NULL);
            missive_view_raw(&w, "{\"type\":\"badge\",\"text\":\"Raw\",\"tone\":\"success\"}");
            missive_view_stack_end(&w);
            return missive_view_end(&w);
        }

        static int32_t single_text(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_text(&w, "Alone", NULL, NULL, 0);
            return missive_view_end(&w);
        }

        static int32_t newer_kind(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_raw(&w, "{\"type\":\"map\",\"zoom\":3,\"fallback\":{\"type\":\"text\",\"text\":\"A map\"}}");
            return missive_view_end(&w);
        }

        static int32_t unclosed_stack(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_stack_begin(&w, "vertical", 0);
            missive_view_text(&w, "open", NULL, NULL, 0);
            return missive_view_end(&w);
        }

        static int32_t two_roots(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_text(&w, "one", NULL, NULL, 0);
            missive_view_text(&w, "two", NULL, NULL, 0);
            return missive_view_end(&w);
        }

        static int32_t fact_outside_facts(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_stack_begin(&w, "vertical", 0);
            missive_view_fact(&w, "Label", "value");
            missive_view_stack_end(&w);
            return missive_view_end(&w);
        }

        static int32_t element_in_facts(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_facts_begin(&w);
            missive_view_text(&w, "not a fact", NULL, NULL, 0);
            missive_view_facts_end(&w);
            return missive_view_end(&w);
        }

        static int32_t facts_end_closing_a_stack(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_stack_begin(&w, "vertical", 0);
            missive_view_divider(&w);
            missive_view_facts_end(&w);
            return missive_view_end(&w);
        }

        static int32_t raw_null(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            missive_view_stack_begin(&w, "vertical", 0);
            missive_view_raw(&w, NULL);
            missive_view_divider(&w);
            missive_view_stack_end(&w);
            return missive_view_end(&w);
        }

        static int32_t nothing(const missive_sink *out) {
            missive_view_writer w;
            missive_view_begin(&w, out);
            return missive_view_end(&w);
        }

        static const struct {
            const char *name;
            int32_t (*write)(const missive_sink *out);
        } scenarios[] = {
            {"every-helper", every_helper},
            {"single-text", single_text},
            {"newer-kind", newer_kind},
            {"unclosed-stack", unclosed_stack},
            {"two-roots", two_roots},
            {"fact-outside-facts", fact_outside_facts},
            {"element-in-facts", element_in_facts},
            {"facts-end-closing-a-stack", facts_end_closing_a_stack},
            {"raw-null", raw_null},
            {"nothing", nothing},
        };

        int main(void) {
            static collected c;
            for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
                missive_sink sink = {&c, collect};
                int32_t status;
                c.length = 0;
                c.mark = -1;
                status = scenarios[i].write(&sink);
                printf("%s\t%d\t%ld\t", scenarios[i].name, (int)status, c.mark);
                for (size_t j = 0; j < c.length; j++) printf("%02x", c.bytes[j]);
                printf("\n");
            }
            return 0;
        }
        """#
}

/// The repairs of a view's text that `view.valid` reports: what the host's cleaning changes, and nothing else.
@Suite struct ViewTextRepairTests {
    @Test func everyStringTheCleaningChangesIsReportedWithWhatItDoes() {
        let document = Array(#"""
            {"type":"stack","children":[
              {"type":"text","text":"two\nlines\r\nand\u2028more"},
              {"type":"text","text":"\u001b[1mbold\u001b[0m\u0007"},
              {"type":"badge","text":"one\nline"},
              {"type":"facts","facts":[{"label":"\u202egnp.exe","value":"fine"}]},
              {"type":"button","title":"Go\u0000","action":"go","arguments":"[\"\\u0001\"]"}]}
            """#.utf8)
        let repairs = ViewTextRepairs.find(in: document).map(\.description)
        #expect(repairs.count == 4, "\(repairs)")
        // Line breaks in a text element are kept: no repair.
        #expect(!repairs.contains { $0.hasPrefix("root.children[0]") })
        #expect(repairs.contains { $0.hasPrefix("root.children[1].text: escape sequences removed, control characters made spaces: ") })
        #expect(repairs.contains { $0.hasPrefix("root.children[2].text: line breaks made spaces (the string is one line)") })
        #expect(repairs.contains { $0.hasPrefix("root.children[3].facts[0].label: bidi controls removed") })
        // A title is shown; a button's arguments are not, and are not text.
        #expect(repairs.contains { $0.hasPrefix("root.children[4].title: control characters made spaces") })
        #expect(ViewTextRepairs.find(in: Array(#"{"type":"text","text":"Plain text, é and 👍"}"#.utf8)).isEmpty)
    }
}
