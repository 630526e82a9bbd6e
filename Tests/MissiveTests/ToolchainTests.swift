import Foundation
import Logging
import Missive
import MissiveTestSupport
import Testing

/// Swift plugins record the compiler that built them, and a host refuses one built by another Swift
/// major.minor version; C plugins record none and load anywhere.
@Suite struct ToolchainTests {
    /// A copy of a sample Swift plugin whose metadata claims another compiler: the recorded version with
    /// one digit changed, so the section keeps its length. `component` 1 changes the minor, 2 the patch.
    static func pluginClaimingAnotherCompiler(component: Int) throws -> (path: String, claimed: String) {
        var parts = SwiftCompiler.version.split(separator: ".").map(String.init)
        let digit = Int(String(parts[component].last!))!
        parts[component] = String(parts[component].dropLast()) + String((digit + 1) % 10)
        let claimed = parts.joined(separator: ".")
        let path = try Fixtures.stage(["DemoMedia"]) + "/libDemoMedia.so"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let recorded = Array(#""swift":"\#(SwiftCompiler.version)""#.utf8), replacement = Array(#""swift":"\#(claimed)""#.utf8)
        let start = try #require(bytes.indices.first { bytes[$0...].starts(with: recorded) }, "the plugin records its compiler")
        bytes.replaceSubrange(start..<start + recorded.count, with: replacement)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, claimed)
    }

    @Test func swiftPluginsRecordTheCompilerAndCPluginsDoNot() throws {
        #expect(try PluginMetadata.read(fromFile: Fixtures.library("DemoMessages")).swiftVersion == SwiftCompiler.version)
        #expect(try PluginMetadata.read(fromFile: Fixtures.library("CRating")).swiftVersion == nil)
        #expect(SwiftCompiler.majorMinor("6.3.1") == "6.3")
        #expect(SwiftCompiler.majorMinor("6.3") == "6.3")
        #expect(SwiftCompiler.majorMinor("6") == nil)
        #expect(SwiftCompiler.majorMinor("6.x.1") == nil)
    }

    @Test func aPluginFromAnotherSwiftMinorIsRefusedWithBothVersions() throws {
        let (path, claimed) = try Self.pluginClaimingAnotherCompiler(component: 1)
        #expect {
            try PluginLoader.load(path)
        } throws: { error in
            let error = error as! MissiveError
            return error.code == .incompatibleToolchain && error.file == path
                && error.message.contains("built by Swift \(claimed), but this host was built by Swift \(SwiftCompiler.version)")
        }
        // Lazy loading refuses it at discovery too, from the metadata alone.
        let lazy = MessageRegistry.discover(searchPath: Fixtures.searchPath(URL(fileURLWithPath: path).deletingLastPathComponent().path), loading: .lazy)
        #expect(lazy.rejections.map(\.code) == [.incompatibleToolchain])
        #expect(lazy.registry.type(objectName: "demo:sticker") == nil)
    }

    @Test func aPluginFromAnotherSwiftPatchLoadsWithAWarning() throws {
        let (path, claimed) = try Self.pluginClaimingAnotherCompiler(component: 2)
        let records = LogRecords()
        let logger = Logger(label: "test") { _ in records }
        let plugin = try PluginLoader.load(path, logger: logger)
        #expect(plugin.metadata.swiftVersion == claimed)
        let warnings = records.all.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains("another Swift patch release") == true)
        #expect(warnings.first?.metadata["missive.pluginSwift"] == "\(claimed)")
    }
}

/// A log handler that keeps what it is given, for tests.
final class LogRecords: LogHandler, Sendable {
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    private let records = Locked<[Record]>([])
    var all: [Record] { records.withLock { $0 } }

    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        records.withLock { $0.append(Record(level: event.level, message: event.message.description, metadata: event.metadata ?? [:])) }
    }
}
