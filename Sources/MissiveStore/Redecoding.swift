import Missive

/// The rule of `redecode(with:progress:)` that both stores follow, and its plugin calls made outside any transaction.
///
/// A re-decode reads the messages the store keeps as unknown, decodes them again with the registry while no
/// transaction is open (a plugin may take its whole deadline on one), then rewrites them in one transaction, where
/// each is taken only if it is still the message that was decoded (the same envelope, still unknown): a message
/// edited, deleted or decoded by someone else in between is left as it is now, and one stored since is left for
/// the next re-decode.
package struct Redecoding: Sendable {
    /// The new decode of each message that was unknown when the re-decode began, by id, with the envelope it came
    /// from.
    private let decoded: [String: (envelope: [UInt8], message: Message)]
    /// For whom a message counts as unread (a personal store's owner; `nil` for a shared store's members).
    private let reader: String?
    private var reports: [String: RedecodeReport.TypeReport] = [:]

    /// How many messages a batch of the registry's decode holds: progress is reported after each.
    static let batchSize = 256

    /// Decodes `unknown` (the messages the store keeps as unknown) with `registry`, in batches, reporting progress
    /// as each batch is decoded.
    package static func decode(
        _ unknown: [StoredMessage], with registry: MessageRegistry, reader: String?, progress: (@Sendable (Int, Int) -> Void)?
    ) async throws(StoreError) -> Redecoding {
        var decoded: [String: (envelope: [UInt8], message: Message)] = [:]
        var start = 0
        while start < unknown.count {
            let batch = unknown[start..<min(start + batchSize, unknown.count)]
            var envelopes: [Envelope] = []
            for stored in batch { envelopes.append(try stored.envelope()) }
            let messages = await registry.suspending.decode(envelopes)
            for (stored, message) in zip(batch, messages) { decoded[stored.id] = (stored.envelopeBytes, message) }
            start += batch.count
            progress?(start, unknown.count)
        }
        return Redecoding(decoded: decoded, reader: reader)
    }

    /// The new decode of `current`, the row as the transaction reads it now: `nil` when it is not the message that
    /// was decoded (stored since, or changed since).
    package func message(for current: StoredMessage) -> Message? {
        guard !current.isKnown, let entry = decoded[current.id], entry.envelope == current.envelopeBytes else { return nil }
        return entry.message
    }

    /// Counts `old`'s new decode in the report, and says whether the change feed gets an `edited` change for it: a
    /// message that still fails may fail otherwise now (a type that refuses it instead of none), which changes its
    /// reason, digest and flag.
    package mutating func record(_ old: StoredMessage, as message: Message) -> Bool {
        var report = reports[old.objectName] ?? .init(objectName: old.objectName, decoded: 0, stillUnknown: 0, reason: nil, unreadChanged: 0)
        defer { reports[old.objectName] = report }
        let reason = message.unknown.map { "\($0.reason)" }
        if message.isKnown {
            report.decoded += 1
        } else {
            report.stillUnknown += 1
            report.reason = reason
        }
        // Whether it counts for the reader (for a shared store: for the members but its sender).
        if (message.persistence == .counted && old.senderID != reader) != old.countsAsUnread { report.unreadChanged += 1 }
        return message.isKnown || reason != old.reason || message.digest != old.digest || message.persistence != old.persistence
            || message.content.objectName != old.objectName
    }

    /// The report, one entry per objectName, sorted.
    package var report: RedecodeReport {
        RedecodeReport(types: reports.values.sorted { $0.objectName < $1.objectName })
    }
}
