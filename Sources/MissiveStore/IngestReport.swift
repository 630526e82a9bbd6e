import Missive

/// What ``MessageStore/ingest(_:)`` did with each message.
public struct IngestReport: Sendable, Hashable {
    /// What happened to one message.
    public enum Outcome: Sendable, Hashable {
        /// It was stored.
        case stored
        /// A message with its id was already stored; nothing changed.
        case duplicate
        /// Its persistence flag (`none` or `status`) says not to store it; the caller may still show it.
        case notStored(Persistence)
        /// The store cannot keep it as it is, for the reason given: an id, conversation, sender, objectName
        /// or parent id holding U+0000, which SQLite's text ends at (it would be stored cut short).
        case refused(String)
    }

    /// One outcome per message given, in order.
    public var outcomes: [Outcome]

    /// Creates a report.
    public init(outcomes: [Outcome]) {
        self.outcomes = outcomes
    }

    /// How many messages were stored.
    public var storedCount: Int { outcomes.count { $0 == .stored } }
    /// How many were already stored.
    public var duplicateCount: Int { outcomes.count { $0 == .duplicate } }
    /// How many were refused.
    public var refusedCount: Int { outcomes.count { if case .refused = $0 { true } else { false } } }
    /// How many were not stored because of their flag.
    public var notStoredCount: Int { outcomes.count { if case .notStored = $0 { true } else { false } } }
}
