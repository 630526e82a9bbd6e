import Missive
import NIOPosix

/// Runs the registry's calls that may block (decodes, renders and actions) off Swift's concurrency pool, when the
/// server has isolated plugins.
///
/// An isolated plugin's call waits for its worker's answer over a socket, up to the call's deadline (10 s by the
/// clock by default, and a message that failed is tried once more on a new worker). The concurrency pool has one
/// thread per core: a few messages that hang their plugins would hold every one of them, and every member's requests
/// would wait, those that touch no plugin included. So with any isolated plugin, these calls run on a pool of
/// threads of their own (``threadCount``), shared by every server in the process; a call beyond them waits for one
/// to be free, and requests that call no plugin go on. In-process plugins answer in microseconds and run in place.
struct PluginCalls: Sendable {
    /// How many plugin calls may wait on workers at once in a process.
    static let threadCount = 16

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threadCount)
        pool.start()
        return pool
    }()

    private let offloads: Bool

    /// Calls for `registry`: on the pool when it runs isolated plugins, in place otherwise.
    init(registry: MessageRegistry) {
        offloads = registry.runsIsolatedPlugins
    }

    /// The result of `body`, run on the pool when the registry runs isolated plugins and the call may reach one
    /// (`reachesWorker`: for one message, whether its type is an isolated plugin's).
    func run<T: Sendable>(reachesWorker: Bool = true, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard offloads, reachesWorker else { return try body() }
        return try await Self.pool.runIfActive(body)
    }
}
