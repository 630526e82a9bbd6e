import Foundation
import Logging
import Missive
import MissiveStore
import NIOCore
import PostgresNIO
import Synchronization

/// The change feed: reading it from its table, and the notifications that wake a follower up.
///
/// The feed is the `change` table; LISTEN/NOTIFY carries no data, only "something was committed". A store sends
/// at most one `NOTIFY missive_changes` at a time (more commits while one is on its way send one more after it),
/// outside the write transactions, so that notifying never serializes the commits.
extension PostgresMessageStore {
    /// The channel the store notifies on after a commit that wrote changes.
    static let channel = "missive_changes"

    public func changes(after position: Int64, limit: Int) async throws(StoreError) -> [StoreChange] {
        let reader = self.reader
        return try await read { transaction in
            try await transaction.query(
                """
                SELECT \(unescaped: MessageColumns.selection), change.position, change.kind, change.conversation_id,
                    change.message_id, change.member_id, change.envelope, change.persistence
                FROM change LEFT JOIN message ON message.id = change.message_id AND change.kind IN ('stored', 'edited')
                WHERE change.position > \(position) ORDER BY change.position LIMIT \(max(0, limit))
                """
            ).compactMap { row in
                let columns = row.makeRandomAccess()
                let end = MessageColumns.count
                guard let kind = StoreChange.Kind(rawValue: try columns[end + 1].decode(String.self)) else { return nil }
                if kind == .transient {
                    guard let envelope = try columns[end + 5].decode(ByteBuffer?.self),
                        let persistence = try columns[end + 6].decode(Int?.self).flatMap({ UInt32(exactly: $0) }).flatMap(Persistence.init(rawValue:))
                    else { return nil }
                    return StoreChange(
                        position: try columns[end].decode(Int64.self), transient: Array(envelope.readableBytesView), persistence: persistence,
                        conversationID: try columns[end + 2].decode(String.self), messageID: try columns[end + 3].decode(String?.self) ?? "",
                        memberID: try columns[end + 4].decode(String?.self) ?? "")
                }
                let message = try columns[0].decode(String?.self) == nil ? nil : try MessageColumns.storedMessage(row, reader: reader)
                return StoreChange(
                    position: try columns[end].decode(Int64.self), kind: kind, conversationID: try columns[end + 2].decode(String.self),
                    messageID: try columns[end + 3].decode(String?.self), memberID: try columns[end + 4].decode(String?.self), message: message)
            }
        }
    }

    public func lastChangePosition() async throws(StoreError) -> Int64 {
        try await read { transaction in
            try await transaction.query("SELECT COALESCE(MAX(position), 0)::bigint FROM change")[0].decode(Int64.self)
        }
    }

    /// Appends the transient change, after removing those older than `StoreChange/transientLifetime`, in one
    /// transaction under the change lock (so that its position keeps commit order), then notifies the followers.
    @discardableResult
    public func publishTransient(_ message: IncomingMessage) async throws(StoreError) -> Int64 {
        let envelope = message.message.envelope
        guard message.isTransient else {
            throw StoreError(.conflict, "\(envelope.id): its persistence says to store it, not to publish it", path: location)
        }
        let bytes = ByteBuffer(bytes: message.envelopeBytes)
        let persistence = Int(message.message.persistence.rawValue)
        let conversationID = envelope.conversationID, messageID = envelope.id, senderID = envelope.senderID
        let position = try await transaction { transaction in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try await transaction.query("SELECT pg_advisory_xact_lock(\(Self.changeLock))")
            try await transaction.query("DELETE FROM change WHERE kind = 'transient' AND published_at < \(now - StoreChange.transientLifetime)")
            return try await transaction.query(
                """
                INSERT INTO change(kind, conversation_id, message_id, member_id, envelope, persistence, published_at)
                VALUES ('transient', \(conversationID), \(messageID), \(senderID), \(bytes), \(persistence), \(now))
                RETURNING position
                """
            )[0].decode(Int64.self)
        }
        notifier.changesCommitted()
        return position
    }

    /// Listens for the store's notifications on a connection of its own (opened at the first call), then
    /// returns at once if the feed is already past `position`, else at the next notification from any process,
    /// or after `timeout`.
    ///
    /// - Throws: `StoreError/Code/unavailable` when the listening connection cannot be opened.
    public func waitForChanges(after position: Int64, timeout: Duration) async throws(StoreError) {
        let generation = try await listener.listening()
        if try await lastChangePosition() > position { return }
        await listener.wait(after: generation, timeout: timeout)
    }
}

/// Sends `NOTIFY missive_changes` after commits, coalesced: one at a time, and one more after it when commits
/// happened meanwhile.
final class ChangeNotifier: Sendable {
    private struct State {
        var sending = false
        var again = false
    }

