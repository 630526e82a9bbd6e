import Foundation
import Logging
import MissiveStore
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The connections: their configuration from the store URL, the lease of one for each call, the transaction
/// around a write, and what the server's errors mean for a caller (`StoreError`).
extension PostgresMessageStore {
    /// The advisory lock every writing transaction takes right before it appends its changes to the feed, so
    /// that positions are handed out in the order the transactions commit (a `bigserial` alone is not).
    static let changeLock: Int64 = 0x4D69_7373_6976_6531  // "Missive1"

    /// The advisory lock held while the schema is created or upgraded, and the store's kind written down, so
    /// that two first opens at once do it once.
    static let schemaLock: Int64 = 0x4D69_7373_6976_6530  // "Missive0"

    /// How many times a call runs again after the server aborted its transaction as a serialization failure
    /// (40001) or a deadlock (40P01).
    static let retries = 5

    /// The pool's configuration.
    static func clientConfiguration(_ location: PostgresLocation) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch location.server {
        case .tcp(let host, let port):
            configuration = .init(
                host: host, port: port, username: location.user, password: location.password, database: location.database, tls: .disable)
        case .socket:
            configuration = .init(
                unixSocketPath: location.server.socketPath ?? "", username: location.user, password: location.password,
                database: location.database)
        }
        configuration.options.connectTimeout = location.connectTimeout
        configuration.options.maximumConnections = location.poolSize
        configuration.options.additionalStartupParameters = startupParameters(location, statementTimeout: true)
        return configuration
    }

    /// The configuration of a connection of its own, outside the pool: for opening the store (migrations, which
    /// may wait for another process's lock longer than a statement timeout) and for listening to notifications.
    static func connectionConfiguration(_ location: PostgresLocation, statementTimeout: Bool) -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        switch location.server {
        case .tcp(let host, let port):
            configuration = .init(
                host: host, port: port, username: location.user, password: location.password, database: location.database, tls: .disable)
        case .socket:
            configuration = .init(
                unixSocketPath: location.server.socketPath ?? "", username: location.user, password: location.password,
                database: location.database)
        }
        let (seconds, attoseconds) = location.connectTimeout.components
        configuration.options.connectTimeout = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        configuration.options.additionalStartupParameters = startupParameters(location, statementTimeout: statementTimeout)
        return configuration
    }

    /// The settings every connection starts with: its application name, and the statement timeout of the URL.
    private static func startupParameters(_ location: PostgresLocation, statementTimeout: Bool) -> [(String, String)] {
        var parameters = [("application_name", location.applicationName)]
        if statementTimeout, let timeout = location.statementTimeout {
            parameters.append(("statement_timeout", "\(milliseconds(timeout))"))
        }
        return parameters
    }

    /// A duration in whole milliseconds.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    // MARK: Calls

    /// Runs `body` on a connection of the pool. The pool waits for a connection while the server cannot be
    /// reached; after the connection timeout of the URL (and a little more) the call gives up as
    /// `StoreError/Code/unavailable`. Errors come as postgres-nio throws them.
    private func leased<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let client = self.client
        let leased = LeaseFlag()
        let wait = connectTimeout + .seconds(2)
        let location = self.location
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await client.withConnection { connection in
                    leased.set()
                    return try await body(connection)
                }
            }
            group.addTask {
                try? await Task.sleep(for: wait)
                return nil
            }
            while let result = try await group.next() {
                if let value = result {
                    group.cancelAll()
                    return value
                }
                if !leased.isSet {
                    group.cancelAll()
                    throw StoreError(
                        .unavailable, "no connection to the server within \(wait): it cannot be reached, or accepts no more connections",
                        path: location)
                }
            }
            throw StoreError(.database, "a call ended without a result", path: location)
        }
    }

    /// Runs `body` in one transaction (BEGIN ... COMMIT on one connection, ROLLBACK when anything fails),
    /// again from the start when the server aborts it as a serialization failure or a deadlock. The changes
    /// `body` records go to the feed last, under ``changeLock``; after a commit that wrote some, the store sends
    /// a notification (coalesced).
    func transaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) async throws -> T) async throws(StoreError) -> T {
        let logger = self.logger
        var attempt = 0
        while true {
            attempt += 1
            do {
                let (value, wroteChanges) = try await leased { connection in
                    let transaction = Transaction(connection: connection, logger: logger)
                    try await transaction.query("BEGIN")
                    do {
                        let value = try await body(transaction)
                        let wrote = try await transaction.appendChanges()
                        try await transaction.query("COMMIT")
                        return (value, wrote)
                    } catch {
                        // On a connection that is gone, the server has rolled back already.
                        if !error.isConnectionLoss, !connection.isClosed { _ = try? await transaction.query("ROLLBACK") }
                        throw error
                    }
                }
                if wroteChanges { notifier.changesCommitted() }
                return value
            } catch where error.isRetryable && attempt <= Self.retries {
                try? await Task.sleep(for: .milliseconds(Int.random(in: 5...(20 * attempt))))
            } catch {
                throw storeError(error)
            }
        }
    }

    /// Runs one read on a connection of the pool (a statement is a transaction of its own).
    func read<T: Sendable>(_ body: @escaping @Sendable (Transaction) async throws -> T) async throws(StoreError) -> T {
        let logger = self.logger
        do {
            return try await leased { connection in
                try await body(Transaction(connection: connection, logger: logger))
            }
        } catch {
            throw storeError(error)
        }
    }

    // MARK: Errors

    /// What an error from postgres-nio (or the store's own) means for a caller, with the store's URL as its path.
    func storeError(_ error: any Error) -> StoreError {
        Self.storeError(error, location: location, statementTimeout: statementTimeout)
    }

    /// See ``storeError(_:)``; `statementTimeout` for the message of a statement cancelled by it.
    static func storeError(_ error: any Error, location: String, statementTimeout: Duration?) -> StoreError {
        if var error = error as? StoreError {
            error.path = error.path ?? location
            return error
        }
        let lost = "; nothing was changed, and the call can be retried"
        if let error = error as? PSQLError {
            switch error.code {
            case .server:
                let state = error.serverInfo?[.sqlState] ?? "?"
                let message = error.serverInfo?[.message] ?? "the server reported an error"
                let detail = error.serverInfo?[.detail].map { " (\($0))" } ?? ""
                switch state {
                case "57014" where message.contains("statement timeout"):
                    let limit = statementTimeout.map { " (\(milliseconds($0)) ms)" } ?? ""
                    return StoreError(.timeout, "a statement ran longer than the statement timeout\(limit) and was cancelled; nothing was changed", path: location)
                case "57P01", "57P02", "57P03", "53300", "57014":
                    return StoreError(.unavailable, "the server ended the call: \(message)\(lost)", path: location)
                case "28P01", "28000":
                    return StoreError(.cannotOpen, "cannot log in: \(message)", path: location)
                case "3D000":
                    return StoreError(.cannotOpen, "\(message): create it first (createdb)", path: location)
                case "42501":
                    return StoreError(.cannotOpen, "the user may not do what the store needs: \(message)\(detail)", path: location)
                default:
                    if state.hasPrefix("08") { return StoreError(.unavailable, "the connection failed: \(message)\(lost)", path: location) }
                    return StoreError(.database, "\(message)\(detail) (SQLSTATE \(state))", path: location)
                }
            case .connectionError:
                let reason = error.underlying.map(unreachableReason) ?? "the connection failed"
                return StoreError(.unavailable, "the server cannot be reached: \(reason)\(socketNote(location))", path: location)
            case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
                return StoreError(.unavailable, "the connection to the server was lost during the call\(lost)", path: location)
            case .poolClosed:
                return StoreError(.unavailable, "the store is closed", path: location)
            case .queryCancelled:
                return StoreError(.unavailable, "the call was cancelled before it reached the server\(lost)", path: location)
            case .authMechanismRequiresPassword:
                return StoreError(.cannotOpen, "cannot log in: the server asks for a password, and neither the URL, PGPASSWORD nor the password file (PGPASSFILE or ~/.pgpass) gives one", path: location)
            case .unsupportedAuthMechanism, .saslError:
                return StoreError(.cannotOpen, "cannot log in: \(error.underlying.map { "\($0)" } ?? "the server's way of logging in is not supported")", path: location)
            case .sslUnsupported:
                return StoreError(.cannotOpen, "the server refuses connections without TLS, which is not supported yet", path: location)
            default:
                return StoreError(.database, "\(error.code)\(error.underlying.map { ": \($0)" } ?? "")", path: location)
            }
        }
        if let error = error as? PostgresDecodingError {
            return StoreError(.database, "a column cannot be read: \(error.code) (\(error.postgresType) as \(error.targetType))", path: location)
        }
        if error is CancellationError {
            return StoreError(.unavailable, "the call was cancelled\(lost)", path: location)
        }
        return StoreError(.unavailable, "the server cannot be reached: \(unreachableReason(error))\(socketNote(location))", path: location)
    }

    /// ` (socket /folder/.s.PGSQL.5432)` for a store reached through a unix socket, whose path the URL does not
    /// spell out; nothing for one reached over TCP, whose URL names the host and the port.
    static func socketNote(_ location: String) -> String {
        guard case .postgres(let postgres)? = try? StoreLocation(parsing: location), let socket = postgres.server.socketPath else { return "" }
        return " (socket \(socket))"
    }

    /// Why a connection could not be made, in words: the system's reason for a refused or failed connection
    /// ("connection refused", "no such file or directory" for a missing socket), a host name that is not known,
    /// or no answer in time; the error's own description for anything else.
    static func unreachableReason(_ error: any Error) -> String {
        switch error {
        case let error as NIOConnectionError:
            if let failure = error.connectionErrors.first { return unreachableReason(failure.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name \(error.host) is not known" }
            return "no address was found for \(error.host)"
        case let error as IOError:
            return String(cString: strerror(error.errnoCode)).lowercased()
        case ChannelError.connectTimeout(let timeout):
            return "no answer within the connect timeout (\(timeout.nanoseconds / 1_000_000_000) s)"
        default:
            return "\(error)"
        }
    }
}

extension Error {
    /// Whether the server aborted the transaction as a serialization failure (40001) or a deadlock (40P01): the
    /// call runs again.
    var isRetryable: Bool {
        guard let error = self as? PSQLError, error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"
    }
}

extension Error {
    /// Whether the connection is gone (closed, or ended by the server): nothing more can run on it, and the
    /// server has rolled its transaction back.
    var isConnectionLoss: Bool {
        guard let error = self as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .connectionError:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("57P") || state.hasPrefix("08")
        default:
            return false
        }
    }
}

/// Whether a call has its connection yet.
final class LeaseFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .relaxed) }

    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// One call's connection, with the changes its transaction appends to the feed when it commits.
