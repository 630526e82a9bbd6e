import Foundation
import Missive
@testable import MissiveConformance
import MissiveTestSupport
import Testing

/// What missive_plugin.h promises, tried on real plugins: 1.0 plugins keep loading, newer minors are refused
/// before loading, failures come with reasons and defined fallbacks, and the metadata macros refuse what
/// would break the metadata.
@Suite struct ABIContractTests {
    @Test func theCSampleAsReleasedForABI10StillLoadsAndDecodes() async throws {
        let path = try Fixtures.fixtureLibrary("Legacy10")
        let plugin = try PluginLoader.load(path)
        #expect(plugin.info.abiVersion == "1.0")
        #expect(plugin.metadata.abiMinor == 0)
        var builder = MessageRegistry.Builder()
        #expect(builder.register(plugin).isEmpty)
        let registry = builder.build()
        let content = #"{"businessID":"evaluation","score":3,"comment":"fine","newer":1}"#
        let message = registry.decode(Fixtures.envelope("MS:Custom", content))
        #expect(message.content.objectName == "demo:rating")
        #expect(message.digest == "[Rating] ★★★☆☆ fine")
        #expect(try message.reencoded().content.text == content)
        // The checker holds it to the same rules as a 1.1 plugin.
        let run = try await Fixtures.missive("check", "--format", "json", path)
        #expect(run.status == 0, "\(run.stdout)")
    }

    @Test func theTextExtensionAnswersWhatTheSeparateFunctionsAnswerAndAPluginWithoutItIsAskedThemOnce() throws {
        let content = #"{"businessID":"evaluation","score":3,"comment":"fine day","newer":1}"#
        for (path, offersTexts) in [(Fixtures.library("CRating"), true), (try Fixtures.fixtureLibrary("Legacy10"), false)] {
            var builder = MessageRegistry.Builder()
            #expect(builder.register(try PluginLoader.load(path)).isEmpty)
            let message = builder.build().decode(Fixtures.envelope("MS:Custom", content))
            let plugin = try #require(message.content as? PluginContent)
            #expect((plugin.rawTexts() != nil) == offersTexts, "\(path)")
            if let texts = plugin.rawTexts() {
                #expect(texts.status == 0 && texts.push == nil)
                #expect(texts.digest?.bytes == plugin.rawDigest().bytes)
                #expect(texts.words?.pieces == plugin.rawSearchableWords()?.pieces)
            }
            // Asked twice, from the kept answer: the same each time, and the same as the separate functions.
            for _ in 0..<2 {
                #expect(message.digest == "[Rating] ★★★☆☆ fine day")
                #expect(message.content.searchableWords == ["fine day"])
                #expect(message.content.pushContent == message.digest)
                #expect(try plugin.checkedSearchableWords() == plugin.rawSearchableWords()?.pieces)
                #expect(try plugin.checkedDigest() == plugin.rawDigest().bytes)
            }
        }
    }

    @Test func aPluginOfANewerMinorIsRefusedBeforeItIsLoaded() throws {
        let path = try Fixtures.fixtureLibrary("BrokenFutureMinor")
        let error = #expect(throws: MissiveError.self) { try PluginLoader.load(path) }
        #expect(error?.code == .unsupportedABI)
        #expect(error?.message == "built for Missive plugin ABI 1.999; this host supports ABI 1.0 to 1.1")
    }

