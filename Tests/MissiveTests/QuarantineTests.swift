import Foundation
import Missive
import MissiveTestSupport
import Testing

/// A host survives plugins that crash: the scanner tries new files in a child process and blacklists those
/// that crash or hang there, and a plugin that crashes the host itself is quarantined at the next start.
/// Every test uses real crashing plugins from the fixture package.
@Suite struct QuarantineTests {
    /// An environment of one's own: a metadata cache (which keeps the scanner's verdicts) and a crash journal.
    struct Host {
        let folder: String
        let cache: String
        let journal: String

        init() throws {
            folder = try Fixtures.temporaryDirectory()
            cache = folder + "/cache"
            journal = folder + "/crashes"
        }

        var environment: [String: String] { ["MISSIVE_METADATA_CACHE": cache, "MISSIVE_QUARANTINE": journal] }

        func missive(_ arguments: String..., input: String? = nil, extra: [String: String] = [:]) async throws -> Fixtures.Run {
            try await Fixtures.missive(arguments, input: input, environment: environment.merging(extra) { _, new in new })
        }
    }

    static func object(_ text: some StringProtocol) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// The refusals of a `list --format json` run, by file name.
    static func rejections(_ run: Fixtures.Run) throws -> [String: [String: Any]] {
        let rejected = try #require(try object(run.stdout)["rejected"] as? [[String: Any]])
        return Dictionary(rejected.map { (URL(fileURLWithPath: $0["file"] as? String ?? "").lastPathComponent, $0) }) { first, _ in first }
    }

    /// The messages of a `decode --format json` run: one JSON object per line.
    static func messages(_ run: Fixtures.Run) throws -> [[String: Any]] {
        try run.stdout.split(separator: "\n").map { try object($0) }
    }

    static func envelope(_ objectName: String, id: String, content: String) -> String {
        #"{"objectName":"\#(objectName)","id":"\#(id)","conversationID":"c1","senderID":"bob","sentAt":1700000000000,"content":\#(content)}"#
    }

