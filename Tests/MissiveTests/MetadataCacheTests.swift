import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import Missive
import MissiveTestSupport
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
        // Bytes changed in place break the checksum: the snapshot is ignored, and the plugin loads from its file.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        try Data(Self.replacing("demo:rating", with: "evil:rating", in: bytes)).write(to: URL(fileURLWithPath: file))
        let ignored = PluginMetadataCache(file: file)
        let clean = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: ignored)
        #expect(ignored.statistics.hits == 0 && ignored.statistics.misses == 1)
        #expect(clean.rejections.isEmpty)

        // A snapshot written whole with false metadata (its checksum right) is read, and the plugin still refused.
        let image = try #require(PluginSnapshot.Image(file: file))
        var record = try #require(image.record(0))
        record.metadata.types = record.metadata.types.map { type in
            var type = type
            type.objectName = type.objectName.replacingOccurrences(of: "demo:rating", with: "evil:rating")
            return type
        }
        #expect(FileBytes.replace(file, with: PluginSnapshot.encode([(PluginSnapshot.hash(record.path), .record(record))])))
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

    /// `bytes` with every occurrence of `old` replaced by `new` (of the same length).
    static func replacing(_ old: String, with new: String, in bytes: [UInt8]) -> [UInt8] {
        let old = Array(old.utf8), new = Array(new.utf8)
        var result = bytes
        var index = 0
        while index + old.count <= result.count {
            if result[index..<(index + old.count)].elementsEqual(old) {
                result.replaceSubrange(index..<(index + old.count), with: new)
                index += new.count
            } else {
                index += 1
            }
        }
        return result
    }
}

/// The snapshot a ``PluginMetadataCache`` keeps: a warm start gives the registry a cold one gives, a changed file
/// is read again, a bad snapshot is ignored and rebuilt, and hosts starting at once leave a whole one.
@Suite struct SnapshotTests {
    /// What a registry holds, in order, for comparing two starts.
    static func summary(_ result: DiscoveryResult) -> [String] {
        var lines: [String] = []
        for type in result.registry.types {
            let dispatch = "\(type.businessID ?? "-")|\(type.container ?? "-")"
            lines.append("\(type.objectName)|\(dispatch)|\(type.persistence)|\(type.isMedia)|\(type.origin)")
        }
        lines += result.registry.containers.map(\.description)
        for action in result.registry.registeredActions.map(\.info) {
            lines.append("\(action.kind) \(action.objectName) \(action.id) \(action.title)")
        }
        for rejection in result.rejections {
            lines.append("\(rejection.code) \(rejection.file ?? "-") \(rejection.objectName ?? "-") \(rejection.message)")
        }
        return lines
    }

