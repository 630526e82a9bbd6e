import Foundation
import Logging
import Missive
import MissiveStore
import MissiveWire
import NIOCore
import ServiceLifecycle
import Synchronization

/// The members' live connections, and what reaches them.
///
/// One task follows the store's change feed (``run()``) and hands each change to the connections of the members
/// it concerns, in feed order: a message stored, edited or deleted goes to every member of its conversation, a
/// read mark to the member who moved it (so that its other devices follow), a join or leave to the members. The
/// feed is the only source, so a message stored by another server process on the same database reaches these
/// connections as well. Messages the store does not keep (`none`, `status`) come through the feed too, as
/// `transient` changes (`MessageStore.publishTransient`), to every member of the conversation online on any
/// instance; only a store that cannot carry them has them handed over directly, to this process's connections
/// (``deliverTransient(_:persistence:conversation:to:)``).
///
/// Who is online is shared by the instances over one data folder (see `ServerAccounts` presence): this hub writes
/// which members are connected to it, and ``offline(_:)`` asks about the others, so that a member connected to
/// any instance gets no push and has no `none` message kept for it.
///
/// Each connection has a bounded queue. A member whose connection does not read fast enough to keep its queue
/// below the bound is disconnected, never buffered for without end; it resumes from its last position.
final class EventHub: Sendable {
    /// A connection's queue and how to cut it off.
    struct Connection: Sendable {
        let member: String
        let queue: AsyncStream<OutboundEvent>.Continuation
        let backlog: Backlog
        let close: @Sendable () -> Void
    }

    private struct State {
        var connections: [Int: Connection] = [:]
        var byMember: [String: Set<Int>] = [:]
        var nextID = 0
        /// The feed position of the last change handed to the connections.
        var position: Int64 = 0
        var started = false
        /// Whether ``run()`` was called: the feed is followed once.
        var running = false
        /// Each conversation's members, as the store last said; forgotten when one joins or leaves.
        var members: [String: [String]] = [:]
    }

    private let state = Mutex(State())
    private let store: any MessageStore
    private let logger: Logger
    /// The most events a connection may have waiting.
    let queueLength: Int
    /// The most bytes of events a connection may have queued and not yet written.
    let maxUnsentBytes: Int
    /// Where the instances say who is connected to them; `nil`: this process's connections alone count.
    private let accounts: ServerAccounts?
    /// This process's name in the presence rows.
    let instance = "i-" + UUID().uuidString.lowercased()
    /// The members whose count of connections changed, and heartbeats, for the one task that writes presence.
    private let presence: (stream: AsyncStream<PresenceEvent>, sink: AsyncStream<PresenceEvent>.Continuation)

    private enum PresenceEvent: Sendable {
        case member(String)
        case heartbeat
    }

    init(store: any MessageStore, queueLength: Int, maxUnsentBytes: Int = 8 << 20, logger: Logger, accounts: ServerAccounts? = nil) {
        self.store = store
        self.queueLength = max(16, queueLength)
        self.maxUnsentBytes = max(64 << 10, maxUnsentBytes)
        self.logger = logger
        self.accounts = accounts
        let (stream, sink) = AsyncStream.makeStream(of: PresenceEvent.self)
        presence = (stream, sink)
    }

    // MARK: Connections

    /// Adds a connection of `member`, whose unsent bytes `backlog` counts. It receives every change after the
    /// returned position. `nil`, and nothing added, when the member has `limit` connections already (checked and
    /// added under one lock, so that connections made at once cannot all pass).
    func connect(
        member: String, queue: AsyncStream<OutboundEvent>.Continuation, backlog: Backlog, limit: Int = .max, close: @escaping @Sendable () -> Void
    ) -> (id: Int, position: Int64)? {
        state.withLock { state in
            if (state.byMember[member]?.count ?? 0) >= limit { return nil }
            let id = state.nextID
            state.nextID += 1
            state.connections[id] = Connection(member: member, queue: queue, backlog: backlog, close: close)
            state.byMember[member, default: []].insert(id)
            if state.byMember[member]?.count == 1 { presence.sink.yield(.member(member)) }
            return (id, state.position)
        }
    }

    /// Removes a connection; its queue ends.
    func disconnect(_ id: Int) {
        let connection = state.withLock { state -> Connection? in
            guard let connection = state.connections.removeValue(forKey: id) else { return nil }
            state.byMember[connection.member]?.remove(id)
            if state.byMember[connection.member]?.isEmpty == true {
                state.byMember[connection.member] = nil
                presence.sink.yield(.member(connection.member))
            }
            return connection
        }
        connection?.queue.finish()
    }

    /// Whether `member` has a live connection to this server.
    func isOnline(_ member: String) -> Bool {
        state.withLock { $0.byMember[member] != nil }
    }

