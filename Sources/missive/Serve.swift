import ArgumentParser
import Foundation
import Logging
import Missive
import MissiveCommandLine
import MissiveServer
import MissiveStore
import NIOCore
import Synchronization

extension MissiveCommand {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the chat server members connect to, and manage its members (serve users).",
            discussion: """
                `missive serve` listens on 127.0.0.1:8080 (--host, --port; port 0 lets the system choose) and \
                keeps its accounts and, unless --db names another store, a SQLite store in its data folder \
                ($XDG_DATA_HOME/missive/server, by default ~/.local/share/missive/server; --data). It loads the \
                plugins on the search path, as every command does. SIGTERM or SIGINT stops it after the requests in \
                flight. A message that crashes or hangs an isolated plugin is remembered in the store and not \
                handed to that plugin build again, by this server or another on the store (`missive store \
                redecode` retries). `missive serve users add NAME` makes a member and prints its token once. docs/SERVER.md \
                describes the API. Exit codes: 0 stopped by a signal; 1 a users command refused (a name taken, no \
                such member); 2 a usage error, or the store, the accounts or the address cannot be opened.
                """,
            subcommands: [Start.self, Users.self],
            defaultSubcommand: Start.self)
    }
}

/// The server's data folder, for `serve` and `serve users`.
struct ServerDataOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("The server's data folder (default: $XDG_DATA_HOME/missive/server).", valueName: "folder"),
        transform: CommandLinePath.resolve)
    var data: String?

    /// The folder `--data` names, or the standard one.
    func directory() throws -> String {
        if let data { return data }
        guard let standard = ServerConfiguration.standardDataDirectory() else {
            Console.error("no data folder: neither XDG_DATA_HOME nor HOME is set; give --data")
            throw ExitCode(2)
        }
        return standard
    }

    /// The accounts in the data folder, or exit code 2 with the reason.
    func accounts() throws -> ServerAccounts {
        let path = try directory() + "/accounts.sqlite"
        do {
            return try ServerAccounts(path: path)
        } catch {
            Console.error(error.message)
            throw ExitCode(2)
        }
    }
}

extension MissiveCommand.Serve {
    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Run the server (what `missive serve` does).")

        @Option(help: "The address to listen on.")
        var host = "127.0.0.1"

        @Option(help: "The TCP port (0: one the system chooses, printed).")
        var port = 8080

        @OptionGroup var data: ServerDataOptions

        @Option(
            help: ArgumentHelp(
                "The store: a SQLite file or a PostgreSQL database URL, as `missive store --db` takes it (default: store.sqlite in the data folder).",
                valueName: "store"),
            transform: StoreOptions.resolve)
        var db: String?

        @Option(
            name: .customLong("push-gateway"),
            help: ArgumentHelp(
                "Push each new message to the members with no live connection, as a JSON POST to this http or https URL (docs/SERVER.md, Push).",
                valueName: "url"))
        var pushGateway: String?

        @Option(
            name: .customLong("push-credential-file"),
            help: ArgumentHelp(
                "A file, readable by its owner only, whose one line is 'bearer:TOKEN' or 'hmac-sha256:SECRET': what each push carries to show the gateway it comes from this server (docs/SERVER.md, Push).",
                valueName: "path"))
        var pushCredentialFile: String?

        @Option(
            name: .customLong("limit"),
            help: ArgumentHelp(
                "Set one of the server's limits, NAME=VALUE, again for each (docs/SERVER.md, Limits): \(ServerLimits.settableNames.joined(separator: ", ")). Counts and bytes are whole numbers, rates numbers, times seconds.",
                valueName: "name=value"))
        var limits: [String] = []

        @Option(
            name: .customLong("trusted-proxy"),
            help: ArgumentHelp(
                "The address of a reverse proxy in front of the server whose X-Forwarded-For names the client, for the limits per address and the security log; again for each.",
                valueName: "address"))
        var trustedProxies: [String] = []

        @OptionGroup var plugins: PluginOptions
        @OptionGroup var logging: LoggingOptions

        /// The limits with each `--limit` applied.
        func serverLimits() throws -> ServerLimits {
            var result = ServerLimits()
            for setting in limits {
                guard let equals = setting.firstIndex(of: "=") else { throw ValidationError("--limit takes NAME=VALUE, not '\(setting)'") }
                do {
                    try result.set(String(setting[..<equals]), to: String(setting[setting.index(after: equals)...]))
                } catch {
                    throw ValidationError("--limit: \(error)")
                }
            }
            return result
        }

        func validate() throws {
            _ = try serverLimits()
            guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
            if let pushGateway { _ = try Self.gatewayURL(pushGateway) }
            if pushCredentialFile != nil && pushGateway == nil { throw ValidationError("--push-credential-file needs --push-gateway") }
        }

