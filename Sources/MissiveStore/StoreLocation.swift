import Foundation

/// Where a store is, parsed from a store URL without opening anything: a SQLite file, or a database on a
/// PostgreSQL server.
///
/// The forms:
/// - `sqlite:PATH`, `sqlite:///absolute/path`, or a plain path: a SQLite file. A relative path is made
///   absolute against the current directory when parsed. The path is taken as written (no percent escapes).
/// - `postgres://user[:password]@host[:port]/database[?parameters]` (or `postgresql://`): a PostgreSQL
///   database. The host may be a name, an IPv4 address, or an IPv6 address in brackets (`[::1]`). User,
///   password, host and database may hold percent escapes (`%40` for `@`).
/// - A PostgreSQL server on a unix socket, as libpq writes it: an empty host and the socket's folder as the
///   `host` parameter (`postgres://alice@/chat?host=/run/postgresql`), or the folder percent-encoded as the host
///   (`postgres://alice@%2Frun%2Fpostgresql/chat`). The socket is the file `.s.PGSQL.<port>` in that folder.
///
/// Text that starts with a scheme and `://` is a URL; any other text is a file path.
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// A SQLite file, by its absolute path.
    case sqlite(path: String)
    /// A database on a PostgreSQL server.
    case postgres(PostgresLocation)

    /// Parses a store URL or a path.
    ///
    /// - Throws: ``StoreError/Code/cannotOpen`` naming the URL (without its password) and what is wrong with it.
    public init(parsing text: String) throws(StoreError) {
        if let schemeEnd = text.range(of: "://"), Self.isScheme(text[..<schemeEnd.lowerBound]) {
            let scheme = text[..<schemeEnd.lowerBound].lowercased()
            switch scheme {
            case "postgres", "postgresql":
                self = .postgres(try PostgresLocation(parsing: text))
            case "sqlite":
                let path = String(text[schemeEnd.upperBound...])
                guard path.hasPrefix("/") else {
                    throw StoreError(
                        .cannotOpen, "the store URL \(text) names no absolute path: write sqlite:///absolute/path or sqlite:relative/path",
                        path: text)
                }
                self = .sqlite(path: path)
            default:
                let shown = PostgresLocation.hidingPassword(in: text)
                throw StoreError(
                    .cannotOpen, "the store URL \(shown) has the unknown scheme '\(scheme)': use sqlite:PATH, a plain path, or postgres://",
                    path: shown)
            }
            return
        }
        var path = text
        if text.lowercased().hasPrefix("sqlite:") {
            path = String(text.dropFirst("sqlite:".count))
        } else if text.lowercased().hasPrefix("postgres:") || text.lowercased().hasPrefix("postgresql:") {
            let shown = text.contains("@") ? String(text.prefix { $0 != ":" }) + ":..." : text
            throw StoreError(.cannotOpen, "the store URL \(shown) is not a PostgreSQL URL: write postgres://user@host/database", path: shown)
        }
        guard !path.isEmpty else {
            throw StoreError(.cannotOpen, "the store location '\(text)' names no file", path: text)
        }
        guard !path.utf8.contains(0) else {
            throw StoreError(.cannotOpen, "the store path '\(text)' holds a NUL character", path: text)
        }
        if !path.hasPrefix("/") {
            let directory = FileManager.default.currentDirectoryPath
            path = (directory.hasSuffix("/") ? directory : directory + "/") + path
        }
        self = .sqlite(path: path)
    }

    /// Whether `text` can be a URL's scheme: a letter, then letters, digits, `+`, `-` or `.`.
    static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// The location as a store names itself in messages: the SQLite file's path, or the PostgreSQL URL without
    /// its password.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let location): location.description
        }
    }
}

extension Character {
    /// Whether the character is one of the ASCII digits 0 to 9.
    fileprivate var isDigit: Bool { isASCII && isWholeNumber }
}

