import ArgumentParser
import Missive
import MissiveCommandLine
import MissiveStore

extension MissiveCommand.Store {
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a stored message.", discussion: "A message with replies cannot be deleted until its replies are.")

        @Argument(help: "The message's id.")
        var id: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let database = try await store.open()
            do {
                try await database.delete(messageID: id)
            } catch {
                throw store.refuse(error)
            }
            switch store.format {
            case .text:
                Console.out("Deleted \(id)")
            case .json:
                try Console.out(json: StoreDeleteJSON(deleted: id))
            }
        }
    }
}

/// `missive store delete --format json`.
struct StoreDeleteJSON: CLIJSON {
    static let documentedAs = "store-delete"
    let schemaVersion = 1
    var deleted: String
}
