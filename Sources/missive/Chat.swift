import ArgumentParser
import Foundation
import Logging
import Missive
import MissiveChatUI
import MissiveClient
import MissiveCommandLine
import MissiveRendering

extension MissiveCommand {
    struct Chat: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Chat with the members of a Missive server, drawing messages with this host's own plugins.",
            discussion: """
                Connects to `missive serve` as the member whose token is given (--token, or MISSIVE_TOKEN), keeps \
                the member's messages in a local store (--store; by default \
                $XDG_DATA_HOME/missive/chat/HOST-PORT-MEMBER.sqlite), follows the server's events, and reads \
                commands from standard input, one a line. A line that does not start with / is sent as text to \
                the open conversation. Commands: /list; /open NAME|NUMBER; /actions [N]; /act N ACTION [ARG...]; \
                /compose ACTION [ARG...]; /send TYPE CONTENT-JSON; /quote N TEXT; /forward N [CONVERSATION]; \
                /new NAME MEMBER...; /reload; /help; /quit. Arguments are JSON values (2, true, "two words"); a \
                word that is not JSON is a string. On a terminal messages are drawn in colour after a prompt; \
                otherwise each output is one plain line. docs/CHAT.md describes every command. Exit codes: 0 \
                after /quit or the end of the input; 2 a usage error, a server that cannot be reached or refuses \
                the token at the start, or a store that cannot be opened.
                """)

        @Option(help: ArgumentHelp("The server's address, such as http://127.0.0.1:8080.", valueName: "url"))
        var server: String

        @Option(help: ArgumentHelp("The member's token (default: MISSIVE_TOKEN).", valueName: "token"))
        var token: String?

        @Option(
            help: ArgumentHelp("The local store (default: $XDG_DATA_HOME/missive/chat/HOST-PORT-MEMBER.sqlite).", valueName: "path"),
            transform: CommandLinePath.resolve)
        var store: String?

        @Option(help: "The width in columns, from 20 to 1000. Default: the terminal's width, else 80.")
        var width: Int?

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            if let width, width < 20 || width > 1000 { throw ValidationError("--width must be from 20 to 1000, not \(width)") }
            guard let url = URL(string: server), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), !(url.host ?? "").isEmpty else {
                throw ValidationError("--server must be an http or https URL with a host, such as http://127.0.0.1:8080; got \(server)")
            }
            // URL takes any number as a port; the server can only be on one from 1 to 65535.
            if let port = url.port, !(1...65_535).contains(port) {
                throw ValidationError("--server has the port \(port); a port is from 1 to 65535")
            }
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            guard let token = token ?? environment["MISSIVE_TOKEN"], !token.isEmpty else {
                Console.error("no token: give --token or set MISSIVE_TOKEN (missive serve users add NAME prints one)")
                throw ExitCode(2)
            }
            let url = URL(string: server)!
            let client = ServerClient(server: url, token: token)
            let member: String
            do {
                member = try await client.me()
            } catch {
                Console.error("cannot sign in to \(client.server.absoluteString): \(ChatSession.describe(error))")
                throw ExitCode(2)
            }
            let logger = logging.logger(defaultLevel: .error)
            let discovery = try plugins.discover(logger: logger, defaultIsolation: .untrustedIsolated)
            let directories = plugins.directories
            guard let storePath = store ?? Self.standardStore(url: url, member: member, environment: environment) else {
                Console.error("no local store: neither XDG_DATA_HOME nor HOME is set; give --store")
                throw ExitCode(2)
            }
            let sync: ChatSync
            do {
                sync = try await ChatSync(client: client, storePath: storePath, registry: discovery.registry)
            } catch {
                Console.error("cannot open the local store \(storePath): \(error)")
                throw ExitCode(2)
            }
            let terminal = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
            let columns = width ?? Console.terminalColumns.map { min(max($0, 20), 1000) } ?? 80
            let session = ChatSession(
                sync: sync, registry: discovery.registry, output: ChatOutput(terminal: terminal), width: columns,
                colors: terminal && TerminalRenderer.colorsSuitStandardOutput(), reload: { [isolation = plugins.isolation] in try Self.discover(directories: directories, isolation: isolation ?? .untrustedIsolated, logger: logger) },
                pluginFingerprint: { ChatSession.fingerprint(directories: directories) })
            await session.run()
        }

        /// The plugins on the search path with `directories` first, discovered as ``PluginOptions/discover(logger:)``
        /// does: again after they changed.
        static func discover(directories: [String], isolation: PluginIsolation.Policy?, logger: Logger) throws -> MessageRegistry {
            let result = MessageRegistry.discover(
                searchPath: .standard(explicitDirectories: directories), metadataCache: .standard(),
                protection: try PluginOptions.protection(logger: logger, isolation: isolation, defaultIsolation: .untrustedIsolated), logger: logger)
            LateRefusals.watch(result.registry, logger: logger)
            return result.registry
        }

        /// `$XDG_DATA_HOME/missive/chat/HOST-PORT-MEMBER.sqlite` (or under `~/.local/share`).
        static func standardStore(url: URL, member: String, environment: [String: String]) -> String? {
            let data: String
            if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
                data = xdg
            } else if let home = environment["HOME"], !home.isEmpty {
                data = home + "/.local/share"
            } else {
                return nil
            }
            let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            let safe = { (text: String) in String(text.map { $0.isLetter || $0.isNumber || "._-@".contains($0) ? $0 : "_" }) }
            return "\(data)/missive/chat/\(safe(url.host ?? "server"))-\(port)-\(safe(member)).sqlite"
        }
    }
}