    /// Those of `members` with no live connection to any instance: not to this one, and no other says so in the
    /// presence rows. When the rows cannot be read, this process's connections alone count (logged).
    func offline(_ members: [String]) async -> [String] {
        let local = members.filter { !isOnline($0) }
        guard !local.isEmpty, let accounts else { return local }
        do {
            let elsewhere = try await accounts.onlineElsewhere(local, instance: instance)
            return local.filter { !elsewhere.contains($0) }
        } catch {
            logger.warning("presence: cannot read who is online on the other instances: \(error)")
            return local
        }
    }

    /// Waits until the feed is being followed, so that a connection made now misses nothing.
    func waitUntilStarted() async {
        while !state.withLock({ $0.started }) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Queues `event` for each connection of `members`; a connection whose queue is full, or whose unsent bytes
    /// would pass ``maxUnsentBytes``, is cut off. Returns the members that have no connection.
    @discardableResult
    private func hand(_ event: OutboundEvent, to members: some Sequence<String>, at position: Int64? = nil) -> [String] {
        let (overflowing, offline) = state.withLock { state -> ([Connection], [String]) in
            var overflowing: [Connection] = []
            var offline: [String] = []
            for member in members {
                guard let ids = state.byMember[member] else {
                    offline.append(member)
                    continue
                }
                for id in ids {
                    guard let connection = state.connections[id] else { continue }
                    let isOver = connection.backlog.add(event.bytes.count) > maxUnsentBytes
                    if isOver || { if case .dropped = connection.queue.yield(event) { true } else { false } }() {
                        overflowing.append(connection)
                        state.connections[id] = nil
                        state.byMember[member]?.remove(id)
                    }
                }
                if state.byMember[member]?.isEmpty == true {
                    state.byMember[member] = nil
                    presence.sink.yield(.member(member))
                }
            }
            if let position { state.position = max(state.position, position) }
            return (overflowing, offline)
        }
        for connection in overflowing {
            SecurityLog.event(
                logger, "slow-reader",
                ["member": connection.member, "reason": "its events were not read (at most \(queueLength) events, \(maxUnsentBytes) bytes wait)"])
            connection.queue.finish()
            connection.close()
        }
        return offline
    }

    /// Hands a message its flag keeps out of the store to the members' connections now, for a store that cannot
    /// publish it on its feed. Returns the members that have none.
    func deliverTransient(_ envelope: [UInt8], persistence: Persistence, conversation: String, to members: [String]) -> [String] {
        hand(OutboundEvent(position: nil, bytes: EventJSON.transient(envelope, persistence: persistence, conversation: conversation)), to: members)
    }

    // MARK: The feed

    /// Follows the store's change feed from its end, handing each change to the connections, until the task is
    /// cancelled or the service group stops. A store error is logged and the feed read again a second later,
    /// from the same position: nothing is skipped.
    func run() async throws {
        let first = state.withLock { state in
            defer { state.running = true }
            return !state.running
        }
        guard first else {
            logger.warning("events: the event feed runs already; a second copy of the server's services does nothing")
            try? await gracefulShutdown()
            return
        }
        let start = try await startPosition()
        state.withLock { state in
            state.position = start
            state.started = true
        }
        try await cancelWhenGracefulShutdown {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.follow(from: start) }
                if let accounts = self.accounts {
                    group.addTask { await self.keepPresence(accounts) }
                    group.addTask {
                        while !Task.isCancelled {
                            self.presence.sink.yield(.heartbeat)
                            try await Task.sleep(for: ServerAccounts.presenceHeartbeat)
                        }
                    }
                }
                _ = try await group.next()
                group.cancelAll()
            }
        }
        if let accounts { try? await accounts.withdrawPresence(instance: instance) }
    }

    /// Writes this instance's presence rows: a member's as its first connection opens or its last closes, all of
    /// them at each heartbeat; one write at a time, in order, each with the state of the moment.
    private func keepPresence(_ accounts: ServerAccounts) async {
        for await event in presence.stream {
            do {
                switch event {
                case .member(let member):
                    let count = state.withLock { $0.byMember[member]?.count ?? 0 }
                    try await accounts.setPresence(instance: instance, member: member, connections: count)
                case .heartbeat:
                    let members = state.withLock { $0.byMember.mapValues(\.count) }
                    try await accounts.writeHeartbeat(instance: instance, members: members)
                }
            } catch {
                // A write cut short by the server stopping is not a failure worth a warning.
                if Task.isCancelled { break }
                logger.warning("presence: cannot write who is connected here: \(error)")
            }
        }
    }

    /// The feed's last position now, asked again every second while the store does not answer.
    private func startPosition() async throws -> Int64 {
        while true {
            do {
                return try await store.lastChangePosition()
            } catch {
                // A read cut short by the server stopping (it could not listen, say) is not a failure of the store.
                try Task.checkCancellation()
                logger.error("events: cannot read the store's change feed: \(error)")
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Hands every change after `start` to the connections, until the task is cancelled.
    private func follow(from start: Int64) async throws {
        var position = start
        while !Task.isCancelled {
            do {
                for try await change in store.follow(after: position) {
                    await dispatch(change)
                    position = change.position
                }
                return
            } catch {
                // Stopping the server cancels the follower: not a failure of the feed.
                if Task.isCancelled { return }
                logger.error("events: the change feed stopped: \(error); reading again from \(position)")
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Hands one change to the connections it concerns.
    private func dispatch(_ change: StoreChange) async {
        if change.kind == .joined || change.kind == .left {
            _ = state.withLock { $0.members.removeValue(forKey: change.conversationID) }
        }
        do {
            // A message not kept goes to the members online now, live only: a resumed stream does not get it again
            // (a `status` is for who is online; a `none` waits in the accounts for who was not).
            if change.kind == .transient, let envelope = change.envelope, let persistence = change.persistence {
                let bytes = EventJSON.transient(envelope, persistence: persistence, conversation: change.conversationID)
                hand(OutboundEvent(position: change.position, bytes: bytes), to: Set(try await members(of: change.conversationID)), at: change.position)
                return
            }
            guard let (event, recipients) = try await event(for: change) else {
                state.withLock { $0.position = max($0.position, change.position) }
                return
            }
            var everyone = recipients
            // A member who left learns it too.
            if change.kind == .left, let member = change.memberID { everyone.append(member) }
            hand(event, to: Set(everyone), at: change.position)
        } catch {
            logger.error("events: cannot deliver change \(change.position): \(error)")
            state.withLock { $0.position = max($0.position, change.position) }
        }
    }

    /// The event for `change` and the members it goes to; `nil` for a change no client is told of.
    func event(for change: StoreChange) async throws -> (OutboundEvent, [String])? {
        let conversation = change.conversationID
        let bytes: [UInt8]
        switch change.kind {
        case .stored, .edited:
            guard let message = change.message else { return nil }
            bytes = EventJSON.message(change.kind == .stored ? .stored : .edited, position: change.position, message)
        case .deleted:
            guard let id = change.messageID else { return nil }
            bytes = EventJSON.deleted(position: change.position, conversation: conversation, id: id)
        case .read:
            guard let member = change.memberID, let id = change.messageID else { return nil }
            let read = try await store.readState(member: member, conversation: conversation)
            bytes = EventJSON.read(position: change.position, conversation: conversation, member: member, upTo: id, unreadCount: read.unreadCount)
            return (OutboundEvent(position: change.position, bytes: bytes), [member])
        case .joined, .left:
            guard let member = change.memberID else { return nil }
            bytes = EventJSON.membership(change.kind == .joined ? .joined : .left, position: change.position, conversation: conversation, member: member)
        default:
            return nil
        }
        return (OutboundEvent(position: change.position, bytes: bytes), try await members(of: conversation))
    }

    /// `conversation`'s members, from the cache or the store.
    func members(of conversation: String) async throws -> [String] {
        if let known = state.withLock({ $0.members[conversation] }) { return known }
        let members = try await store.members(ofConversation: conversation)
        state.withLock { state in
            // A bound on the cache: past it, start again.
            if state.members.count >= 10_000 { state.members.removeAll(keepingCapacity: true) }
            state.members[conversation] = members
        }
        return members
    }
}

/// One event on its way to a connection: its JSON, and its feed position when it has one.
struct OutboundEvent: Sendable {
    /// The change's position; `nil` for what the feed does not carry (a transient message, an answer).
    var position: Int64?
    var bytes: [UInt8]
}

/// A service that runs the hub's feed follower beside the HTTP server.
struct EventFeedService: Service {
    let hub: EventHub

    func run() async throws {
        try await hub.run()
    }
}

/// What one event-stream connection has queued and not yet written, in bytes, and since when the write in progress
/// has waited for the client: the two bounds on its memory (``ServerLimits/maxUnsentBytes``,
/// ``ServerLimits/stalledWriteTimeout``).
final class Backlog: Sendable {
    private let bytes = Atomic<Int>(0)
    private let since = Mutex<ContinuousClock.Instant?>(nil)

    /// Counts `count` more bytes queued; the total after.
    func add(_ count: Int) -> Int {
        bytes.wrappingAdd(count, ordering: .relaxed).newValue
    }

    /// Counts `count` bytes as written (or dropped).
    func remove(_ count: Int) {
        bytes.wrappingSubtract(count, ordering: .relaxed)
    }

    /// A write to the client begins.
    func startWriting() { since.withLock { $0 = .now } }

    /// The write ended.
    func endWriting() { since.withLock { $0 = nil } }

    /// When the write in progress began; `nil` when none is.
    var writingSince: ContinuousClock.Instant? { since.withLock { $0 } }
}
