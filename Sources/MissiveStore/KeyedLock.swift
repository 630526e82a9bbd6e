/// An async lock per key: work under one key runs one at a time, in the order it came, while work under other
/// keys goes on. A key's entry exists only while someone holds it or waits for it, so the lock holds as many
/// entries as keys in use, never more.
///
/// It serializes within one process only: two processes on one database need a guard in the database
/// (``MessageStore/replace(messageID:with:)`` is one).
package actor KeyedLock<Key: Hashable & Sendable> {
    /// For each key held, the work waiting for it, oldest first.
    private var waiting: [Key: [CheckedContinuation<Void, Never>]] = [:]

    /// A lock with no key held.
    package init() {}

    /// How many keys are held now: 0 once every holder has left.
    package var heldKeys: Int { waiting.count }

    /// Waits until `key` is free, then holds it.
    package func lock(_ key: Key) async {
        guard waiting[key] != nil else {
            waiting[key] = []
            return
        }
        await withCheckedContinuation { waiting[key, default: []].append($0) }
    }

    /// Hands `key` to the oldest waiter, or frees it and forgets it.
    package func unlock(_ key: Key) {
        guard var queue = waiting[key] else { return }
        if queue.isEmpty {
            waiting[key] = nil
        } else {
            let next = queue.removeFirst()
            waiting[key] = queue
            next.resume()
        }
    }

    /// Runs `body` holding `key`, and frees the key however `body` ends.
    package nonisolated func withLock<T: Sendable>(_ key: Key, _ body: () async throws -> T) async throws -> T {
        await lock(key)
        do {
            let value = try await body()
            await unlock(key)
            return value
        } catch {
            await unlock(key)
            throw error
        }
    }
}
