extension MessageRegistry {
    /// The registry's async face: its calls that may cross to an isolated plugin's worker (decoding, actions,
    /// composing), for callers on Swift's concurrency pool, such as a server's request handlers.
    ///
    /// Each call suspends the calling task while the worker answers, instead of holding one of the pool's threads
    /// (one per core) for up to the call's deadline: `await registry.suspending.decode(envelope)`. The calls of one
    /// isolated plugin run one after the other on a queue of its own, as its worker takes them; those of different
    /// plugins run at once. In-process types answer at once, in the calling task.
    public var suspending: Suspending { Suspending(registry: self) }

    /// The registry's async face (``MessageRegistry/suspending``).
    public struct Suspending: Sendable {
        /// The registry the calls go to.
        public let registry: MessageRegistry
        /// Decodes an envelope's content, as ``MessageRegistry/decode(_:)`` does; when the content crosses to an isolated
        /// plugin's worker, the calling task is suspended while it answers.
        public func decode(_ envelope: Envelope) async -> Message {
            guard let plugin = registry.workerPlugin(decoding: envelope) else { return decodeInPlace(envelope) }
            return await plugin.suspending { registry.decode(envelope) }
        }

        /// Decodes many envelopes' contents, as ``MessageRegistry/decode(_:views:)`` does: in-process types at once, and
        /// each isolated plugin's messages in one batch to its worker, the batches of different plugins at the same time,
        /// while the calling task is suspended.
        ///
        /// - Parameters:
        ///   - envelopes: the envelopes, in any mix of types.
        ///   - views: whether the isolated plugins' views come back with the batch, for a host that draws every message
        ///     (so that drawing them crosses to no worker again).
        public func decode(_ envelopes: [Envelope], views: Bool = false) async -> [Message] {
            var inProcess: [Int] = []
            var batches: [ObjectIdentifier: (plugin: IsolatedPlugin, indices: [Int])] = [:]
            for (index, envelope) in envelopes.enumerated() {
                if let plugin = registry.workerPlugin(decoding: envelope) {
                    batches[ObjectIdentifier(plugin), default: (plugin, [])].indices.append(index)
                } else {
                    inProcess.append(index)
                }
            }
            guard !batches.isEmpty else { return decodeInPlace(envelopes, views: views) }
            var messages = [Message?](repeating: nil, count: envelopes.count)
            for (index, message) in zip(inProcess, decodeInPlace(inProcess.map { envelopes[$0] }, views: views)) { messages[index] = message }
            await withTaskGroup(of: [(Int, Message)].self) { group in
                for (plugin, indices) in batches.values {
                    let batch = indices.map { envelopes[$0] }
                    group.addTask { await plugin.suspending { Array(zip(indices, registry.decode(batch, views: views))) } }
                }
                for await decoded in group {
                    for (index, message) in decoded { messages[index] = message }
                }
            }
            return messages.map { $0! }
        }

        /// Performs a message action, as ``MessageRegistry/perform(_:on:arguments:)`` does; when the action runs in an
        /// isolated plugin's worker, the calling task is suspended while it answers.
        ///
        /// - Throws: the errors of ``MessageRegistry/perform(_:on:arguments:)``.
        public func perform(_ actionID: String, on message: Message, arguments: [ActionArgument] = []) async throws(MissiveError) -> ActionResult {
            guard let plugin = (message.content as? IsolatedContent)?.isolated else { return try performInPlace(actionID, on: message, arguments: arguments) }
            return try await plugin.suspending { Result { () throws(MissiveError) in try registry.perform(actionID, on: message, arguments: arguments) } }.get()
        }

        /// Runs a composer action and decodes the message it makes, as
        /// ``MessageRegistry/compose(action:arguments:conversationID:senderID:id:sentAt:parentID:viaContainer:)``
        /// does; when the action runs in an isolated plugin's worker, the calling task is suspended while it answers.
        ///
        /// - Throws: the errors of the synchronous call.
        public func compose(
            action actionID: String, arguments: [ActionArgument] = [], conversationID: String, senderID: String, id: String = MessageRegistry.newMessageID(),
            sentAt: Int64 = MessageRegistry.now(), parentID: String? = nil, viaContainer: Bool = false
        ) async throws(MissiveError) -> Message {
            @Sendable func compose() throws(MissiveError) -> Message {
                try registry.compose(
                    action: actionID, arguments: arguments, conversationID: conversationID, senderID: senderID, id: id, sentAt: sentAt, parentID: parentID,
                    viaContainer: viaContainer)
            }
            guard let index = registry.composerActionIndex[actionID], case .isolated(let plugin) = registry.registeredActions[index].source else { return try compose() }
            return try await plugin.suspending { Result { () throws(MissiveError) in try compose() } }.get()
        }

        // The synchronous calls of the registry, by names an async context cannot take for the async ones above.

        private func decodeInPlace(_ envelope: Envelope) -> Message { registry.decode(envelope) }

        private func decodeInPlace(_ envelopes: [Envelope], views: Bool) -> [Message] { registry.decode(envelopes, views: views) }

        private func performInPlace(_ actionID: String, on message: Message, arguments: [ActionArgument]) throws(MissiveError) -> ActionResult {
            try registry.perform(actionID, on: message, arguments: arguments)
        }
    }
}
