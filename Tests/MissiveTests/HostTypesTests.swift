import Foundation
import Logging
import Missive
import MissiveTestSupport
import Testing

/// A type of the host application itself, compiled in.
struct NoticeMessage: MessageType, Codable, Hashable {
    static let objectName = "host:notice"
    static let businessID: String? = "notice"
    static let persistence = Persistence.persisted
    static var examples: [NoticeMessage] { [NoticeMessage(text: "Alice joined")] }
    var text: String
    var digest: String { "[Notice] \(text)" }
}

/// A host type that claims the name of a sample plugin's type.
struct HostRatingMessage: MessageType, Codable, Hashable {
    static let objectName = "demo:rating"
    static let persistence = Persistence.persisted
    static var examples: [HostRatingMessage] { [HostRatingMessage(stars: 3)] }
    var stars: Int
    var digest: String { "host rating \(stars)" }
}

/// A host registers its own Swift types and then discovers plugins, eagerly or lazily, into one registry.
@Suite struct HostTypesTests {
    static let notice = Fixtures.envelope("host:notice", #"{"text":"Alice joined"}"#)
    static let rating = Fixtures.envelope("demo:rating", #"{"score":4,"comment":"ok"}"#)

    @Test(arguments: [PluginLoading.eager, .lazy])
    func hostTypesAndPluginTypesShareOneRegistry(loading: PluginLoading) throws {
        let samples = try Fixtures.stage(Fixtures.samplePlugins)
        var builder = MessageRegistry.Builder()
        try builder.register(NoticeMessage.self)
        let discovery = builder.discoverPlugins(searchPath: Fixtures.searchPath(samples), loading: loading)
        #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
        #expect(discovery.plugins.count == (loading == .eager ? Fixtures.samplePlugins.count : 0))
        #expect(discovery.deferredPlugins.count == (loading == .lazy ? Fixtures.samplePlugins.count : 0))
        let registry = builder.build()

        #expect(registry.type(objectName: "host:notice")?.origin == .application)
        let notice = registry.decode(Self.notice)
        #expect(notice.value(as: NoticeMessage.self) == NoticeMessage(text: "Alice joined"))
        #expect(notice.persistence == .persisted)
        #expect(registry.decode(Fixtures.envelope("MS:Custom", #"{"businessID":"notice","text":"hi"}"#)).digest == "[Notice] hi")
        #expect(registry.decode(Self.rating).digest.hasPrefix("[Rating]"))
    }

    @Test func aHostTypeRegisteredFirstKeepsItsNameAndThePluginTypeIsRefused() throws {
        let samples = try Fixtures.stage(["CRating"])
        var builder = MessageRegistry.Builder()
        try builder.register(HostRatingMessage.self)
        let discovery = builder.discoverPlugins(searchPath: Fixtures.searchPath(samples))
        let refusal = try #require(discovery.rejections.first)
        #expect(discovery.rejections.count == 1)
        #expect(refusal.code == .duplicateName)
        #expect(refusal.file == samples + "/libCRating.so")
        #expect(refusal.message == "objectName is already registered by the host application")
        #expect(builder.build().decode(Self.rating).digest == "[Invalid message: demo:rating]")
    }

    @Test func registeringAHostTypeRefusesBadAndTakenNames() throws {
        var builder = MessageRegistry.Builder()
        try builder.register(NoticeMessage.self)
        #expect(throws: MissiveError.self) { try builder.register(NoticeMessage.self) }
        do {
            try builder.register(NoticeMessage.self)
        } catch {
            #expect(error.code == .duplicateName)
            #expect(error.objectName == "host:notice")
        }
    }

    @Test func discoveryLogsRefusalsLoadsAndASummary() throws {
        let folder = try Fixtures.stage(["BrokenNoEntry", "CRating"])
        let records = LogRecords()
        let logger = Logger(label: "test") { _ in records }
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), logger: logger)
        #expect(result.rejections.count == 1)
        let warnings = records.all.filter { $0.level == .warning }
        #expect(warnings.map(\.message) == ["refused plugin: the library does not export missive_plugin_entry_v1"])
        #expect(warnings.first?.metadata["missive.file"] == "\(folder)/libBrokenNoEntry.so")
        #expect(warnings.first?.metadata["missive.code"] == "missing-entry")
        #expect(records.all.contains { $0.level == .debug && $0.message.hasPrefix("loaded plugin CRating 1.0.0") })
        #expect(records.all.contains { $0.level == .info && $0.message == "discovered plugins: 1 plugin loaded, 0 deferred, 1 refused" })
        #expect("\(result)" == "9 types; 1 plugin loaded, 0 deferred, 1 refused")
        #expect("\(result.plugins[0])".hasPrefix("CRating 1.0.0 by Missive Samples (ABI 1.1, no Swift runtime): demo:rating from "))
    }
}
