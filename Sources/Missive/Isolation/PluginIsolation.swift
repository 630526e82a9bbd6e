import CMissiveSandbox
import Foundation

/// Which plugins a host runs in a worker process of their own instead of its own process, and the limits those
/// workers run under (docs/PROTECTION.md, "Isolated plugins").
///
/// An isolated plugin is loaded by a worker process, one per plugin file, that answers the host over a socket.
/// Its crash, hang or forbidden system call costs the one message it was handling: the host starts a new worker,
/// answers that message with an ``UnknownMessage`` whose reason is ``UnknownMessage/Reason/pluginCrashed(_:)``,
/// and every other message as usual. The host's API does not change: the registry decodes, and gives digests,
/// push texts, words, views and actions, on an isolated plugin's messages as on any other.
///
/// Set it as ``PluginProtection/isolation``; the library's default is ``none`` (every plugin in process).
public struct PluginIsolation: Sendable {
    /// Which plugins run isolated.
    public enum Policy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Every plugin in the host's process: the fastest, and a crash ends the host.
        case inProcess = "in-process"
        /// Every plugin in a worker of its own.
        case isolated
        /// Plugins signed by a trusted key (``PluginTrustPolicy/trustedKeys``) in the host's process, every other in
        /// a worker of its own.
        case untrustedIsolated = "untrusted-isolated"