final class Transaction {
    let connection: PostgresConnection
    let logger: Logger
    private var changes: [(kind: String, conversationID: String, messageID: String?, memberID: String?)] = []

    init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Runs a statement and reads every row it returns.
    @discardableResult
    func query(_ query: PostgresQuery, file: String = #fileID, line: Int = #line) async throws -> [PostgresRow] {
        let rows = try await connection.query(query, logger: logger, file: file, line: line)
        var all: [PostgresRow] = []
        for try await row in rows { all.append(row) }
        return all
    }

    /// Runs a prepared statement (prepared once per connection) and reads every row it returns.
    @discardableResult
    func execute<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        var all: [Statement.Row] = []
        for try await row in try await connection.execute(statement, logger: logger) { all.append(row) }
        return all
    }

    /// Records a change for the feed, appended when the transaction is about to commit.
    func recordChange(_ kind: StoreChange.Kind, conversation conversationID: String, message messageID: String? = nil, member memberID: String? = nil) {
        changes.append((kind.description, conversationID, messageID, memberID))
    }

    /// Appends the recorded changes under the store's change lock, as late as possible in the transaction;
    /// whether there were any.
    func appendChanges() async throws -> Bool {
        guard !changes.isEmpty else { return false }
        try await query("SELECT pg_advisory_xact_lock(\(PostgresMessageStore.changeLock))")
        var start = changes.startIndex
        while start < changes.endIndex {
            let chunk = changes[start..<min(start + 1_000, changes.endIndex)]
            var bindings = PostgresBindings(capacity: chunk.count * 4)
            var rows: [String] = []
            for change in chunk {
                let first = bindings.count + 1
                rows.append("($\(first), $\(first + 1), $\(first + 2), $\(first + 3))")
                bindings.append(change.kind)
                bindings.append(change.conversationID)
                bindings.append(change.messageID)
                bindings.append(change.memberID)
            }
            try await query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO change(kind, conversation_id, message_id, member_id) VALUES " + rows.joined(separator: ", "),
                    binds: bindings))
            start = chunk.endIndex
        }
        changes.removeAll()
        return true
    }
}
