import CMissiveGuard
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the host depends on in its process, taken before plugin code runs and compared after it.
///
/// A plugin runs in the host's process and can change what every other part of it relies on: the standard
/// streams (descriptors 0, 1 and 2), the working directory, the handlers of the fatal signals the crash guard
/// records, the locale (`LC_ALL`) and the umask. The loader takes a state before a plugin's initialisers run
/// and compares it after its entry returned; each type takes one before the first call of each kind (decode,
/// encode, digest, ...) and compares it after. What changed is put back (see `missive_guard_state_restore`),
/// and the plugin is refused with ``MissiveError/Code/changedProcessState``: at load, by
/// ``PluginLoader/load(_:logger:)``; after a call, by every later decode of the plugin's types (see
/// ``ProcessWatch``).
///
/// The code between a state and its comparison runs under one process-wide lock (``exclusively(_:)``), so
/// that what one plugin changes is not blamed on another that loads or makes a first call at the same time.
/// Only loads and first calls take it, and none waits for it longer than ``lockPatience``: a plugin that hangs
/// in its load or first call holds it for ever, and the others then go on without it (compared all the same).
final class ProcessState {
    private var state: OpaquePointer?

    private static let lock = NSLock()

    /// How long a load or a first call waits for another's comparison to end before it goes on without the lock.
    static let lockPatience: TimeInterval = 0.1

    /// Runs `body`, which takes a state, runs plugin code and compares, while no other such code runs (unless
    /// one has held the lock for longer than ``lockPatience``).
    static func exclusively<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let locked = lock.lock(before: Date(timeIntervalSinceNow: lockPatience))
        defer { if locked { lock.unlock() } }
        return try body()
    }

    /// The state now.
    init() {
        state = missive_guard_state_take()
    }

    /// A state never compared is freed without putting anything back: the code it was taken for did not run
    /// (another thread loaded the library first).
    deinit {
        if let state { missive_guard_state_free(state) }
    }

    /// Compares the process with the state taken, puts back what changed and returns it, or `nil` when
    /// nothing did. A state is compared once: later calls return `nil`.
    func restore() -> ProcessStateChange? {
        guard let state else { return nil }
        self.state = nil
        let bits = missive_guard_state_restore(state)
        return bits == 0 ? nil : ProcessStateChange(bits: bits)
    }
}

/// What plugin code changed in the process, as the crash guard's state bits; put back already.
package struct ProcessStateChange: Sendable, Hashable, CustomStringConvertible {
    /// The `MISSIVE_STATE_*` bits.
    let bits: UInt32

    /// The changes in words, each naming what it changed: `closed standard output (fd 1)`,
    /// `changed the working directory`, `replaced the handler of SIGSEGV and SIGABRT`, ...
    package var changes: [String] {
        var changes: [String] = []
        for (fd, name) in [(0, "standard input"), (1, "standard output"), (2, "standard error")] where bits & (MISSIVE_STATE_FD0 << fd) != 0 {
            let closed = bits & (MISSIVE_STATE_CLOSED0 << fd) != 0
            changes.append("\(closed ? "closed" : "replaced or changed the flags of") \(name) (fd \(fd))")
        }
        if bits & MISSIVE_STATE_DIRECTORY != 0 { changes.append("changed the working directory") }
        let signals = (0..<missive_guard_signal_count()).filter { bits & (MISSIVE_STATE_SIGNAL0 << UInt32($0)) != 0 }
        if !signals.isEmpty {
            let names = signals.map { PluginQuarantine.signalName(missive_guard_signal_at($0)).split(separator: " ").first.map(String.init) ?? "" }
            changes.append("replaced the handler of \(names.joined(separator: ", "))")
        }
        if bits & MISSIVE_STATE_LOCALE != 0 { changes.append("changed the locale (LC_ALL)") }
        if bits & MISSIVE_STATE_UMASK != 0 { changes.append("changed the umask") }
        return changes
    }

    /// Whether all of it was put back.
    package var isRestored: Bool { bits & MISSIVE_STATE_NOT_RESTORED == 0 }

    /// `closed standard output (fd 1), changed the working directory and changed the umask`.
    package var description: String {
        let changes = changes
        guard changes.count > 1 else { return changes.first ?? "changed nothing" }
        return changes.dropLast().joined(separator: ", ") + " and " + changes[changes.count - 1]
    }
}

/// Whether a plugin changed the process state after a call, shared by the plugin's types: once one of them
/// did, every later decode of any of them is refused with the reason (contents decoded before keep working).
package final class ProcessWatch: Sendable {
    private let refused = Atomic<Bool>(false)
    private let reason = Locked<MissiveError?>(nil)

    /// A watch on which nothing was seen.
    init() {}

    /// Why the plugin's types are refused, or `nil` while they are not; one atomic load when they are not.
    package var refusal: MissiveError? {
        guard refused.load(ordering: .acquiring) else { return nil }
        return reason.withLock { $0 }
    }

    /// Refuses the plugin's types from now on, for `change` made by the first `operation` of `objectName`.
    func refuse(_ change: ProcessStateChange, operation: CrashGuard.Operation, path: String, objectName: String) {
        reason.withLock { reason in
            guard reason == nil else { return }
            reason = MissiveError(
                .changedProcessState,
                "the plugin's first \(operation.name) of \(objectName) \(change)\(change.isRestored ? "" : ", which could not all be put back"); "
                    + "the host put it back and refuses the plugin's types from then on",
                file: path, objectName: objectName)
        }
        refused.store(true, ordering: .releasing)
    }
}