    @Test func failuresComeWithTheirReasonsAndTheDefinedFallbacks() throws {
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(["BrokenFailsWithReasons"])))
        #expect(result.rejections.isEmpty, "\(result.rejections)")
        let message = result.registry.decode(Fixtures.envelope("fixture:failing", #"{"fixture":true}"#))
        let content = try #require(message.content as? PluginContent)
        // The digest falls back to [objectName]; the reason is there for whoever asks.
        #expect(message.digest == "[fixture:failing]")
        let digestError = #expect(throws: MissiveError.self) { try content.checkedDigest() }
        #expect(digestError?.message == "digest failed with status 3 (MISSIVE_FAILED): no digest today")
        // A push function that returns a status no ABI defines counts as failed: the digest is pushed.
        #expect(content.pushContent == "[fixture:failing]")
        #expect(throws: MissiveError.self) { try content.checkedPushContent() }
        // Words: none, and the output written before the mark is not taken for a word.
        #expect(content.searchableWords.isEmpty)
        let wordsError = #expect(throws: MissiveError.self) { try content.checkedSearchableWords() }
        #expect(wordsError?.message.hasSuffix(": the index is offline") == true)
        // Sending it again needs no encode; new content from the type fails with the reason.
        #expect(try message.reencoded().content.text == #"{"fixture":true}"#)
        let encodeError = #expect(throws: MissiveError.self) { try content.typeEncodedContent() }
        #expect(encodeError?.message == "encode failed with status 3 (MISSIVE_FAILED): the encoder's buffer is exhausted")
        #expect(encodeError?.code == .pluginFailure)
    }

    @Test func textThatBreaksTheOneLineRulesIsRepaired() throws {
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(["BrokenDigestNewline"])))
        let message = result.registry.decode(Fixtures.envelope("fixture:newline", #"{"fixture":true}"#))
        let raw = try #require(message.content as? PluginContent).checkedDigest()
        #expect(raw.contains(0x0A))
        #expect(!message.digest.contains("\n"))
        #expect(!message.digest.isEmpty)
    }

    @Test func aDecoderThatRefusesUnknownMembersFailsTheCheck() async throws {
        let run = try await Fixtures.missive("check", "--format", "json", try Fixtures.fixtureLibrary("BrokenRefusesUnknownMembers"))
        #expect(run.status == 1)
        let report = try ConformanceTests.Report(run.stdout)
        #expect(report.outcome("libBrokenRefusesUnknownMembers.so", "content.unknown-members") == "failed")
        let detail = report.results["libBrokenRefusesUnknownMembers.so"]?["content.unknown-members"]?["detail"] as? String ?? ""
        #expect(detail.contains("+ 'businessID': refused"), "\(detail)")
        #expect(detail.contains("a decoder must ignore members it does not know"), "\(detail)")
        #expect(report.outcome("libBrokenRefusesUnknownMembers.so", "roundtrip.examples") == "passed")
    }

    @Test(arguments: [#""Acme \"Labs\"""#, #""Acme\\Labs""#, #""Acme\nLabs""#, #""Acme\0Labs""#, #""""#])
    func theMetadataMacrosRefuseTextThatWouldBreakTheJSON(vendor: String) async throws {
        let folder = try Fixtures.temporaryDirectory()
        let source = """
            #include "missive_plugin.h"
            MISSIVE_METADATA_PLUGIN("Quoted", "1.0.0", \(vendor));
            """
        try source.write(toFile: folder + "/quoted.c", atomically: true, encoding: .utf8)
        let include = Fixtures.repositoryRoot + "/Sources/CMissivePlugin/include"
        let run = try await Fixtures.run("/bin/sh", ["-c", "cc -c -I '\(include)' quoted.c -o quoted.o"], directory: folder)
        #expect(run.status != 0)
        #expect(run.stderr.contains("must be a non-empty string literal without a quote, a backslash, a NUL or a control character"), "\(run.stderr)")
    }

    @Test func theEntryIsExportedUnderHiddenVisibilityAndTheLayoutHoldsInCPlusPlus() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let include = Fixtures.repositoryRoot + "/Sources/CMissivePlugin/include"
        // C++ compiles the header's layout assertions with static_assert, and the macros' checks too. The
        // toolchain's clang++ is there wherever Swift is.
        try """
            #include "missive_plugin.h"
            MISSIVE_METADATA_PLUGIN("Cxx", "1.0.0", "Ünïcödé Labs");
            extern "C" const missive_plugin *missive_plugin_entry_v1(const missive_host *host) { (void)host; return nullptr; }
            """.write(toFile: folder + "/entry.cc", atomically: true, encoding: .utf8)
        let run = try await Fixtures.run(
            "/bin/sh", ["-c", "clang++ -std=c++17 -Wall -Werror -shared -fPIC -fvisibility=hidden -I '\(include)' entry.cc -o libCxx.so && nm -D libCxx.so"],
            directory: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(" T missive_plugin_entry_v1"), "\(run.stdout)")
    }
}

/// The re-spellings `roundtrip.variations` feeds a plugin must stay valid JSON with the same meaning.
@Suite struct JSONVariationsTests {
    @Test(arguments: [
        #"{"text":"caf\u00e9","b":"\ud83d\ude00 \u0041","c":"\\u00"}"#,
        #"{"a":"\"quoted\" \\ back\/slash\n","B":["x",{"Y":"z"}]}"#,
    ])
    func lettersAreEscapedWithoutBreakingEscapesAlreadyThere(json: String) throws {
        let escaped = JSONVariations.escapingLetters(Array(json.utf8))
        let original = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary
        let respelled = try JSONSerialization.jsonObject(with: Data(escaped)) as? NSDictionary
        #expect(original != nil && original == respelled, "\(String(decoding: escaped, as: UTF8.self))")
        // The letters inside strings are escaped: no word of the original strings is left bare.
        for word in ["caf", "quoted", "back", "slash"] where json.contains(word) {
            #expect(!String(decoding: escaped, as: UTF8.self).contains(word), "\(word)")
        }
    }
}
