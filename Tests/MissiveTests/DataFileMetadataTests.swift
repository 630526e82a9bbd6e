import Foundation
@testable import Missive
import MissiveTestSupport
import Testing

/// The data files a plugin declares (`file` records): read in order, refused with the path and the rule when a
/// declaration breaks one, resolved against the plugin's folder, kept by the metadata cache, and readable by the
/// plugin in process.
@Suite struct DataFileMetadataTests {
    static let pluginRecord = #"{"record":"plugin","abi":1,"abiMinor":1,"name":"n","version":"1","vendor":"v"}"#

    /// The metadata of a section holding the plugin record and `records`.
    static func parse(_ records: [String]) throws(MissiveError) -> PluginMetadata {
        try PluginMetadata.parse(Array(([pluginRecord] + records).joined(separator: "\u{0}").utf8) + [0])
    }

    static func fileRecord(_ pathJSON: String) -> String { #"{"record":"file","path":"# + pathJSON + "}" }

    @Test func declaredFilesAreReadInOrder() throws {
        let metadata = try Self.parse([Self.fileRecord(#""dict/words.txt""#), #"{"path":"fonts/Sans Bold.ttf","record":"file","later":1}"#])
        #expect(metadata.dataFiles == ["dict/words.txt", "fonts/Sans Bold.ttf"])
        #expect(try Self.parse([]).dataFiles.isEmpty)
        // The C fixture's macro writes the record.
        #expect(try PluginMetadata.read(fromFile: try Fixtures.fixtureLibrary("DataFile")).dataFiles == [DataFileFixture.declared])
    }

    @Test(arguments: [
        (#""""#, #"data file "": the path is empty"#),
        (#""/etc/passwd""#, #"data file "/etc/passwd": the path is absolute; name the file relative to the plugin's folder"#),
        (#""../secrets""#, #"data file "../secrets": the path has a '..' component, which could name a file outside the plugin's folder"#),
        (#""data/../../x""#, #"data file "data/../../x": the path has a '..' component"#),
        (#""data/..""#, #"data file "data/..": the path has a '..' component"#),
        (#""./words.txt""#, #"data file "./words.txt": the path has a '.' component; write it without './'"#),
        (#""data/./words.txt""#, #"data file "data/./words.txt": the path has a '.' component"#),
        (#""data//words.txt""#, #"data file "data//words.txt": the path has an empty component ('//'); write each '/' once"#),
        (#""data/""#, #"data file "data/": the path ends with '/'; a data file is a file, not a folder"#),
        (#""a\u0000b""#, #"data file "a\u0000b": the path holds a NUL byte"#),
        (#""a\nb""#, #"data file "a\u000ab": the path holds a control character"#),
        (#"7"#, "a file record has no string 'path'"),
    ])
    func eachInvalidDeclarationIsRefusedWithItsReason(path: String, reason: String) throws {
        let error = #expect(throws: MissiveError.self) { try Self.parse([Self.fileRecord(path)]) }
        #expect(error?.code == .invalidMetadata)
        #expect(error?.message.hasPrefix(reason) == true, "\(error?.message ?? "")")
    }

    @Test func theLimitsHold() throws {
        let long = String(repeating: "a/", count: 512) + "b"
        #expect(throws: MissiveError.self) { try Self.parse([Self.fileRecord("\"\(long)\"")]) }
        let component = String(repeating: "c", count: 256)
        let error = #expect(throws: MissiveError.self) { try Self.parse([Self.fileRecord("\"data/\(component)\"")]) }
        #expect(error?.message.hasSuffix("a component of the path has 256 bytes; at most 255 are allowed") == true, "\(error?.message ?? "")")
        #expect(try Self.parse([Self.fileRecord("\"\(String(repeating: "c", count: 255))\"")]).dataFiles.count == 1)

        let most = (0..<DataFileGrammar.maxCount).map { Self.fileRecord("\"f\($0)\"") }
        #expect(try Self.parse(most).dataFiles.count == 64)
        let tooMany = #expect(throws: MissiveError.self) { try Self.parse(most + [Self.fileRecord(#""f64""#)]) }
        #expect(tooMany?.message == "the plugin declares 65 data files; at most 64 are allowed")
        let twice = #expect(throws: MissiveError.self) { try Self.parse([Self.fileRecord(#""a.txt""#), Self.fileRecord(#""a.txt""#)]) }
        #expect(twice?.message == #"data file "a.txt": it is declared twice"#)
    }

    @Test func theReaderNamesThePluginFile() async throws {
        // An invalid declaration in a real file: the error names the plugin file, the data file and the rule.
        let folder = try Fixtures.temporaryDirectory()
        let source = """
            #include "missive_plugin.h"
            MISSIVE_METADATA_PLUGIN("Escapes", "1.0.0", "Tests");
            MISSIVE_METADATA_FILE("data/../../secret");
            """
        try source.write(toFile: folder + "/escapes.c", atomically: true, encoding: .utf8)
        let include = Fixtures.repositoryRoot + "/Sources/CMissivePlugin/include"
        let run = try await Fixtures.run("/bin/sh", ["-c", "cc -shared -fPIC -I '\(include)' '\(folder)/escapes.c' -o '\(folder)/libEscapes.so'"])
        #expect(run.status == 0, "\(run.stderr)")
        let error = #expect(throws: MissiveError.self) { try PluginMetadata.read(fromFile: folder + "/libEscapes.so") }
        #expect(error?.code == .invalidMetadata)
        #expect(error?.file == folder + "/libEscapes.so")
        #expect(error?.message == #"bad metadata: data file "data/../../secret": the path has a '..' component, which could name a file outside the plugin's folder"#)
    }

    @Test func pathsResolveAgainstThePluginsFolder() throws {
        var metadata = try Self.parse([])
        #expect(metadata.dataFilePaths(pluginPath: "/opt/plugins/libX.so").isEmpty)
        metadata.dataFiles = ["dict/words.txt", "font.ttf"]
        #expect(metadata.dataFilePaths(pluginPath: "/opt/plugins/libX.so") == ["/opt/plugins/dict/words.txt", "/opt/plugins/font.ttf"])
        #expect(metadata.dataFilePaths(pluginPath: "/opt/./plugins//libX.so") == ["/opt/plugins/dict/words.txt", "/opt/plugins/font.ttf"])
        #expect(metadata.dataFilePaths(pluginPath: "/libX.so") == ["/dict/words.txt", "/font.ttf"])
        let here = FileManager.default.currentDirectoryPath
        #expect(metadata.dataFilePaths(pluginPath: "./libX.so") == [here + "/dict/words.txt", here + "/font.ttf"])
        #expect(metadata.dataFilePaths(pluginPath: "sub/libX.so").first == here + "/sub/dict/words.txt")
    }

    @Test func theMetadataCacheKeepsTheDeclaredFiles() throws {
        var metadata = try Self.parse([])
        metadata.dataFiles = ["dict/words.txt", "font.ttf"]
        let record = PluginSnapshot.Record(
            path: "/p/libX.so", identity: FileIdentity(device: 1, inode: 2, size: 3, seconds: 4, nanoseconds: 5), metadata: metadata, scan: nil)
        let image = try #require(PluginSnapshot.Image(bytes: PluginSnapshot.encode([(PluginSnapshot.hash(record.path), .record(record))])))
        #expect(image.record(0)?.metadata == metadata)
        #expect(image.record(0)?.metadata.dataFiles == ["dict/words.txt", "font.ttf"])
    }

    @Test func inProcessThePluginReadsItsFileAndAnyOther() throws {
        let path = try DataFileFixture.stage(words: "apple\nbanana\n", undeclared: "not mine\n")
        let registry = MessageRegistry.discover(searchPath: Fixtures.searchPath((path as NSString).deletingLastPathComponent)).registry
        #expect(registry.decode(Fixtures.envelope(DataFileFixture.objectName, DataFileFixture.readContent)).digest == "apple")
        // In process nothing confines it: the undeclared file is read too.
        #expect(registry.decode(Fixtures.envelope(DataFileFixture.objectName, DataFileFixture.siblingContent)).digest == "undeclared file read: not mine")
        #expect(registry.decode(Fixtures.envelope(DataFileFixture.objectName, #"{"fixture":true}"#)).digest == "[fixture]")

        // Without its file, the message that needs it is unknown, with the reason.
        let bare = try DataFileFixture.stage(words: nil)
        let other = MessageRegistry.discover(searchPath: Fixtures.searchPath((bare as NSString).deletingLastPathComponent)).registry
        let message = other.decode(Fixtures.envelope(DataFileFixture.objectName, DataFileFixture.readContent))
        #expect(message.unknown?.reason.description.contains("cannot read its data file DataFile/words.txt: No such file or directory") == true,
                "\(message)")
        #expect(other.decode(Fixtures.envelope(DataFileFixture.objectName, DataFileFixture.siblingContent)).digest
            == "undeclared file not read: No such file or directory")
    }
}
