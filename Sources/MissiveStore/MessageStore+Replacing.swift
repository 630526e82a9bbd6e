import Missive

/// The lock of ``MessageStore/replace(messageID:with:)``'s default, for the whole process, keyed by the store's
/// location and the message's id.
private let replacements = KeyedLock<String>()

/// What ``MessageStore/replace(_:ifUnchangedSince:)`` throws inside the store's step to write nothing.
private struct ChangedSinceRead: Error {}

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
            if let conflict = StoreRules.idConflict(replacing: stored, with: incoming.message) { throw conflict }
            return try await replace(incoming)
        }
    }
}

extension MessageStore {
    /// Replaces the message `read` with `incoming`, its new version, only if the stored message is still the one
    /// read (the same envelope, byte for byte): a compare-and-swap, for a new version computed outside the store
    /// (by a plugin's action, which may take seconds and should not run inside a transaction).
    ///
    /// The comparison and the replacement are one atomic step of ``replace(messageID:with:)``: in the database for
    /// ``SQLiteMessageStore`` and the PostgreSQL store, so that an update by another process on the same database in
    /// between is seen. The caller reads again and computes the version again when it gets `nil`.
    ///
    /// - Returns: the message as stored now, or `nil` when it changed since it was read (nothing was written).
    /// - Throws: the errors of ``replace(messageID:with:)`` (``StoreError/Code/notFound`` when it was deleted).
    public func replace(_ incoming: IncomingMessage, ifUnchangedSince read: StoredMessage) async throws -> StoredMessage? {
        do {
            return try await replace(messageID: read.id) { current in
                guard current.envelopeBytes == read.envelopeBytes else { throw ChangedSinceRead() }
                return incoming
            }
        } catch is ChangedSinceRead {
            return nil
        }
    }
}

extension StoreRules {
    /// The error for a new version of `stored` under another id, or `nil`.
    package static func idConflict(replacing stored: StoredMessage, with message: Message) -> StoreError? {
        guard message.envelope.id != stored.id else { return nil }
        return StoreError(.conflict, "message '\(stored.id)': its new version has the id '\(message.envelope.id)'")
    }
}
