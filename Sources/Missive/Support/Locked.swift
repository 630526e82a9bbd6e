import Foundation

/// A value that threads share, reached only under a lock: the package's replacement for
/// `Synchronization.Mutex`, with the same `withLock`.
///
/// On Linux, `Mutex` locks with atomics and futex system calls inside the Swift runtime, which
/// ThreadSanitizer does not instrument. It sees no lock, so every `withLock` from two threads is reported
/// as a race: a host run under `--sanitize=thread` got such reports from the loader's probe cache (a
/// 15-line program with one `Mutex` and four threads gets the same). A suppression can name the global
/// a lock lives in, but not the heap storage of the value it guards, whose races are reported in the
/// callers' closures. This lock is `NSLock`, a `pthread_mutex_t` underneath, whose calls the sanitizer
/// intercepts, so it sees each lock and unlock and checks the guarded value like any other. See
/// docs/SANITIZERS.md.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Guards `value`, which no one else holds.
    package init(_ value: sending Value) {
        self.value = value
    }

    /// Runs `body` on the value while holding the lock. `body` must not call `withLock` on the same value.
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
