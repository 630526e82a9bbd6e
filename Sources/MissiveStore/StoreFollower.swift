/// Follows a store's change feed from a position: every change after it, in order, each once, waiting for new
/// ones when it has caught up. It ends only when the task that iterates it is cancelled, or with the store's
/// error.
///
/// A follower keeps the ``StoreChange/position`` of the last change it handled (in its own storage) and starts
/// again from there: nothing is missed across a restart, because the feed is read from the store, and the
/// store's wake-ups (``MessageStore/waitForChanges(after:timeout:)``) only shorten the wait.
public struct StoreFollower: AsyncSequence, Sendable {
    /// Each element is one change.
    public typealias Element = StoreChange

    private let store: any MessageStore
    private let position: Int64
    private let batchSize: Int
    private let pollInterval: Duration

    /// A follower of `store`'s changes after `position`.
    ///
    /// - Parameters:
    ///   - store: the store whose feed to read.
    ///   - position: the position of the last change already handled; 0 for the first change on.
    ///   - batchSize: how many changes one read of the feed brings.
    ///   - pollInterval: the longest wait between two reads when no wake-up comes.
    public init(store: any MessageStore, after position: Int64, batchSize: Int = 500, pollInterval: Duration = .seconds(1)) {
        self.store = store
        self.position = position
        self.batchSize = Swift.max(1, batchSize)
        self.pollInterval = pollInterval
    }

    /// Reads the feed in batches.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let store: any MessageStore
        var position: Int64
        let batchSize: Int
        let pollInterval: Duration
        var buffered: [StoreChange] = []
        var index = 0

        /// The next change, waiting for one when the follower has caught up; `nil` when the task is cancelled.
        public mutating func next() async throws(StoreError) -> StoreChange? {
            while index == buffered.count {
                if Task.isCancelled { return nil }
                buffered = try await store.changes(after: position, limit: batchSize)
                index = 0
                if buffered.isEmpty { try await store.waitForChanges(after: position, timeout: pollInterval) }
            }
            defer { index += 1 }
            position = buffered[index].position
            return buffered[index]
        }
    }

    /// An iterator that starts after the follower's position.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, position: position, batchSize: batchSize, pollInterval: pollInterval)
    }
}

extension MessageStore {
    /// Follows this store's changes after `position`; see ``StoreFollower``.
    public func follow(after position: Int64) -> StoreFollower {
        StoreFollower(store: self, after: position)
    }
}