/// A database on a PostgreSQL server, with the connection's parameters (see ``StoreLocation``).
///
/// The parameters of the URL's query:
/// - `sslmode`: `disable` (the default), `allow` or `prefer` connect without TLS; `require`, `verify-ca` and
///   `verify-full` are refused (TLS is not supported yet).
/// - `statement_timeout`: the longest a statement may run, in milliseconds (0, the default, for no limit).
/// - `pool_size`: the most connections the store opens at once (default 8).
/// - `connect_timeout`: the longest a connection attempt waits, in seconds (default 10).
/// - `application_name`: how the server lists the store's connections (default `missive`).
/// - `host` and `port`: libpq's way of naming a unix socket's folder (and its port) when the URL's host is empty.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// How to reach the server.
    public enum Server: Sendable, Hashable {
        /// A host name or address, and a TCP port.
        case tcp(host: String, port: Int)
        /// A unix socket: the folder it is in, and the port that names its file (`.s.PGSQL.<port>`).
        case socket(directory: String, port: Int)

        /// The socket file's path, for ``socket(directory:port:)``.
        public var socketPath: String? {
            guard case .socket(let directory, let port) = self else { return nil }
            return (directory.hasSuffix("/") ? String(directory.dropLast()) : directory) + "/.s.PGSQL.\(port)"
        }
    }

    /// PostgreSQL's port when none is named.
    public static let defaultPort = 5432
    /// The most connections when `pool_size` is not given.
    public static let defaultPoolSize = 8
    /// The connection timeout when `connect_timeout` is not given.
    public static let defaultConnectTimeout: Duration = .seconds(10)
    /// The application name when `application_name` is not given.
    public static let defaultApplicationName = "missive"

    /// How to reach the server.
    public var server: Server
    /// The user to log in as.
    public var user: String
    /// The password, if the URL gives one. Never part of ``description``.
    public var password: String?
    /// The database's name.
    public var database: String
    /// The longest a statement may run before the server cancels it; `nil` for no limit.
    public var statementTimeout: Duration?
    /// The most connections the store keeps open at once.
    public var poolSize: Int
    /// The longest a connection attempt waits.
    public var connectTimeout: Duration
    /// How the server lists the store's connections (`pg_stat_activity.application_name`).
    public var applicationName: String

    /// A location from its parts.
    public init(
        server: Server, user: String, password: String? = nil, database: String, statementTimeout: Duration? = nil,
        poolSize: Int = Self.defaultPoolSize, connectTimeout: Duration = Self.defaultConnectTimeout,
        applicationName: String = Self.defaultApplicationName
    ) {
        self.server = server
        self.user = user
        self.password = password
        self.database = database
        self.statementTimeout = statementTimeout
        self.poolSize = poolSize
        self.connectTimeout = connectTimeout
        self.applicationName = applicationName
    }

    /// Parses a `postgres://` or `postgresql://` URL.
    ///
    /// - Throws: ``StoreError/Code/cannotOpen`` naming the URL (without its password) and what is wrong with it.
    public init(parsing text: String) throws(StoreError) {
        let shown = Self.hidingPassword(in: text)
        func malformed(_ reason: String) -> StoreError {
            StoreError(.cannotOpen, "the store URL \(shown) \(reason)", path: shown)
        }
        func decoded(_ part: Substring, _ what: String) throws(StoreError) -> String {
            guard let value = String(part).removingPercentEncoding else {
                throw malformed("has a malformed percent escape in its \(what)")
            }
            guard !value.utf8.contains(0) else { throw malformed("has a NUL character in its \(what)") }
            return value
        }

        guard let schemeEnd = text.range(of: "://") else { throw malformed("is not a postgres:// URL") }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw malformed("has the scheme '\(scheme)', not postgres or postgresql")
        }
        var rest = text[schemeEnd.upperBound...]
        if rest.contains("#") { throw malformed("has a fragment ('#'); a store URL has none") }

        // Query parameters.
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        // Authority and path. The user information ends at the last '@' (a password written without its
        // escapes may hold '/' or '@'); the host and port end at the first '/' after it.
        let authority: Substring
        let path: Substring
        let hostStart = rest.lastIndex(of: "@").map { rest.index(after: $0) } ?? rest.startIndex
        if let slash = rest[hostStart...].firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        } else {
            authority = rest
            path = ""
        }
        var hostPort = authority
        var user: String?
        var password: String?
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try decoded(userInfo[..<colon], "user name")
                password = try decoded(userInfo[userInfo.index(after: colon)...], "password")
            } else {
                user = try decoded(userInfo, "user name")
            }
        }
        guard let user, !user.isEmpty else { throw malformed("names no user: write postgres://user@host/database") }

        // Host and port.
        var host: String
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw malformed("has an IPv6 address without its closing ']'") }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw malformed("has a malformed IPv6 address '[\(host)]'")
            }
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw malformed("has '\(after)' after its IPv6 address; only ':port' may follow") }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = try decoded(hostPort[..<colon], "host")
            portText = hostPort[hostPort.index(after: colon)...]
        } else {
            host = try decoded(hostPort, "host")
        }
        var port: Int?
        if let portText {
            guard let value = Self.port(portText) else { throw malformed("has the bad port '\(portText)': a port is a number from 1 to 65535") }
            port = value
        }

        // Database.
        guard !path.isEmpty else { throw malformed("names no database: write postgres://user@host/database") }
        guard !path.contains("/") else { throw malformed("has a database name with '/' in it; write it as %2F") }
        let database = try decoded(path, "database name")

        // Parameters.
        var statementTimeout: Duration?
        var poolSize = Self.defaultPoolSize
        var connectTimeout = Self.defaultConnectTimeout
        var applicationName = Self.defaultApplicationName
        var socketDirectory: String?
        var seen: Set<String> = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let equals = pair.firstIndex(of: "=") else { throw malformed("has the parameter '\(pair)' without a value") }
            let name = try decoded(pair[..<equals], "parameters")
            let value = try decoded(pair[pair.index(after: equals)...], "parameter \(name)")
            guard seen.insert(name).inserted else { throw malformed("gives the parameter '\(name)' twice") }
            switch name {
            case "sslmode":
                switch value {
                case "disable", "allow", "prefer": break
                case "require", "verify-ca", "verify-full":
                    throw malformed("asks for sslmode=\(value): TLS is not supported yet; use sslmode=disable on a trusted network or a unix socket")
                default:
                    throw malformed("has the unknown sslmode '\(value)' (disable, allow or prefer; TLS is not supported yet)")
                }
            case "statement_timeout":
                guard let milliseconds = Int(value), milliseconds >= 0, value.allSatisfy(\.isDigit) else {
                    throw malformed("has the bad statement_timeout '\(value)': a number of milliseconds, 0 for none")
                }
                statementTimeout = milliseconds == 0 ? nil : .milliseconds(milliseconds)
            case "pool_size":
                guard let size = Int(value), size >= 1, size <= 1_000, value.allSatisfy(\.isDigit) else {
                    throw malformed("has the bad pool_size '\(value)': a number of connections from 1 to 1000")
                }
                poolSize = size
            case "connect_timeout":
                guard let seconds = Int(value), seconds >= 1, seconds <= 86_400, value.allSatisfy(\.isDigit) else {
                    throw malformed("has the bad connect_timeout '\(value)': a number of seconds from 1 to 86400")
                }
                connectTimeout = .seconds(seconds)
            case "application_name":
                guard value.utf8.count < 64, value.allSatisfy({ $0.isASCII && !$0.isNewline }) else {
                    throw malformed("has a bad application_name: at most 63 ASCII characters on one line")
                }
                applicationName = value
            case "host":
                guard host.isEmpty else { throw malformed("names its host twice: in the URL and as the host parameter") }
                guard value.hasPrefix("/") else {
                    throw malformed("has the host parameter '\(value)': only a unix socket's folder (an absolute path) is taken there")
                }
                socketDirectory = value
            case "port":
                guard port == nil else { throw malformed("names its port twice: in the URL and as the port parameter") }
                guard let value = Self.port(Substring(value)) else {
                    throw malformed("has the bad port '\(value)': a port is a number from 1 to 65535")
                }
                port = value
            default:
                throw malformed(
                    "has the unknown parameter '\(name)' (known: sslmode, statement_timeout, pool_size, connect_timeout, application_name, host, port)"
                )
            }
        }

        let server: Server
        if let socketDirectory {
            server = .socket(directory: socketDirectory, port: port ?? Self.defaultPort)
        } else if host.hasPrefix("/") {
            server = .socket(directory: host, port: port ?? Self.defaultPort)
        } else if host.isEmpty {
            throw malformed("names no host: write postgres://user@host/database, or ?host=/socket/folder for a unix socket")
        } else {
            server = .tcp(host: host, port: port ?? Self.defaultPort)
        }
        self.init(
            server: server, user: user, password: password, database: database, statementTimeout: statementTimeout, poolSize: poolSize,
            connectTimeout: connectTimeout, applicationName: applicationName)
    }

    /// A port number from its digits, or `nil`.
    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy(\.isDigit), let value = Int(text), (1...65_535).contains(value) else {
            return nil
        }
        return value
    }

    /// `text` with the password of a `scheme://user:password@` URL left out, for messages about a URL that may
    /// not even parse.
    static func hidingPassword(in text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let rest = text[schemeEnd.upperBound...]
        let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? rest.endIndex
        // The user information runs to the last '@' before the parameters, whatever it holds.
        if let at = rest[..<end].lastIndex(of: "@") {
            guard let colon = rest[..<at].firstIndex(of: ":") else { return text }
            return String(text[..<colon]) + String(text[at...])
        }
        // No '@': what follows a ':' in the authority is a port, unless it is not a number (a password without
        // its user's '@'): then it is not shown.
        let authorityEnd = rest[..<end].firstIndex(of: "/") ?? end
        guard let colon = rest[..<authorityEnd].firstIndex(of: ":") else { return text }
        let after = rest[rest.index(after: colon)..<authorityEnd]
        if after.allSatisfy(\.isNumber) { return text }
        return String(text[...colon]) + "***" + String(text[authorityEnd...])
    }

    /// The URL without the password: `postgres://user@host:port/database`, with the parameters that differ from
    /// the defaults. Parsing it gives this location back, without the password.
    public var description: String {
        var url = "postgres://" + Self.escaped(user, keeping: Self.unreserved) + "@"
        var parameters: [(String, String)] = []
        switch server {
        case .tcp(let host, let port):
            url += host.contains(":") ? "[\(host)]" : Self.escaped(host, keeping: Self.unreserved)
            if port != Self.defaultPort { url += ":\(port)" }
        case .socket(let directory, let port):
            parameters.append(("host", directory))
            if port != Self.defaultPort { parameters.append(("port", "\(port)")) }
        }
        url += "/" + Self.escaped(database, keeping: Self.unreserved)
        if let statementTimeout {
            let (seconds, attoseconds) = statementTimeout.components
            parameters.append(("statement_timeout", "\(seconds * 1_000 + attoseconds / 1_000_000_000_000_000)"))
        }
        if poolSize != Self.defaultPoolSize { parameters.append(("pool_size", "\(poolSize)")) }
        if connectTimeout != Self.defaultConnectTimeout { parameters.append(("connect_timeout", "\(connectTimeout.components.seconds)")) }
        if applicationName != Self.defaultApplicationName { parameters.append(("application_name", applicationName)) }
        if !parameters.isEmpty {
            url += "?" + parameters.map { "\($0.0)=\(Self.escaped($0.1, keeping: Self.unreserved.union(["/", ":"])))" }.joined(separator: "&")
        }
        return url
    }

    /// The characters a URL part keeps as they are.
    private static let unreserved: Set<Character> = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `text` with every character outside `keeping` percent-escaped, byte by byte.
    private static func escaped(_ text: String, keeping: Set<Character>) -> String {
        var output = ""
        for character in text {
            if keeping.contains(character) {
                output.append(character)
            } else {
                for byte in String(character).utf8 { output += String(format: "%%%02X", byte) }
            }
        }
        return output
    }
}