        public var description: String { rawValue }
    }

    /// Which plugins run isolated.
    public var policy: Policy
    /// The worker's executable and its first arguments; the plugin file and the worker's options are appended.
    /// `nil` when no worker executable was found: then an isolated plugin is refused with the reason, never loaded
    /// into the host instead.
    public var workerCommand: [String]?
    /// The most processor time one call (a message of a batch, an action) may take before its worker counts as hung
    /// and is killed, in seconds.
    public var callCPUSeconds: Double
    /// The most time one call may take by the clock, for a worker that waits without using the processor.
    public var callWallSeconds: Double
    /// The most processor time a worker may take to load its plugin (the library's initialisers, its entry, and one
    /// call of each kind on every example), in seconds; three times as long by the clock.
    public var loadCPUSeconds: Double
    /// The address space each worker may use (`RLIMIT_AS`), in bytes; 0 for no limit.
    public var memoryLimitBytes: UInt64
    /// Whether workers run under the seccomp filter (docs/PROTECTION.md lists what it allows).
    public var systemCallFilter: Bool
    /// How long the host and the worker look for the other's next frame without sleeping, in microseconds, before
    /// they block: a thread that sleeps is woken by another processor, which costs tens of microseconds on a virtual
    /// machine, while the next frame of a busy host usually comes within a few. Each wait that finds nothing in time
    /// burns this much processor time on each side; 0 never spins.
    public var spinMicroseconds: Int
    /// How many crashes within ``crashWindowSeconds`` take a plugin out of service (20 by default): its messages then
    /// decode as unknown (``UnknownMessage/Reason/pluginUnavailable(_:)``) for every member, and with a quarantine, it
    /// is quarantined for the next starts too. Whoever can send messages can send that many that crash it: `Int.max`
    /// keeps a plugin in service whatever it costs, each failure costing its message and a new worker.
    public var crashLimit: Int
    /// The window ``crashLimit`` counts in, in seconds.
    public var crashWindowSeconds: Double
    /// The walls around each worker besides its limits and its seccomp filter: by default new namespaces and a file
    /// system that holds only what the worker was handed (docs/PROTECTION.md, "The worker's own world").
    public var confinement: Confinement = .namespaces

    /// The walls a worker starts behind, besides its limits and its seccomp filter, which it has in every mode.
    public enum Confinement: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// New user, mount, PID, network, IPC, UTS and cgroup namespaces, in a file system that holds the worker
        /// executable, the shared libraries it and the plugin need (read-only), the plugin file, the files the plugin
        /// declares, `/dev/null`, `/dev/zero`, `/dev/urandom` and a `/proc` of its own, and nothing else. Where the kernel
        /// refuses namespaces, an isolated plugin is refused with the reason, never started with fewer walls.
        case namespaces
        /// As ``namespaces`` where the kernel allows them; where it refuses, workers start without them (the limits and
        /// the filter only) and the host says so when it starts them. An operator's explicit choice.
        case namespacesWhenAvailable = "namespaces-when-available"
        /// No namespaces: a worker sees the host's file system, processes and network as its user may, and only the
        /// limits and the filter hold it. For debugging, and for tests that show what the namespaces hold back.
        case none

        public var description: String { rawValue }
    }

    /// Isolation with this policy and these limits.
    public init(
        policy: Policy, workerCommand: [String]?, callCPUSeconds: Double = 2, callWallSeconds: Double = 10, loadCPUSeconds: Double = 10,
        memoryLimitBytes: UInt64 = 1 << 30, systemCallFilter: Bool = true, crashLimit: Int = 20, crashWindowSeconds: Double = 3600,
        spinMicroseconds: Int = 50
    ) {
        self.policy = policy
        self.workerCommand = workerCommand
        self.callCPUSeconds = callCPUSeconds
        self.callWallSeconds = callWallSeconds
        self.loadCPUSeconds = loadCPUSeconds
        self.memoryLimitBytes = memoryLimitBytes
        self.systemCallFilter = systemCallFilter
        self.crashLimit = max(1, crashLimit)
        self.crashWindowSeconds = crashWindowSeconds
        self.spinMicroseconds = max(0, spinMicroseconds)
    }

    /// Every plugin in process: the library's default.
    public static let none = PluginIsolation(policy: .inProcess, workerCommand: nil)

    /// The name of the worker executable for hosts built on the library.
    public static let workerExecutableName = "missive-plugin-worker"

    /// The worker command a host built on the library uses: `MISSIVE_PLUGIN_WORKER` if set, else
    /// ``workerExecutableName`` beside the running executable, else `nil`.
    public static func standardWorkerCommand(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String]? {
        if let setting = environment["MISSIVE_PLUGIN_WORKER"], !setting.isEmpty { return [setting] }
        guard let folder = PluginSearchPath.executableDirectory() else { return nil }
        let beside = folder + "/" + workerExecutableName
        return FileManager.default.isExecutableFile(atPath: beside) ? [beside] : nil
    }

    /// Isolation with `policy` and the standard worker command, with the limits' defaults, except where the
    /// environment sets them: `MISSIVE_WORKER_CPU_SECONDS` (``callCPUSeconds``), `MISSIVE_WORKER_LOAD_SECONDS`
    /// (``loadCPUSeconds``) and `MISSIVE_WORKER_MEMORY_MB` (``memoryLimitBytes``, in MiB), each a positive number, and
    /// `MISSIVE_WORKER_CONFINEMENT` (``confinement``, one of its raw values; another value is ignored).
    public static func standard(policy: Policy, environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginIsolation {
        var isolation = PluginIsolation(policy: policy, workerCommand: policy == .inProcess ? nil : standardWorkerCommand(environment: environment))
        func positive(_ name: String) -> Double? { environment[name].flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil } }
        if let seconds = positive("MISSIVE_WORKER_CPU_SECONDS") { isolation.callCPUSeconds = seconds }
        if let seconds = positive("MISSIVE_WORKER_LOAD_SECONDS") { isolation.loadCPUSeconds = seconds }
        if let megabytes = positive("MISSIVE_WORKER_MEMORY_MB") { isolation.memoryLimitBytes = UInt64(megabytes * 1_048_576) }
        if let setting = environment["MISSIVE_WORKER_CONFINEMENT"], let confinement = Confinement(rawValue: setting) { isolation.confinement = confinement }
        return isolation
    }

    /// Why the kernel refuses this process the namespaces a confined worker starts in, or `nil` when it allows them.
    /// Asked once per process (one short-lived child).
    public static var namespaceRefusal: String? { namespaceProbe.value }

    private static let namespaceProbe = LazyProbe {
        let status = missive_sandbox_probe_namespaces()
        return status == 0 ? nil : "the kernel refuses new user, mount, PID and network namespaces to this process (\(String(cString: strerror(status))))"
    }

    /// The confinement workers get on this machine under ``confinement``: ``Confinement/namespaces`` or
    /// ``Confinement/none``.
    public var effectiveConfinement: Confinement {
        switch confinement {
        case .none: .none
        case .namespaces: .namespaces
        case .namespacesWhenAvailable: Self.namespaceRefusal == nil ? .namespaces : .none
        }
    }

    /// The refusal of an isolated plugin on a kernel without namespaces, with what an operator can change.
    static func refusalAdvice(_ refusal: String) -> String {
        "the plugin is to run isolated in namespaces of its own, but \(refusal); it is not started with fewer walls. Allow unprivileged "
            + "user namespaces (sysctl user.max_user_namespaces above 0, kernel.unprivileged_userns_clone=1 where it exists, "
            + "kernel.apparmor_restrict_unprivileged_userns=0, or a container started with a seccomp profile that allows clone "
            + "with CLONE_NEWUSER), or accept workers without namespaces: --worker-confinement namespaces-when-available "
            + "(MISSIVE_WORKER_CONFINEMENT)"
    }

    /// What every report of a call the worker's seccomp filter stopped says, before the call's name.
    package static let forbiddenCallPhrase = "the seccomp filter stopped it"

    /// The worker's arguments after the plugin file.
    var workerArguments: [String] {
        var arguments = ["--memory", String(memoryLimitBytes), "--spin", String(spinMicroseconds)]
        if !systemCallFilter { arguments.append("--no-filter") }
        return arguments
    }

    /// Whether the plugin at `file` runs isolated, given whether it is signed by a trusted key.
    func isolates(trusted: Bool) -> Bool {
        switch policy {
        case .inProcess: false
        case .isolated: true
        case .untrustedIsolated: !trusted
        }
    }
}

