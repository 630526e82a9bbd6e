import ArgumentParser
import Missive
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Redecode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode the stored unknown messages again through the plugins installed now.",
            discussion: """
                Every unknown message whose type is now known gets its digest, searchable words, flag and unread \
                count from its type, in one transaction. Running it again changes nothing. Messages that still \
                fail keep their reason.

                Messages that crashed or hung an isolated plugin (or were stopped by its system-call filter) are \
                remembered in the store, and no command hands them to the same build of the plugin again: they \
                are answered with the remembered failure at once. Redecode first forgets every remembered failure \
                (--keep-failures keeps them), so that those messages, their views and their actions are tried \
                again, once; those that fail again are remembered again.
                """)

        @Flag(name: .customLong("keep-failures"), help: "Keep the remembered plugin failures: do not try those messages again.")
        var keepFailures = false

        @OptionGroup var store: StoreOptions

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let registry = try plugins.discover(logger: logging.logger(), defaultIsolation: .untrustedIsolated).registry
            let database = try await store.open()
            let progress = Progress(label: "re-decoding", unit: "messages")
            let report: RedecodeReport
            do {
                if keepFailures {
                    try await database.loadPluginFailures(into: registry)
                } else {
                    let forgotten = try await database.forgetPluginFailures(pluginSHA256s: nil)
                    if forgotten > 0 { Console.error("forgot \(forgotten) remembered plugin failure\(forgotten == 1 ? "" : "s"); trying those messages again") }
                }
                report = try await database.redecode(with: registry) { done, _ in progress.count(done, every: 5_000) }
                try await database.savePluginFailures(of: registry)
            } catch {
                throw store.refuse(error)
            }
            progress.finish()
            switch store.format {
            case .text:
                guard !report.types.isEmpty else { return Console.out("No unknown messages in \(database.location)") }
                Console.out(cleanTable([["OBJECTNAME", "DECODED", "STILL UNKNOWN", "UNREAD CHANGED", "REASON"]] + report.types.map { type in
                    [type.objectName, "\(type.decoded)", "\(type.stillUnknown)", "\(type.unreadChanged)", type.reason ?? ""]
                }))
                Console.out("\(report.decodedCount) decoded, \(report.stillUnknownCount) still unknown")
            case .json:
                try Console.out(json: StoreRedecodeJSON(
                    decoded: report.decodedCount, stillUnknown: report.stillUnknownCount,
                    types: report.types.map {
                        StoreRedecodeJSON.TypeEntry(
                            objectName: $0.objectName, decoded: $0.decoded, stillUnknown: $0.stillUnknown, unreadChanged: $0.unreadChanged, reason: $0.reason)
                    }))
            }
        }
    }
}

/// `missive store redecode --format json`.
struct StoreRedecodeJSON: CLIJSON {
    static let documentedAs = "store-redecode"
    let schemaVersion = 1
    var decoded: Int
    var stillUnknown: Int
    var types: [TypeEntry]

    /// The messages of one objectName.
    struct TypeEntry: Encodable {
        var objectName: String
        var decoded: Int
        var stillUnknown: Int
        var unreadChanged: Int
        var reason: String?
    }
}
