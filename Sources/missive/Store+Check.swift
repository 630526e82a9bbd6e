import ArgumentParser
import Missive
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the store: SQLite's integrity check, the search index, and every counter against a recount.",
            discussion: "Exit codes: 0 consistent; 1 a problem was found (each is printed).")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try await store.open()
            let report: ConsistencyReport
            do {
                report = try await database.checkConsistency()
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                Console.out(report.isConsistent ? "Consistent: \(database.location)" : report.problems.joined(separator: "\n"))
            case .json:
                try Console.out(json: StoreCheckJSON(consistent: report.isConsistent, problems: report.problems))
            }
            if !report.isConsistent { throw ExitCode(1) }
        }
    }
}

/// `missive store check --format json`.
struct StoreCheckJSON: CLIJSON {
    static let documentedAs = "store-check"
    let schemaVersion = 1
    var consistent: Bool
    var problems: [String]
}