        /// The URL `--push-gateway` names: absolute, `http` or `https`, with a host.
        static func gatewayURL(_ text: String) throws -> URL {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                let host = url.host, !host.isEmpty
            else {
                throw ValidationError("--push-gateway must be an http or https URL with a host, such as https://push.example.com/missive; got \(text)")
            }
            return url
        }

        func run() async throws {
            // At `notice`, so that the security events (docs/SERVER.md, "Threat model") are in the log.
            let logger = logging.logger(defaultLevel: .notice)
            var configuration = ServerConfiguration(host: host, port: port, dataDirectory: try data.directory(), limits: try serverLimits())
            configuration.trustedProxies = Set(trustedProxies)
            configuration.pushGateway = try pushGateway.map(Self.gatewayURL)
            if let pushCredentialFile {
                do {
                    configuration.pushCredential = try PushCredential.reading(file: pushCredentialFile)
                } catch {
                    Console.error("--push-credential-file: \(error)")
                    throw ExitCode(2)
                }
            }
            if let db {
                do {
                    configuration.store = try StoreLocation(parsing: db)
                } catch {
                    Console.error(error.message)
                    throw ExitCode(2)
                }
            }
            // Any member can send a server a message of any type: plugins not signed by a trusted key run isolated.
            let discovery = try plugins.discover(logger: logger, defaultIsolation: .untrustedIsolated)
            let server: ChatServer
            do {
                server = try await ChatServer.open(configuration: configuration, registry: discovery.registry, logger: logger)
            } catch let error as StoreError {
                Console.error(error.path == nil ? "\(configuration.storeLocation): \(error.message)" : error.description)
                throw ExitCode(2)
            } catch let error as AccountError {
                Console.error(error.message)
                throw ExitCode(2)
            } catch {
                Console.error("cannot start the server: \(error)")
                throw ExitCode(2)
            }
            let loaded = discovery.plugins.count + discovery.discovery.isolatedPlugins.count
            let isolated = discovery.discovery.isolatedPlugins.count
            let store = configuration.storeLocation.description
            let listening = Mutex(false)
            do {
                try await server.run { host, port in
                    listening.withLock { $0 = true }
                    Console.out("listening on http://\(host.contains(":") ? "[\(host)]" : host):\(port) (store \(store), \(loaded) plugin\(loaded == 1 ? "" : "s") loaded\(isolated > 0 ? ", \(isolated) of them isolated" : ""))")
                }
            } catch {
                guard listening.withLock({ $0 }) else {
                    Console.error("cannot serve on \(host):\(port): \(Self.listenFailure(error))")
                    throw ExitCode(2)
                }
                Console.error("the server stopped: \(error)")
                throw ExitCode(2)
            }
        }

        /// Why the server could not listen, in words, with what to do about it.
        static func listenFailure(_ error: any Error) -> String {
            guard let error = error as? IOError else { return "\(error)" }
            switch error.errnoCode {
            case EADDRINUSE: return "the port is in use (another server is listening there?); choose another with --port"
            case EACCES: return "permission denied (ports below 1024 need privileges); choose another with --port"
            case EADDRNOTAVAIL: return "this machine has no such address; choose one of its addresses with --host"
            default: return String(cString: strerror(error.errnoCode))
            }
        }
    }

    struct Users: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage the server's members: add, token, revoke, list.",
            subcommands: [Add.self, Token.self, Revoke.self, List.self])
    }
}

extension MissiveCommand.Serve.Users {
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a member and print its token on standard output, once: the server keeps only its hash.")

        @Argument(help: "The member's name: 1 to 64 letters, digits, '.', '_', '-' or '@'.")
        var name: String

        @OptionGroup var data: ServerDataOptions

        func run() throws {
            let token = try refusing { try data.accounts().add(member: name) }
            Console.out(token)
            Console.error("made \(name); the token above is shown once")
        }
    }

    struct Token: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a new token for a member, once; its other tokens keep working.")

        @Argument(help: "The member's name.")
        var name: String

        @OptionGroup var data: ServerDataOptions

        func run() throws {
            Console.out(try refusing { try data.accounts().issueToken(member: name) })
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke every token of a member: its next request is refused.")

        @Argument(help: "The member's name.")
        var name: String

        @OptionGroup var data: ServerDataOptions

        func run() throws {
            let count = try refusing { try data.accounts().revoke(member: name) }
            Console.out("revoked \(count) token\(count == 1 ? "" : "s") of \(name)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the members, with how many valid tokens each has.")

        @OptionGroup var data: ServerDataOptions

        func run() throws {
            let accounts = try refusing { try data.accounts().list() }
            for account in accounts {
                Console.out("\(account.member): \(account.activeTokens) valid token\(account.activeTokens == 1 ? "" : "s")")
            }
        }
    }
}

/// Runs an accounts operation; a refusal (a name taken, no such member) is reported with exit code 1, a file that
/// cannot be read with 2.
private func refusing<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as AccountError {
        Console.error(error.message)
        throw ExitCode([.cannotOpen, .database].contains(error.code) ? 2 : 1)
    }
}
