import Foundation
import Missive
import Testing

/// The metadata cache answers for unchanged files only, survives a bad cache file, and never vouches for a
/// plugin whose descriptor disagrees.
@Suite struct MetadataCacheTests {
    @Test func aSecondDiscoveryReadsTheCacheInsteadOfTheFiles() throws {
        let directory = try Fixtures.stage(["CRating", "DemoMedia"])
        let file = try Fixtures.temporaryDirectory() + "/cache"
        let first = PluginMetadataCache(file: file)
        let cold = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: first)
        #expect(first.statistics.hits == 0 && first.statistics.misses == 2)
        #expect(FileManager.default.fileExists(atPath: file))

        let second = PluginMetadataCache(file: file)
        let warm = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: second)
        #expect(second.statistics.hits == 2 && second.statistics.misses == 0)
        #expect(warm.registry.types.map(\.objectName) == cold.registry.types.map(\.objectName))
        #expect(warm.rejections.isEmpty)
    }

    @Test func aChangedFileIsReadAgain() throws {
        let directory = try Fixtures.stage(["CRating"])
        let file = try Fixtures.temporaryDirectory() + "/cache"
        _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: PluginMetadataCache(file: file))
        // Same content, new modification time: a new version of the file as far as the cache knows.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: directory + "/libCRating.so")
        let cache = PluginMetadataCache(file: file)
        _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache)
        #expect(cache.statistics.hits == 0 && cache.statistics.misses == 1)
    }

    @Test func aMalformedCacheFileIsIgnoredAndRewritten() throws {
        let directory = try Fixtures.stage(["CRating"])
        let file = try Fixtures.temporaryDirectory() + "/cache"
        try "missive-plugin-metadata-cache\t1\nP\tnot enough fields\n".write(toFile: file, atomically: true, encoding: .utf8)
        let cache = PluginMetadataCache(file: file)
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache)
        #expect(result.rejections.isEmpty)
        #expect(cache.statistics.misses == 1)
        let again = PluginMetadataCache(file: file)
        _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: again)
        #expect(again.statistics.hits == 1)
    }

    @Test func aTamperedCacheCannotMakeAPluginLoadUnderFalseMetadata() throws {
        let directory = try Fixtures.stage(["CRating"])
        let file = try Fixtures.temporaryDirectory() + "/cache"
        _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: PluginMetadataCache(file: file))
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try text.replacingOccurrences(of: "demo:rating", with: "evil:rating").write(toFile: file, atomically: true, encoding: .utf8)

        let cache = PluginMetadataCache(file: file)
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache)
        #expect(cache.statistics.hits == 1)
        #expect(result.rejections.first?.code == .metadataMismatch)
        #expect(result.registry.type(objectName: "evil:rating") == nil)
    }

    @Test func theStandardCacheFollowsTheEnvironment() {
        #expect(PluginMetadataCache.standard(environment: ["MISSIVE_METADATA_CACHE": "off", "HOME": "/h"]) == nil)
        #expect(PluginMetadataCache.standard(environment: ["MISSIVE_METADATA_CACHE": "/x/c"])?.file == "/x/c")
        #expect(PluginMetadataCache.standard(environment: ["XDG_CACHE_HOME": "/xdg", "HOME": "/h"])?.file == "/xdg/missive/plugin-metadata-v1")
        #expect(PluginMetadataCache.standard(environment: ["HOME": "/h"])?.file == "/h/.cache/missive/plugin-metadata-v1")
    }
}
