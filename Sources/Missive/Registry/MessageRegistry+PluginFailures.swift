extension MessageRegistry {
    /// The memories of failed messages that the registry's isolated plugins answer from and record into
    /// (``PluginFailureMemory``): one per discovery that found isolated plugins (or the one
    /// ``PluginProtection/failureMemory`` gave), each listed once; empty when no plugin runs isolated.
    ///
    /// A host that keeps a store fills each from it before decoding and writes back what each records, so that a
    /// failure outlives the process and reaches the other processes on the store (`MessageStore`'s
    /// `loadPluginFailures(into:)` and `savePluginFailures(of:)` do both).
    public var pluginFailureMemories: [PluginFailureMemory] {
        var seen = Set<ObjectIdentifier>()
        var memories: [PluginFailureMemory] = []
        for type in types {
            guard case .isolated(let plugin) = type.decoder, seen.insert(ObjectIdentifier(plugin.failures)).inserted else { continue }
            memories.append(plugin.failures)
        }
        return memories
    }
}
