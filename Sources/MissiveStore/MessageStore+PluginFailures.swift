import Missive

/// The memory of messages that isolated plugins failed on, kept in the store (``MessageStore/recordPluginFailures(_:)``)
/// so that it outlives a process and is shared by every process on the store.
extension MessageStore {
    /// Keeps nothing: a store without a table of plugin failures.
    public func recordPluginFailures(_ failures: [PluginFailure]) async throws(StoreError) {
        guard !failures.isEmpty else { return }
        throw StoreError(.unsupported, "this store keeps no plugin failures", path: location)
    }

    /// None: a store without a table of plugin failures.
    public func pluginFailures() async throws(StoreError) -> [PluginFailure] { [] }

    /// Nothing to forget: a store without a table of plugin failures.
    @discardableResult
    public func forgetPluginFailures(pluginSHA256s: Set<String>?) async throws(StoreError) -> Int { 0 }

    /// Fills every memory of failures that `registry`'s isolated plugins use (`MessageRegistry.pluginFailureMemories`)
    /// with the store's, in place of what they held (failures not saved yet stay): call it before decoding, and again
    /// from time to time to see the failures that other processes on the store met, and forget those forgotten.
    public func loadPluginFailures(into registry: MessageRegistry) async throws(StoreError) {
        let memories = registry.pluginFailureMemories
        guard !memories.isEmpty else { return }
        let failures = try await pluginFailures()
        for memory in memories { memory.reload(failures) }
    }

    /// Writes the failures that `registry`'s isolated plugins met since the last save
    /// (`PluginFailureMemory.unsavedFailures`) to the store.
    ///
    /// - Returns: how many were written.
    @discardableResult
    public func savePluginFailures(of registry: MessageRegistry) async throws(StoreError) -> Int {
        var written = 0
        for memory in registry.pluginFailureMemories {
            let failures = memory.unsavedFailures
            guard !failures.isEmpty else { continue }
            try await recordPluginFailures(failures)
            memory.markSaved(failures)
            written += failures.count
        }
        return written
    }
}
