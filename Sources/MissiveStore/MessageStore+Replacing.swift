import Missive

/// The lock of ``MessageStore/replace(messageID:with:)``'s default, for the whole process, keyed by the store's
/// location and the message's id.
private let replacements = KeyedLock<String>()

extension MessageStore {
    /// Reads the message, transforms it and replaces it, with its id held in a lock of this process: atomic among
    /// the callers of one process only (two processes on one database may lose an update). A store shared by
    /// several processes implements the requirement in its database.
    @discardableResult
    public func replace(messageID: String, with transform: @escaping @Sendable (StoredMessage) throws -> IncomingMessage) async throws -> StoredMessage {
        try await replacements.withLock(location + "\u{0}" + messageID) {
            guard let stored = try await message(id: messageID) else {
                throw StoreError(.notFound, "message '\(messageID)' is not stored", path: location)
            }
            let incoming = try transform(stored)
            if let conflict = StoreRows.idConflict(replacing: stored, with: incoming.message) { throw conflict }
            return try await replace(incoming)
        }
    }
}

extension StoreRows {
    /// The error for a new version of `stored` under another id, or `nil`.
    package static func idConflict(replacing stored: StoredMessage, with message: Message) -> StoreError? {
        guard message.envelope.id != stored.id else { return nil }
        return StoreError(.conflict, "message '\(stored.id)': its new version has the id '\(message.envelope.id)'")
    }
}
