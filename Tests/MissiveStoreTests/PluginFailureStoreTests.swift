import Foundation
import Missive
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// The messages isolated plugins failed on, kept in the store (`plugin_failure`), on both backends: a failure outlives
/// the registry that met it, and every process on the store sees it.
@Suite struct PluginFailureStoreTests {
    static func failure(
        plugin: String, content: String, operation: PluginFailure.Operation = .decode, reason: String = "its worker hung", at seconds: Double
    ) -> PluginFailure {
        PluginFailure(
            key: PluginFailure.Key(pluginSHA256: plugin, objectName: "fixture:moody", contentSHA256: content, operation: operation), reason: reason,
            file: "/plugins/libMoody.so", date: Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: StoreBackend.allCases)
    func failuresAreRecordedReadReplacedAndForgotten(backend: StoreBackend) async throws {
        let store = try await backend.newSharedStore()
        #expect(try await store.pluginFailures().isEmpty)
        let a = Self.failure(plugin: "aa", content: "c1", at: 1_700_000_000.5)
        let b = Self.failure(plugin: "bb", content: "c1", operation: .view, at: 1_700_000_001)
        let c = Self.failure(plugin: "aa", content: "c2", operation: .action("vote"), reason: "the seccomp filter stopped it", at: 1_700_000_002)
        try await store.recordPluginFailures([a, b, c])
        #expect(try await store.pluginFailures() == [a, b, c])
        // The same key again: replaced, not added.
        var later = a
        later.reason = "its worker crashed with SIGSEGV (signal 11)"
        later.date = Date(timeIntervalSince1970: 1_700_000_003)
        try await store.recordPluginFailures([later])
        #expect(try await store.pluginFailures() == [b, c, later])
        #expect(try await store.forgetPluginFailures(pluginSHA256s: ["aa"]) == 2)
        #expect(try await store.pluginFailures() == [b])
        #expect(try await store.forgetPluginFailures(pluginSHA256s: nil) == 1)
        #expect(try await store.pluginFailures().isEmpty)
    }

    /// A registry that runs BrokenMisbehavesOnMessage isolated, in `folder` (staged when `nil`), with a crash limit of
    /// `crashLimit`.
    static func isolated(folder: String? = nil, crashLimit: Int) throws -> (registry: MessageRegistry, folder: String) {
        var protection = PluginProtection()
        protection.isolation = PluginIsolation(
            policy: .isolated, workerCommand: [Fixtures.buildDirectory + "/" + PluginIsolation.workerExecutableName], callCPUSeconds: 0.5,
            callWallSeconds: 2, crashLimit: crashLimit)
        let folder = try folder ?? Fixtures.stage(["BrokenMisbehavesOnMessage"])
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), protection: protection)
        #expect(result.rejections.isEmpty, "\(result.rejections)")
        return (result.registry, folder)
    }

    static func moody(_ id: String, _ word: String) -> Envelope {
        Envelope(
            id: id, conversationID: "team", senderID: "bob", sentAt: 1_700_000_000_000, objectName: "fixture:moody",
            content: Array("{\"fixture\":true,\"say\":\"\(word)\"}".utf8))
    }

    @Test(arguments: StoreBackend.allCases)
    func aFailureSurvivesANewRegistryOnTheSameStore(backend: StoreBackend) async throws {
        let location = try await backend.newLocation()
        let store = try await backend.open(location, kind: .shared)
        let (first, folder) = try await Fixtures.blocking { try Self.isolated(crashLimit: 5) }
        try await store.loadPluginFailures(into: first)
        let crasher = Self.moody("m1", "crash")
        let decoded = try await Fixtures.blocking { first.decode([crasher]) }
        let report = try await store.ingest(decoded.map { IncomingMessage($0) })
        #expect(report.outcomes == [.stored])
        #expect(try await store.savePluginFailures(of: first) == 1)
        #expect(try await store.savePluginFailures(of: first) == 0, "saved once")
        // A restart: a new registry (a new memory, new workers) and the store opened again. A crash limit of 1: had the
        // worker been called, the plugin would be out of service after it.
        let reopened = try await backend.open(location, kind: .shared)
        let (second, _) = try await Fixtures.blocking { try Self.isolated(folder: folder, crashLimit: 1) }
        try await reopened.loadPluginFailures(into: second)
        let again = try await Fixtures.blocking { second.decode(Self.moody("m2", "crash")) }
        guard case .pluginCrashed(let reason)? = again.unknown?.reason else {
            Issue.record("\(String(describing: again.unknown?.reason))")
            return
        }
        #expect(reason.hasPrefix(PluginFailure.rememberedPhrase) && reason.contains("SIGSEGV"), "\(reason)")
        // Re-decoding the stored message through the new registry answers from the memory as well.
        let redecoded = try await reopened.redecode(with: second)
        #expect(redecoded.stillUnknownCount == 1)
        #expect(try await reopened.message(id: "m1")?.reason?.contains(PluginFailure.rememberedPhrase) == true)
        #expect(try await Fixtures.blocking { second.decode(Self.moody("m3", "fine")).isKnown }, "the plugin is still in service")
    }
}