    @Test(arguments: [PluginLoading.eager, .lazy])
    func aWarmStartGivesTheRegistryAColdStartGives(loading: PluginLoading) throws {
        let directory = try Fixtures.stage(["CRating", "DemoMessages", "DemoMedia", "MatrixBridge", "BrokenDuplicateNames"])
        let file = try Fixtures.temporaryDirectory() + "/cache"
        let cold = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), loading: loading)
        let filling = PluginMetadataCache(file: file)
        let first = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: filling, loading: loading)
        #expect(filling.statistics.misses == 5)
        let cache = PluginMetadataCache(file: file)
        let warm = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache, loading: loading)
        #expect(cache.statistics.hits == 5 && cache.statistics.misses == 0)
        #expect(Self.summary(warm) == Self.summary(cold))
        #expect(Self.summary(first) == Self.summary(cold))
        #expect(warm.plugins.map(\.metadata) == cold.plugins.map(\.metadata))
        #expect(warm.deferredPlugins == cold.deferredPlugins)
        let message = warm.registry.decode(Fixtures.envelope("demo:rating", #"{"score":4,"comment":"warm"}"#))
        #expect(message.isKnown && message.digest == "[Rating] ★★★★☆ warm")
    }

    @Test func aTouchedReplacedOrRewrittenFileIsReadAndValidatedAgain() throws {
        let directory = try Fixtures.stage(["CRating"])
        let plugin = directory + "/libCRating.so"
        let file = try Fixtures.temporaryDirectory() + "/cache"
        func start() -> (PluginMetadataCache, DiscoveryResult) {
            let cache = PluginMetadataCache(file: file)
            return (cache, MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache, loading: .lazy))
        }
        _ = start()
        #expect(start().0.statistics.hits == 1)

        // Touched: a new modification time.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: plugin)
        #expect(start().0.statistics.misses == 1)
        #expect(start().0.statistics.hits == 1)

        // Rewritten in place with its size and modification time put back: only the status-change time tells.
        var before = stat()
        #expect(stat(plugin, &before) == 0)
        let content = try Data(contentsOf: URL(fileURLWithPath: plugin))
        Thread.sleep(forTimeInterval: 0.02)
        let handle = try #require(FileHandle(forWritingAtPath: plugin))
        try handle.write(contentsOf: content)
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, plugin, &times, 0) == 0)
        var after = stat()
        #expect(stat(plugin, &after) == 0)
        #expect(after.st_size == before.st_size && after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
        #expect(start().0.statistics.misses == 1)

        // Replaced by another plugin under the same name: its own metadata, and its own types.
        let replacement = plugin + ".new"
        try FileManager.default.copyItem(atPath: try Fixtures.fixtureLibrary("BrokenDuplicateNames"), toPath: replacement)
        #expect(rename(replacement, plugin) == 0)
        let (cache, result) = start()
        #expect(cache.statistics.misses == 1)
        #expect(result.registry.type(objectName: "demo:rating") == nil)
        #expect(result.registry.type(objectName: "fixture:dup") != nil)
    }

    @Test func aDescriptorThatDisagreesIsRefusedColdAndWarm() throws {
        let directory = try Fixtures.stage(["BrokenMetadataMismatch", "CRating"])
        let file = try Fixtures.temporaryDirectory() + "/cache"
        var refusals: [[String]] = []
        for round in 0..<2 {
            let cache = PluginMetadataCache(file: file)
            let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache)
            #expect(cache.statistics.hits == (round == 0 ? 0 : 2))
            refusals.append(result.rejections.map { "\($0.code) \($0.file ?? "") \($0.message)" })
            #expect(result.rejections.map(\.code) == [.metadataMismatch])
            #expect(result.rejections.first?.message.contains("the metadata declares fixture:declared, which the descriptor lacks") == true)
            #expect(result.registry.type(objectName: "demo:rating") != nil)
        }
        #expect(refusals[0] == refusals[1], "the same refusal warm and cold")
    }

    /// Bad snapshots of several kinds: each is ignored (the files are read), and the next start finds a good one.
    @Test(arguments: ["old text format", "truncated", "one byte changed", "garbage after the magic", "empty", "a folder"])
    func aBadSnapshotIsIgnoredAndRebuilt(kind: String) throws {
        let directory = try Fixtures.stage(["CRating", "DemoMedia"])
        let file = try Fixtures.temporaryDirectory() + "/cache"
        _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: PluginMetadataCache(file: file))
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        var bad: [UInt8]
        switch kind {
        case "old text format":
            bad = Array("missive-plugin-metadata-cache\t5\nP\t\(directory)/libCRating.so\t1\t2\t3\t4\t5\tCRating\t1.0.0\tx\t1\t0\t\n".utf8)
        case "truncated": bad = Array(good.prefix(good.count / 2))
        case "one byte changed":
            bad = good
            bad[good.count - 7] ^= 0x20
        case "garbage after the magic": bad = Array(good.prefix(16)) + (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        case "empty": bad = []
        default: bad = []
        }
        if kind == "a folder" {
            try FileManager.default.removeItem(atPath: file)
            try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        } else {
            try Data(bad).write(to: URL(fileURLWithPath: file))
        }
        let cache = PluginMetadataCache(file: file)
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache)
        #expect(result.rejections.isEmpty)
        #expect(cache.statistics.hits == 0 && cache.statistics.misses == 2)
        guard kind != "a folder" else { return }
        let again = PluginMetadataCache(file: file)
        _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: again)
        #expect(again.statistics.hits == 2, "rebuilt")
    }

    @Test func everyTruncationIsIgnored() throws {
        let directory = try Fixtures.stage(["CRating"])
        let file = try Fixtures.temporaryDirectory() + "/cache"
        _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: PluginMetadataCache(file: file))
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(PluginSnapshot.Image(bytes: good) != nil)
        for length in 0..<good.count {
            #expect(PluginSnapshot.Image(bytes: Array(good.prefix(length))) == nil, "\(length) bytes")
        }
    }

    @Test func hostsStartingAtOnceLeaveAWholeSnapshot() async throws {
        // The hosts block this test while they run: on a thread of its own, not one the other tests share.
        try await Fixtures.blocking {
            let directories = try (0..<4).map { index in
                try Fixtures.stage(["CRating", "DemoMedia"], renamed: ["CRating": "libRating\(index).so", "DemoMedia": "libMedia\(index).so"])
            }
            let file = try Fixtures.temporaryDirectory() + "/cache"
            for _ in 0..<3 {
                let processes = try directories.map { directory in
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
                    process.arguments = ["list", "--plugin-path", directory]
                    process.environment = ["MISSIVE_METADATA_CACHE": file, "MISSIVE_PLUGIN_SCANNER": "off", "MISSIVE_QUARANTINE": "off",
                                           "HOME": NSTemporaryDirectory()]
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = FileHandle.nullDevice
                    try process.run()
                    return process
                }
                for process in processes {
                    process.waitUntilExit()
                    #expect(process.terminationStatus == 0)
                }
                try FileManager.default.removeItem(atPath: file)
            }
            // A last round, then the snapshot left must be whole: one host's files all come from it.
            let processes = try directories.map { directory in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
                process.arguments = ["list", "--plugin-path", directory]
                process.environment = ["MISSIVE_METADATA_CACHE": file, "MISSIVE_PLUGIN_SCANNER": "off", "MISSIVE_QUARANTINE": "off", "HOME": NSTemporaryDirectory()]
                process.standardOutput = FileHandle.nullDevice
                try process.run()
                return process
            }
            processes.forEach { $0.waitUntilExit() }
            #expect(PluginSnapshot.Image(file: file) != nil, "a whole snapshot")
            let hits = directories.map { directory in
                let cache = PluginMetadataCache(file: file)
                _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache, loading: .lazy)
                return cache.statistics.hits
            }
            #expect(hits.contains(2), "\(hits)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: (file as NSString).deletingLastPathComponent).filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty)
        }
    }

    @Test func theSnapshotKeepsScanVerdictsAndDoesNotGrowWithoutBound() throws {
        let file = try Fixtures.temporaryDirectory() + "/cache"
        let metadata = PluginMetadata(name: "x", version: "1", vendor: "v", abiMajor: 1, types: [.init(objectName: "x:t", businessID: nil, persistenceValue: 3, isMedia: false)])
        let records = (0..<2_500).map { index in
            PluginSnapshot.Record(
                path: "/gone/lib\(index).so", identity: FileIdentity(device: 1, inode: UInt64(index), size: 1, seconds: 2, nanoseconds: 3),
                metadata: metadata,
                scan: .init(passed: index != 7, contentHash: "ab", hostVersion: MissiveVersion.string, reason: index == 7 ? "crashed" : ""))
        }
        #expect(FileBytes.replace(file, with: PluginSnapshot.encode(records.map { (PluginSnapshot.hash($0.path), .record($0)) })))
        let cache = PluginMetadataCache(file: file)
        #expect(cache.blacklisted().map(\.path) == ["/gone/lib7.so"])
        // Something changes, and the cache is over its capacity: only what this start used stays.
        let directory = try Fixtures.stage(["CRating"])
        _ = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory), metadataCache: cache, loading: .lazy)
        let image = try #require(PluginSnapshot.Image(file: file))
        #expect(image.count == 1)
    }
}
