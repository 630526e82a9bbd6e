import CMissiveSandbox
import Foundation

/// Keeps a host's memory, environment and descriptors from the other processes of its own user
/// (docs/PROTECTION.md, "The host's own process").
///
/// A process of the same user may read another's `/proc/PID/mem`, `environ`, `maps`, `cmdline`-adjacent state and
/// descriptors, and trace it, unless that process is marked not dumpable (`prctl(PR_SET_DUMPABLE, 0)`), as an SSH key
/// agent marks itself. A host that holds members' tokens or loads plugins should be: a plugin that escaped its worker,
/// or any other program the same user runs, then cannot read them. The cost: the process writes no core file when it
/// crashes, and a debugger or profiler of the same user cannot attach without privilege.
public enum ProcessPrivacy {
    /// The environment variable that keeps the process dumpable, for debugging: `1` keeps it so.
    public static let dumpableVariable = "MISSIVE_DUMPABLE"

    /// Marks the calling process not dumpable, unless `environment` sets ``dumpableVariable`` to `1`. Returns whether
    /// the process is now closed to its user's other processes. Call it first thing in `main`, before the process
    /// reads a secret: what another process read before cannot be taken back.
    @discardableResult
    public static func closeToOtherProcesses(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if environment[dumpableVariable] == "1" { return false }
        return missive_sandbox_set_dumpable(0) == 0
    }

    /// Whether the calling process is dumpable (readable and traceable by its user's other processes).
    public static var isDumpable: Bool { missive_sandbox_is_dumpable() != 0 }
}
