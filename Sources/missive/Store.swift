import ArgumentParser
import Foundation
import MissiveCommandLine
import Missive
import MissivePostgresStore
import MissiveStore

extension MissiveCommand {
    struct Store: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep messages in a store (a SQLite file or a PostgreSQL database): ingest, list, show, search, read, members, follow, migrate.",
            discussion: """
                The store keeps what each message's persistence flag says (persisted and counted; not none or \
                status), with each member's read marks and unread counts, full-text search, quote replies and a \
                feed of changes. It is --db: a SQLite file (a path or sqlite:PATH) or a PostgreSQL database \
                (postgres://user[:password]@host[:port]/database, or a unix socket with ?host=/folder); by default \
                store.sqlite in $XDG_DATA_HOME/missive (~/.local/share/missive). Exit \
                codes: 0 done; 1 the store refused the request (a message not found, a message with replies, a \
                malformed query, malformed lines skipped); 2 a usage error, or the store cannot be opened.
                """,
            subcommands: [
                Ingest.self, Conversations.self, Show.self, Search.self, Read.self, Delete.self, Redecode.self, Check.self, Members.self, Join.self,
                Leave.self, Follow.self, Migrate.self,
            ]
        )
    }
}

/// The store, and whose counts and marks to use, for every `store` subcommand.
struct StoreOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The store: a SQLite file (a path, or sqlite:PATH) or a PostgreSQL database (postgres://user@host:port/db; a unix socket as ?host=/socket/folder). Default: store.sqlite in $XDG_DATA_HOME/missive.",
            valueName: "store"),
        transform: StoreOptions.resolve)
    var db: String?

    @Option(help: "Your account's id: your own messages never count as unread. The first ingest that names one makes it the store's owner; other commands only check it.")
    var me: String?

    @Option(help: ArgumentHelp("Whose unread counts, read marks and conversations to use (default: the owner of a personal store).", valueName: "id"))
    var member: String?

    @Option(help: "Output format: text or json.")
    var format: OutputFormat = .text

    /// The default database: `$XDG_DATA_HOME/missive/store.sqlite`, else `~/.local/share/missive/store.sqlite`.
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return data + "/missive/store.sqlite"
    }

    /// A store argument with its file path made absolute while the arguments are parsed (see
    /// ``CommandLinePath``): a plain path, or the path of `sqlite:PATH`; a URL (`postgres://...`,
    /// `sqlite:///...`) stays as written.
    static func resolve(_ argument: String) -> String {
        let lowered = argument.lowercased()
        if argument.contains("://") || lowered.hasPrefix("postgres:") || lowered.hasPrefix("postgresql:") { return argument }
        if argument.lowercased().hasPrefix("sqlite:") { return "sqlite:" + CommandLinePath.resolve(String(argument.dropFirst("sqlite:".count))) }
        return CommandLinePath.resolve(argument)
    }

    /// The store as given (`--db` or the default file), for messages.
    var path: String {
        guard let db else { return Self.defaultPath }
        return (try? StoreLocation(parsing: db).description) ?? db
    }

    /// The store `--db` names, or the default file.
    func location() throws -> StoreLocation {
        guard let db else { return .sqlite(path: Self.defaultPath) }
        do {
            return try StoreLocation(parsing: db)
        } catch {
            // The reason names the URL (without its password) already.
            Console.error(error.message)
            throw ExitCode(2)
        }
    }

    /// Opens the store; a store that cannot be opened is reported, exit code 2. Only `creating` (ingest and
    /// migrate's destination) creates a store, as `kind`, or gives a personal store without an owner the one
    /// `--me` names; the others refuse a `--me` that differs from the store's owner and change nothing.
    func open(creating: Bool = false, kind: StoreKind? = nil) async throws -> any MessageStore {
        let location = try location()
        if case .sqlite(let path) = location {
            if db == nil {
                try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            }
            // Only ingest creates a store file: a mistyped --db is an error, not a new empty store.
            guard creating || FileManager.default.fileExists(atPath: path) else {
                Console.error("\(path): no store there; 'missive store ingest' creates one")
                throw ExitCode(2)
            }
        }
        do throws(StoreError) {
            let requested: StoreKind? = creating ? (kind ?? me.map { .personal(owner: $0) }) : nil
            let store = try await location.open(kind: requested)
            if let me {
                guard case .personal(let owner) = store.kind else {
                    throw StoreError(
                        .kindMismatch, "the store is shared by many members and has no owner: name one with --member, not --me", path: store.location)
                }
                if let owner, owner != me {
                    throw StoreError(.ownerMismatch, "the store belongs to '\(owner)', not '\(me)'", path: store.location)
                }
            }
            return store
        } catch {
            Console.error(error.description)
            throw ExitCode(2)
        }
    }

    /// The member whose counts and marks a command uses: `--member`, else the owner of a personal store.
    /// A shared store without `--member` is a usage error (exit code 2).
    func member(of store: any MessageStore) throws -> String {
        if let member { return member }
        if let reader = store.reader { return reader }
        Console.error("\(store.location): the store is shared by many members: say whose counts to use with --member")
        throw ExitCode(2)
    }

    /// A SQLite store's database and WAL files, which `--output` must never write over.
    var databaseFiles: [(path: String, what: String)] {
        guard case .sqlite(let path)? = try? db.map(StoreLocation.init(parsing:)) ?? .sqlite(path: Self.defaultPath) else { return [] }
        return ["", "-wal", "-shm"].map { (path + $0, "the store's database") }
    }

    /// Reports a refused request (text or JSON) and exits with code 1.
    func refuse(_ error: StoreError) -> ExitCode {
        if format == .json {
            // Encoding this shape cannot fail: it has no number that is not an integer, and no raw JSON.
            try? Console.out(json: StoreErrorJSON(error: .init(code: error.code.description, reason: error.message, database: error.path ?? path)))
        }
        Console.error(error.path == nil ? "\(path): \(error.message)" : error.description)
        return ExitCode([StoreError.Code.cannotOpen, .unavailable, .newerSchema, .kindMismatch].contains(error.code) ? 2 : 1)
    }
}

/// **stored-message**: one stored message (the type is shared with the server's API).
extension StoredMessageJSON: CLIJSON {
    static let documentedAs = "stored-message"
}

/// A request `missive store` refused, with `--format json`.
struct StoreErrorJSON: CLIJSON {
    static let documentedAs = "store-error"
    let schemaVersion = 1
    var error: Details

    /// The refusal.
    struct Details: Encodable {
        var code: String
        var reason: String
        var database: String
    }
}

/// ``table(_:)`` of cells cleaned first, so that what the cleaning removes from a sender's or a plugin's text
/// never breaks the alignment.
func cleanTable(_ rows: [[String]]) -> String {
    table(rows.map { $0.map(TextHygiene.line) })
}
