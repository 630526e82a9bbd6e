import Dispatch
import Foundation
import Missive
import MissiveTestSupport
import Testing

/// `PluginLoading.lazy`: types come from metadata at startup, and a plugin is loaded on first use.
@Suite struct LazyLoadingTests {
    @Test func nothingIsLoadedUntilATypeFirstDecodes() throws {
        let directory = try Fixtures.stage(["CRating"], renamed: ["CRating": "libLazyRating.so"])
        let path = directory + "/libLazyRating.so"
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), loading: .lazy)
        #expect(result.rejections.isEmpty)
        #expect(result.plugins.isEmpty)
        #expect(result.deferredPlugins.map(\.name) == ["CRating"])
        #expect(result.registry.type(businessID: "evaluation")?.objectName == "demo:rating")
        #expect(try !Fixtures.mappedFiles().contains(path), "discovery must not load the plugin")

        let message = result.registry.decode(Fixtures.envelope("demo:rating", #"{"score":4,"comment":"lazy"}"#))
        #expect(message.isKnown)
        #expect(message.digest == "[Rating] ★★★★☆ lazy")
        #expect(try Fixtures.mappedFiles().contains(path))
    }

    @Test func aPluginThatFailsToLoadLaterLosesNothing() throws {
        let directory = try Fixtures.stage(["BrokenMetadataMismatch"])
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), loading: .lazy)
        #expect(result.rejections.isEmpty, "the metadata alone looks fine")
        let content = #"{"fixture":true}"#
        let message = result.registry.decode(Fixtures.envelope("fixture:declared", content))
        let unknown = try #require(message.unknown)
        // The content was never looked at: the message waits for the plugin, it is not a refusal of what was sent.
        guard case .pluginUnavailable(let reason) = unknown.reason else {
            Issue.record("expected pluginUnavailable, got \(unknown.reason)")
            return
        }
        #expect(reason.contains("the plugin failed to load"))
        #expect(reason.contains("metadata disagrees with the runtime descriptor"))
        #expect(try message.reencoded().content.text == content)
    }

    @Test func manyThreadsRacingToTheFirstUseAllGetTheSameAnswer() throws {
        let directory = try Fixtures.stage(["DemoMessages"], renamed: ["DemoMessages": "libLazyMessages.so"])
        let registry = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), loading: .lazy).registry
        let envelope = Fixtures.envelope("demo:poll", #"{"question":"Race?","options":["a","b"]}"#)
        let digests = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let digest = registry.decode(envelope).digest
            digests.withLock { $0.append(digest) }
        }
        #expect(digests.withLock { $0 } == Array(repeating: "[Poll] Race?", count: 8))
    }
}