extension MessageRegistry.Builder {
    /// Registers the plugin file at `path` to run isolated under `settings`, once its worker has loaded it: the
    /// refusals, the worker's failure to load it included. For the conformance suite's `isolation.worker` check.
    package mutating func registerIsolated(file path: String, settings: PluginIsolation) -> [MissiveError] {
        var attempts: [String] = []
        return registerIsolated(file: path, settings: settings, attempts: &attempts)
    }

    /// ``registerIsolated(file:settings:)``, with the paths outside its view that the plugin tried to open while it
    /// loaded in a confined worker in `attempts` (followed by `and N more` when more were tried than kept).
    package mutating func registerIsolated(file path: String, settings: PluginIsolation, attempts: inout [String]) -> [MissiveError] {
        do throws(MissiveError) {
            let metadata = try PluginMetadata.read(fromFile: path)
            try PluginLoader.checkSupported(metadata, path: path, logger: nil)
            let plugin = IsolatedPlugin(path: path, identity: FileIdentity.of(path), metadata: metadata, settings: settings, quarantine: nil, logger: nil)
            let ready = try plugin.ready().get()
            attempts = ready.attempts + (ready.attemptsNotKept > 0 ? ["and \(ready.attemptsNotKept) more"] : [])
            return register(plugin, ready: ready)
        } catch {
            return [error]
        }
    }
}

extension MessageRegistry {
    /// The memory of each isolated plugin's running worker, in bytes: its resident set, and its proportional share
    /// (shared pages divided among the processes that map them). For the benchmarks.
    @_spi(Benchmarks)
    public var isolatedWorkerMemory: [(resident: Int, proportional: Int)] {
        var seen = Set<ObjectIdentifier>()
        var sizes: [(resident: Int, proportional: Int)] = []
        for type in types {
            guard case .isolated(let plugin) = type.decoder, seen.insert(ObjectIdentifier(plugin)).inserted, let memory = plugin.workerMemory else { continue }
            sizes.append(memory)
        }
        return sizes
    }
}

/// A value worked out once, on first use, by any thread.
final class LazyProbe<Value: Sendable>: Sendable {
    /// Empty until the value is made, then the value alone.
    private let state: Locked<[Value]> = Locked([])
    private let make: @Sendable () -> Value

    init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
    }

    var value: Value {
        state.withLock { state in
            if let known = state.first { return known }
            let made = make()
            state = [made]
            return made
        }
    }
}
