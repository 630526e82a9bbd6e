import Logging
import Missive
import MissiveStore
import ServiceLifecycle

/// Keeps the memory of messages that isolated plugins failed on (`PluginFailureMemory`) in step with the store, so
/// that each such message costs its plugin's deadline once for every server on the store and across restarts.
///
/// ``ChatServer/open(configuration:registry:logger:)`` fills the registry's memories from the store. Then, while the
/// server runs, this service writes the failures met since (every ``saveInterval``) and reads the store's again
/// (every ``reloadInterval``): failures other servers met are seen, and those an operator forgot
/// (`missive store redecode`) are tried again. The last failures are written when the server stops.
struct PluginFailureService: Service {
    /// How often the failures met are written to the store.
    static let saveInterval: Duration = .milliseconds(500)
    /// How often the store's failures are read again.
    static let reloadInterval: Duration = .seconds(30)

    let registry: MessageRegistry
    let store: any MessageStore
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            let clock = ContinuousClock()
            var nextReload = clock.now + Self.reloadInterval
            while true {
                try await Task.sleep(for: Self.saveInterval)
                await save()
                guard clock.now >= nextReload else { continue }
                nextReload = clock.now + Self.reloadInterval
                do throws(StoreError) {
                    try await store.loadPluginFailures(into: registry)
                } catch {
                    logger.warning("cannot read the plugin failures the store keeps: \(error.message)")
                }
            }
        }
        // The failures of the last requests, in a task of its own: this one may be cancelled.
        await Task { [self] in await save() }.value
    }

    /// Writes the failures met since the last save.
    private func save() async {
        do throws(StoreError) {
            try await store.savePluginFailures(of: registry)
        } catch {
            logger.warning("cannot keep the messages isolated plugins failed on in the store; they are tried again after a restart: \(error.message)")
        }
    }
}
