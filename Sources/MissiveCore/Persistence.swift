/// How a message is kept and counted, with the numeric values that the established chat SDKs use,
/// so that envelopes interoperate.
///
/// Each case stands for one `MISSIVE_PERSISTENCE_*` constant of the C ABI.
public enum Persistence: UInt32, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not stored locally (`MISSIVE_PERSISTENCE_NONE`, 0).
    case none = 0
    /// Stored, not counted as unread (`MISSIVE_PERSISTENCE_PERSISTED`, 1).
    case persisted = 1
    /// Stored and counted as unread (`MISSIVE_PERSISTENCE_COUNTED`, 3).
    case counted = 3
    /// Transient: never stored and never pushed (`MISSIVE_PERSISTENCE_STATUS`, 16).
    case status = 16

    /// The lowercase name used in the CLI and the JSON output: `none`, `persisted`, `counted` or `status`.
    public var name: String {
        switch self {
        case .none: "none"
        case .persisted: "persisted"
        case .counted: "counted"
        case .status: "status"
        }
    }

    /// Whether a message with this flag is written to the local store.
    public var isStored: Bool { self == .persisted || self == .counted }

    /// Whether a message with this flag counts towards the unread total.
    public var countsAsUnread: Bool { self == .counted }

    /// Whether a message with this flag may be pushed.
    public var isPushed: Bool { self != .status }

    public var description: String { "\(name) (\(rawValue))" }
}
