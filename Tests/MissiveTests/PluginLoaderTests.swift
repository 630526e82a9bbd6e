import Foundation
@testable import Missive
import MissiveTestSupport
import Testing

/// The real loader on real files: the samples load, and each kind of bad file is refused with its reason
/// while everything else keeps loading.
@Suite struct PluginLoaderTests {
    @Test func samplesRegisterFromEverySamplePlugin() throws {
        let directory = try Fixtures.stage(Fixtures.samplePlugins)
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory))
        #expect(result.rejections.isEmpty)
        #expect(result.plugins.map(\.info.name) == ["CRating", "DemoMedia", "DemoMessages", "MatrixBridge"])
        let facts = result.registry.types.compactMap { type -> String? in
            guard case .plugin(let info) = type.origin else { return nil }
            return "\(type.objectName) \(type.businessID ?? "-") \(type.persistence.rawValue) \(type.isMedia) \(info.name) \(info.path)"
        }
        #expect(facts == [
            "demo:rating evaluation 3 false CRating \(directory)/libCRating.so",
            "demo:sticker sticker 3 true DemoMedia \(directory)/libDemoMedia.so",
            "demo:link text_link 3 false DemoMessages \(directory)/libDemoMessages.so",
            "demo:poll poll 3 false DemoMessages \(directory)/libDemoMessages.so",
            "demo:typing - 16 false DemoMessages \(directory)/libDemoMessages.so",
            "m.room.message - 3 false MatrixBridge \(directory)/libMatrixBridge.so",
            "matrix:text m.text 3 false MatrixBridge \(directory)/libMatrixBridge.so",
            "matrix:notice m.notice 1 false MatrixBridge \(directory)/libMatrixBridge.so",
            "matrix:emote m.emote 3 false MatrixBridge \(directory)/libMatrixBridge.so",
        ])
        #expect(result.registry.type(businessID: "poll")?.objectName == "demo:poll")
    }

    @Test func metadataIsReadWithoutLoadingTheFile() throws {
        let directory = try Fixtures.stage(["CRating"], renamed: ["CRating": "libUnloadedRating.so"])
        let path = directory + "/libUnloadedRating.so"
        let metadata = try PluginMetadata.read(fromFile: path)
        #expect(metadata.name == "CRating")
        #expect(metadata.abiMajor == 1)
        #expect(metadata.types == [.init(objectName: "demo:rating", businessID: "evaluation", persistenceValue: 3, isMedia: false)])
        #expect(try !Fixtures.mappedFiles().contains(path), "reading metadata must not map the library")

        _ = try PluginLoader.load(path)
        #expect(try Fixtures.mappedFiles().contains(path))
    }

    @Test func swiftPluginMetadataComesFromTheMacros() throws {
        let metadata = try PluginMetadata.read(fromFile: Fixtures.library("DemoMessages"))
        #expect(metadata.name == "DemoMessages")
        #expect(metadata.version == "1.0.0")
        #expect(metadata.vendor == "Missive Samples")
        #expect(Set(metadata.types.map(\.objectName)) == ["demo:link", "demo:poll", "demo:typing"])
        let media = try PluginMetadata.read(fromFile: Fixtures.library("DemoMedia"))
        #expect(media.types.first?.isMedia == true)
    }

    @Test(arguments: [
        ("BrokenWrongABI", MissiveError.Code.unsupportedABI, "descriptor reports ABI 2.0"),
        ("BrokenNoEntry", .missingEntry, "does not export missive_plugin_entry_v1"),
        ("BrokenMetadataMismatch", .metadataMismatch, "the metadata declares fixture:declared, which the descriptor lacks"),
        ("BrokenUnresolvedSymbol", .loadFailed, "undefined symbol: missive_fixture_symbol_that_does_not_exist"),
    ])
    func brokenPluginsAreRefusedWithTheirReason(product: String, code: MissiveError.Code, reason: String) throws {
        let path = try Fixtures.stage([product]) + "/lib\(product).so"
        #expect {
            try PluginLoader.load(path)
        } throws: { error in
            let error = error as! MissiveError
            return error.code == code && error.file == path && error.message.contains(reason)
        }
    }

    @Test func badNamesAreRefusedPerTypeAndTheOtherTypesStay() throws {
        let directory = try Fixtures.stage(["BrokenReservedPrefix", "BrokenDuplicateNames", "CRating"])
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory))
        let reserved = try #require(result.rejections.first { $0.code == .reservedName })
        #expect(reserved.objectName == "MS:Fixture")
        #expect(reserved.file == directory + "/libBrokenReservedPrefix.so")
        #expect(result.registry.type(objectName: "fixture:allowed") != nil)
        let badName = try #require(result.rejections.first { $0.code == .invalidName })
        #expect(badName.objectName == "fixture bad name")
        #expect(badName.message.contains("outside letters, digits and ._:-"))

        let duplicates = result.rejections.filter { $0.code == .duplicateName }
        #expect(duplicates.map(\.objectName) == ["fixture:dup", "fixture:other"])
        #expect(duplicates.allSatisfy { $0.file == directory + "/libBrokenDuplicateNames.so" })
        #expect(duplicates[0].message.contains("objectName is already registered by plugin BrokenDuplicateNames"))
        #expect(duplicates[1].message.contains("businessID 'fixture_dup' is already registered by fixture:dup"))
        #expect(result.registry.type(objectName: "fixture:dup")?.persistence == .counted, "the first claim wins")
        #expect(result.registry.type(objectName: "demo:rating") != nil)
    }

    @Test func aClashBetweenTwoPluginsGoesToTheFirstInSearchOrder() throws {
        // Same folder: file name order decides.
        let directory = try Fixtures.stage(["CRating"])
        try FileManager.default.copyItem(atPath: Fixtures.library("CRating"), toPath: directory + "/libCRatingCopy.so")
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory))
        let clash = try #require(result.rejections.first)
        // The type, and then the copy's composer action, whose id the first copy took.
        #expect(result.rejections.count == 2)
        #expect(result.rejections.last?.action == "demo.rating.create" && result.rejections.last?.code == .duplicateName)
        #expect(clash.code == .duplicateName && clash.action == nil)
        #expect(clash.file == directory + "/libCRatingCopy.so")
        #expect(clash.message.contains(directory + "/libCRating.so"), "names the owner: \(clash.message)")
        guard case .plugin(let owner) = result.registry.type(objectName: "demo:rating")?.origin else {
            Issue.record("demo:rating is not from a plugin")
            return
        }
        #expect(owner.path == directory + "/libCRating.so")

        // Two folders: search-path order decides, and a same-named file later is shadowed.
        let first = try Fixtures.stage(["CRating"], renamed: ["CRating": "libZRating.so"])
        let second = try Fixtures.stage(["CRating"])
        let ordered = MessageRegistry.discover(searchPath: Fixtures.searchPath(first, second))
        guard case .plugin(let winner) = ordered.registry.type(objectName: "demo:rating")?.origin else {
            Issue.record("demo:rating is not from a plugin")
            return
        }
        #expect(winner.path == first + "/libZRating.so")

        let shadowing = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory, second))
        #expect(shadowing.rejections.contains { $0.code == .shadowed && $0.file == second + "/libCRating.so" })
    }

    @Test func aLibraryReachedTwiceIsInstantiatedOnce() throws {
        let directory = try Fixtures.stage(["CRating"])
        let path = directory + "/libCRating.so"
        let first = try PluginLoader.load(path)
        let again = try PluginLoader.load(path)
        // The very same validated types: a second entry call would have built new ones.
        #expect(again.types.count == 1 && again.types[0] === first.types[0])

        // A symbolic link in a later folder reaches the same library: it is reported, not loaded twice.
        let other = try Fixtures.temporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: other + "/libRatingLink.so", withDestinationPath: path)
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory, other))
        #expect(result.plugins.count == 1)
        let link = try #require(result.rejections.first)
        #expect(link.code == .shadowed)
        #expect(link.file == other + "/libRatingLink.so")
        #expect(link.message.contains("the same library as \(path)"))
    }

    @Test func filesThatAreNotPluginsAreReportedAndSkipped() throws {
        let directory = try Fixtures.stage(["CRating"])
        try Data("hello, not an ELF file".utf8).write(to: URL(fileURLWithPath: directory + "/libText.so"))
        let elf = try Data(contentsOf: URL(fileURLWithPath: Fixtures.library("CRating")))
        try elf.prefix(200).write(to: URL(fileURLWithPath: directory + "/libTruncated.so"))
        let systemLibrary = try #require(try Fixtures.mappedFiles().first { $0.contains("/libc.so") || $0.contains("/libc-") })
        try FileManager.default.copyItem(atPath: systemLibrary, toPath: directory + "/libPlainELF.so")

        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(directory, directory + "/missing"))
        let byFile = Dictionary(grouping: result.rejections, by: { $0.file ?? "" })
        #expect(byFile[directory + "/libText.so"]?.first?.message.contains("not an ELF shared object") == true)
        #expect(byFile[directory + "/libTruncated.so"]?.first?.code == .notAPlugin)
        #expect(byFile[directory + "/libPlainELF.so"]?.first?.code == .missingMetadata)
        #expect(byFile[directory + "/libPlainELF.so"]?.first?.message.contains("has no missive_meta section") == true)
        #expect(byFile[directory + "/missing"]?.first?.message == "plugin folder does not exist")
        #expect(result.registry.type(objectName: "demo:rating") != nil)
    }

    @Test func metadataRecordsAreValidated() throws {
        let wrongABI = Array(#"{"record":"plugin","abi":2,"name":"n","version":"1","vendor":"v"}"#.utf8) + [0]
        #expect(try PluginMetadata.parse(wrongABI).abiMajor == 2)
        let bad: [String] = [
            #"{"record":"type","objectName":"a:b","persistence":3}"#,
            #"{"record":"plugin","abi":1,"name":"","version":"1","vendor":"v"}"#,
            "not json",
        ]
        for record in bad {
            #expect(throws: MissiveError.self) { try PluginMetadata.parse(Array(record.utf8) + [0]) }
        }
    }

    @Test func theSearchPathHasTheDocumentedOrder() {
        let path = PluginSearchPath.standard(
            explicitDirectories: ["/opt/a"], environment: ["MISSIVE_PLUGIN_PATH": "/env/1:/env/2", "HOME": "/home/u"])
        #expect(path.entries.map(\.directory) == [
            "/opt/a", "/env/1", "/env/2", PluginSearchPath.executableDirectory()!, "/home/u/.local/share/missive/plugins",
            "/usr/local/lib/missive/plugins",
        ])
        #expect(path.entries.map(\.source) == [.explicit, .environment, .environment, .executable, .user, .system])
        #expect(PluginSearchPath.userDirectory(["XDG_DATA_HOME": "/x", "HOME": "/h"]) == "/x/missive/plugins")
    }


    @Test func businessIDsDisallowColons() {
        #expect(NameGrammar.businessIDProblem("text_link") == nil)
        #expect(NameGrammar.businessIDProblem("a:b") != nil)
        #expect(NameGrammar.isReservedBusinessID("MS_poll"))
    }

    struct Reserved: MessageType, Codable {
        static let objectName = "MS:Mine"
        static let persistence = Persistence.counted
        static var examples: [Reserved] { [Reserved()] }
        var digest: String { "r" }
    }

    struct Clashing: MessageType, Codable {
        static let objectName = "app:clash"
        static let businessID: String? = "text_link"
        static let persistence = Persistence.persisted
        static var examples: [Clashing] { [Clashing()] }
        var digest: String { "c" }
    }

    struct BadName: MessageType, Codable {
        static let objectName = "bad name"
        static let persistence = Persistence.none
        static var examples: [BadName] { [BadName()] }
        var digest: String { "b" }
    }

    @Test func applicationTypesFollowTheSameRules() throws {
        var builder = MessageRegistry.Builder()
        #expect(throws: MissiveError.self) { try builder.register(Reserved.self) }
        #expect(throws: MissiveError.self) { try builder.register(BadName.self) }
        try builder.register(Clashing.self)
        #expect(throws: MissiveError.self) { try builder.register(Clashing.self) }
        let registry = builder.build()
        #expect(registry.type(businessID: "text_link")?.origin == .application)
        #expect(registry.type(objectName: "bad name") == nil)
    }
}