    private let state = Mutex(State())
    private let client: PostgresClient
    private let logger: Logger

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Called after each commit that wrote changes.
    func changesCommitted() {
        let start = state.withLock { state in
            if state.sending {
                state.again = true
                return false
            }
            state.sending = true
            return true
        }
        guard start else { return }
        Task {
            repeat {
                // A lost notification costs a follower one poll interval, never a change: it reads the feed.
                do {
                    try await client.withConnection { connection in
                        for try await _ in try await connection.query("NOTIFY \(unescaped: PostgresMessageStore.channel)", logger: logger) {}
                    }
                } catch {
                    logger.debug("cannot notify the store's followers: \(String(reflecting: error))")
                }
            } while state.withLock({ state in
                if state.again {
                    state.again = false
                    return true
                }
                state.sending = false
                return false
            })
        }
    }
}

/// The store's listening connection, and the calls of ``PostgresMessageStore/waitForChanges(after:timeout:)``
/// waiting for its next notification.
final class ChangeListener: Sendable {
    private struct State {
        /// How many notifications (or losses of the connection) have come.
        var generation: UInt64 = 0
        /// Whether LISTEN is in effect.
        var listening = false
        /// The task that owns the connection, while there is one.
        var task: Task<Void, Never>?
        /// Calls waiting for LISTEN to be in effect (or to fail).
        var starting: [CheckedContinuation<Result<UInt64, StoreError>, Never>] = []
        /// Calls waiting for the next notification, by their number.
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters cancelled before they registered.
        var cancelled: Set<Int> = []
        var nextWaiter = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let configuration: PostgresConnection.Configuration
    private let location: String
    private let logger: Logger

    init(configuration: PostgresConnection.Configuration, location: String, logger: Logger) {
        self.configuration = configuration
        self.location = location
        self.logger = logger
    }

    /// Returns the current generation once LISTEN is in effect, connecting first if needed.
    func listening() async throws(StoreError) -> UInt64 {
        let result: Result<UInt64, StoreError> = await withCheckedContinuation { continuation in
            let immediate: Result<UInt64, StoreError>? = state.withLock { state in
                if state.stopped { return .failure(StoreError(.unavailable, "the store is closed", path: location)) }
                if state.listening { return .success(state.generation) }
                state.starting.append(continuation)
                if state.task == nil { state.task = Task { await self.run() } }
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        return try result.get()
    }

    /// Connects, listens, and counts the notifications until the connection ends or the listener stops.
    private func run() async {
        var failure: StoreError?
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            do {
                try await connection.listen(on: PostgresMessageStore.channel) { notifications in
                    self.started()
                    for try await _ in notifications { self.notified() }
                }
            } catch {
                failure = PostgresMessageStore.storeError(error, location: location, statementTimeout: nil)
            }
            try? await connection.close()
        } catch {
            failure = PostgresMessageStore.storeError(error, location: location, statementTimeout: nil)
        }
        // The connection is gone: whoever waits looks at the feed again, and the next call connects anew.
        let (starting, waiters) = state.withLock { state in
            state.listening = false
            state.task = nil
            state.generation += 1
            defer {
                state.starting = []
                state.waiters = [:]
            }
            return (state.starting, Array(state.waiters.values))
        }
        let error = failure ?? StoreError(.unavailable, "the listening connection closed", path: location)
        for continuation in starting { continuation.resume(returning: .failure(error)) }
        for waiter in waiters { waiter.resume() }
    }

    /// LISTEN is in effect.
    private func started() {
        let (starting, generation) = state.withLock { state in
            state.listening = true
            defer { state.starting = [] }
            return (state.starting, state.generation)
        }
        for continuation in starting { continuation.resume(returning: .success(generation)) }
    }

    /// A notification came: every waiting call returns.
    private func notified() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns after a notification newer than `generation`, or after `timeout`, or when cancelled.
    func wait(after generation: UInt64, timeout: Duration) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let resumeNow = self.state.withLock { state in
                            if state.generation > generation || state.stopped || state.cancelled.remove(id) != nil { return true }
                            state.waiters[id] = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                } onCancel: {
                    let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                        if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                        state.cancelled.insert(id)
                        return nil
                    }
                    waiter?.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        _ = state.withLock { $0.cancelled.remove(id) }
    }

    /// Closes the connection; waiting calls return, later ones fail.
    func stop() {
        let (task, waiters) = state.withLock { state in
            state.stopped = true
            defer { state.waiters = [:] }
            return (state.task, Array(state.waiters.values))
        }
        task?.cancel()
        for waiter in waiters { waiter.resume() }
    }
}