    @Test func pluginsThatCrashWhileLoadingAreBlacklistedByTheScannerAndTheHostKeepsGoing() async throws {
        let host = try Host()
        let plugins = try Fixtures.stage(["BrokenCrashInEntry", "BrokenAbortInInitializer", "DemoMessages"])
        let first = try await host.missive("list", "--plugin-path", plugins, "--format", "json")
        #expect(first.status == 0, "\(first.stderr)")
        let rejected = try Self.rejections(first)
        let entry = try #require(rejected["libBrokenCrashInEntry.so"])
        #expect(entry["code"] as? String == "quarantined")
        #expect((entry["reason"] as? String)?.contains("\(SanitizerRun.segfaultInScan) during entry") == true, "\(entry)")
        #expect((entry["reason"] as? String)?.contains(SanitizerRun.segfaultSummary) == true, "\(entry)")
        let initializer = try #require(rejected["libBrokenAbortInInitializer.so"])
        #expect((initializer["reason"] as? String)?.contains("SIGABRT (signal 6) during load") == true, "\(initializer)")
        let types = try #require(try Self.object(first.stdout)["types"] as? [[String: Any]]).compactMap { $0["objectName"] as? String }
        #expect(types.contains("demo:poll"))

        // The second start reports the same from the cache, without scanning again.
        let second = try await host.missive("list", "--plugin-path", plugins, "--format", "json", "-v")
        #expect(second.status == 0)
        #expect(try Self.rejections(second)["libBrokenCrashInEntry.so"]?["code"] as? String == "quarantined")
        #expect(!second.stderr.contains("scanning new or changed plugin files"), "\(second.stderr)")

        // Its messages decode, losslessly, as unknown with the reason.
        let line = Self.envelope("fixture:entry-crash", id: "m1", content: #"{"fixture":"x","extra":[1,2]}"#)
        let decoded = try await host.missive("decode", "-", "--plugin-path", plugins, "--format", "json", input: line + "\n")
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let message = try #require(try Self.messages(decoded).first)
        #expect(message["known"] as? Bool == false)
        #expect((message["reason"] as? String)?.contains("blacklisted by the plugin scanner") == true, "\(message)")
        #expect(decoded.stdout.contains(#""content":{"fixture":"x","extra":[1,2]}"#), "\(decoded.stdout)")
    }

    @Test func aBlacklistHoldsWhileTheContentIsTheSameAndEndsWhenItChanges() async throws {
        let host = try Host()
        let plugins = try Fixtures.stage(["BrokenCrashInEntry"], renamed: ["BrokenCrashInEntry": "libPlugin.so"])
        let file = plugins + "/libPlugin.so"
        await #expect(try Self.rejections(try host.missive("list", "--plugin-path", plugins, "--format", "json"))["libPlugin.so"] != nil)

        // Touching the file changes its identity but not its content: still blacklisted, and not scanned again.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: file)
        let touched = try await host.missive("list", "--plugin-path", plugins, "--format", "json", "-v")
        #expect(try Self.rejections(touched)["libPlugin.so"]?["code"] as? String == "quarantined")
        #expect(!touched.stderr.contains("scanning new or changed plugin files"), "\(touched.stderr)")

        // A new build under the same name is scanned and loads.
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.copyItem(atPath: Fixtures.library("CRating"), toPath: file)
        let rebuilt = try await host.missive("list", "--plugin-path", plugins, "--format", "json", "-v")
        #expect(try Self.rejections(rebuilt)["libPlugin.so"] == nil, "\(rebuilt.stdout)")
        #expect(rebuilt.stderr.contains("scanning new or changed plugin files"))
    }

    @Test func aPluginThatHangsInItsScanIsBlacklistedAfterTheTimeout() async throws {
        let host = try Host()
        let plugins = try Fixtures.stage(["BrokenHangInDecode"])
        // 3 s: on a busy machine a shorter limit may end the scan while the plugin still loads, before its hang.
        let run = try await host.missive("list", "--plugin-path", plugins, "--format", "json", extra: ["MISSIVE_SCAN_TIMEOUT": "3"])
        #expect(run.status == 0)
        let reason = try #require(try Self.rejections(run)["libBrokenHangInDecode.so"]?["reason"] as? String)
        #expect(reason.contains("hung during decode of fixture:hang example 0"), "\(reason)")

        // The same timeout does not scan again; a longer one does, since a busy machine may have been the cause.
        let same = try await host.missive("list", "--plugin-path", plugins, "-v", extra: ["MISSIVE_SCAN_TIMEOUT": "3"])
        #expect(!same.stderr.contains("scanning new or changed plugin files"), "\(same.stderr)")
        let longer = try await host.missive("list", "--plugin-path", plugins, "--format", "json", "-v", extra: ["MISSIVE_SCAN_TIMEOUT": "5"])
        #expect(longer.stderr.contains("scanning new or changed plugin files"), "\(longer.stderr)")
        let again = try #require(try Self.rejections(longer)["libBrokenHangInDecode.so"]?["reason"] as? String)
        #expect(again.contains("the scan did not finish in 5 s"), "\(again)")
    }

    @Test func aPluginThatCrashesTheHostInADecodeIsQuarantinedAtTheNextStartUntilCleared() async throws {
        let host = try Host()
        let plugins = try Fixtures.stage(["BrokenAbortOnMessage", "DemoMessages"])
        let lines = [
            Self.envelope("fixture:boom", id: "m1", content: #"{"fixture":true}"#),
            Self.envelope("fixture:boom", id: "m2", content: #"{"fixture":"boom"}"#),
        ].joined(separator: "\n") + "\n"

        // Its examples pass the scan; the second message brings the host down, as in-process plugins do.
        let crashed = try await host.missive("decode", "-", "--plugin-path", plugins, input: lines)
        #expect(crashed.status != 0)
        #expect(crashed.stderr.contains("unexpected boom"))

        // The next start reports the plugin and decodes its messages as unknown, keeping them whole.
        let second = try await host.missive("decode", "-", "--plugin-path", plugins, "--format", "json", input: lines)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("quarantined: it crashed a host with SIGABRT (signal 6) during decode of fixture:boom"), "\(second.stderr)")
        let messages = try Self.messages(second)
        #expect(messages.count == 2)
        for message in messages {
            #expect(message["known"] as? Bool == false)
            #expect((message["reason"] as? String)?.contains("quarantined") == true)
        }

        let list = try await host.missive("quarantine", "list", "--format", "json")
        let crashes = try #require(try Self.object(list.stdout)["crashes"] as? [[String: Any]])
        #expect(crashes.count == 1)
        #expect(crashes.first?["file"] as? String == plugins + "/libBrokenAbortOnMessage.so")
        #expect(crashes.first?["operation"] as? String == "decode" && crashes.first?["objectName"] as? String == "fixture:boom")
        #expect(crashes.first?["signal"] as? Int == 6 && crashes.first?["quarantined"] as? Bool == true)

        // Clearing it lets it load again (and crash again on the same message).
        let cleared = try await host.missive("quarantine", "clear", plugins + "/libBrokenAbortOnMessage.so")
        #expect(cleared.status == 0 && cleared.stdout.contains("libBrokenAbortOnMessage.so"), "\(cleared.stdout)")
        await #expect(try host.missive("quarantine", "list").stdout.contains("No plugin is quarantined"))
        let fine = try await host.missive("decode", "-", "--plugin-path", plugins, "--format", "json", input: lines.split(separator: "\n")[0] + "\n")
        #expect(fine.status == 0)
        #expect(try Self.messages(fine).first?["known"] as? Bool == true, "\(fine.stdout)")
    }

    @Test(arguments: [("BrokenCrashInEntry", "SIGSEGV (signal 11) during entry"), ("BrokenAbortInInitializer", "SIGABRT (signal 6) during load")])
    func withoutTheScannerACrashWhileLoadingIsRecordedAndQuarantinedAtTheNextStart(product: String, recorded: String) async throws {
        let host = try Host()
        let plugins = try Fixtures.stage([product, "CRating"])
        let noScanner = ["MISSIVE_PLUGIN_SCANNER": "off"]
        let first = try await host.missive("list", "--plugin-path", plugins, extra: noScanner)
        #expect(first.status != 0, "the plugin was meant to crash the host")

        let second = try await host.missive("list", "--plugin-path", plugins, "--format", "json", extra: noScanner)
        #expect(second.status == 0, "\(second.stderr)")
        let reason = try #require(try Self.rejections(second)["lib\(product).so"]?["reason"] as? String)
        #expect(reason.contains("quarantined: it crashed a host with \(recorded)"), "\(reason)")
        let types = try #require(try Self.object(second.stdout)["types"] as? [[String: Any]]).compactMap { $0["objectName"] as? String }
        #expect(types.contains("demo:rating"))
    }

    @Test func aHostOnTheLibrarySurvivesACrashingEntryThroughTheScannerExecutable() throws {
        let folder = try Fixtures.temporaryDirectory()
        let plugins = try Fixtures.stage(["BrokenCrashInEntry", "CRating"])
        let protection = PluginProtection(scanner: PluginScanner(command: [Fixtures.buildDirectory + "/" + PluginScanner.executableName], timeout: 10))
        let cache = PluginMetadataCache(file: folder + "/cache")
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(plugins), metadataCache: cache, protection: protection)
        let refusal = try #require(result.rejections.first { $0.file == plugins + "/libBrokenCrashInEntry.so" })
        #expect(refusal.code == .quarantined)
        #expect(refusal.message.contains(SanitizerRun.segfaultSummary), "\(refusal.message)")
        #expect(result.registry.type(objectName: "demo:rating") != nil)
        #expect(cache.blacklisted().map(\.path) == [plugins + "/libBrokenCrashInEntry.so"])
        // The type stays registered, so its messages say why they are not decoded.
        let message = try result.registry.decode(line: Array(Self.envelope("fixture:entry-crash", id: "m1", content: #"{"fixture":"x"}"#).utf8))
        let unknown = try #require(message.content as? UnknownMessage)
        #expect(unknown.reason.description.contains("blacklisted by the plugin scanner"))
    }
}
