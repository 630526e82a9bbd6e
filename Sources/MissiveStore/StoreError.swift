/// An error from a ``MessageStore``: what went wrong, and with which message, conversation or file.
///
/// ``code`` can grow new values without breaking callers; ``message`` is a reason for people.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an error is. New codes may be added at any time; don't switch exhaustively.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case cannotOpen = "cannot-open"
            case database = "database"
            case notFound = "not-found"
            case hasReplies = "has-replies"
            case malformedQuery = "malformed-query"
            case ownerMismatch = "owner-mismatch"
            case malformedEnvelope = "malformed-envelope"
            case notAMember = "not-a-member"
            case memberRequired = "member-required"
            case conflict = "conflict"
            case kindMismatch = "kind-mismatch"
            case newerSchema = "newer-schema"
            case unavailable = "unavailable"
            case timeout = "timeout"
            case unsupported = "unsupported"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The database file cannot be opened or created, or is not a store of this kind.
        public static let cannotOpen = Code(.cannotOpen)
        /// The database reported an error (full disk, I/O, corruption, a lock held too long).
        public static let database = Code(.database)
        /// The message or conversation named is not stored.
        public static let notFound = Code(.notFound)
        /// A message with replies cannot be deleted until its replies are.
        public static let hasReplies = Code(.hasReplies)
        /// A search query has no words or an unbalanced quote.
        public static let malformedQuery = Code(.malformedQuery)
        /// The store belongs to another account than the one named.
        public static let ownerMismatch = Code(.ownerMismatch)
        /// A stored envelope cannot be read back.
        public static let malformedEnvelope = Code(.malformedEnvelope)
        /// The member named does not belong to the conversation.
        public static let notAMember = Code(.notAMember)
        /// A shared store was asked for the one-account API, which needs a member to act for.
        public static let memberRequired = Code(.memberRequired)
        /// A write contradicts what is stored: an edit that names another conversation or sender.
        public static let conflict = Code(.conflict)
        /// The store is personal and was opened as shared, or the other way round.
        public static let kindMismatch = Code(.kindMismatch)
        /// The store was written by a newer version of Missive, whose schema this one does not know.
        public static let newerSchema = Code(.newerSchema)
        /// The database server cannot be reached, or the connection was lost during a call. The call changed
        /// nothing and can be retried.
        public static let unavailable = Code(.unavailable)
        /// A statement ran longer than the store's statement timeout; the call changed nothing.
        public static let timeout = Code(.timeout)
        /// The store does not do what was asked (a backend without it); nothing was changed.
        public static let unsupported = Code(.unsupported)

        /// The stable, kebab-case spelling used in JSON output, for example `has-replies`.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable reason.
    public var message: String
    /// Where the store is, when known: the database file, or the server's URL without its password.
    public var path: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// `path: message`, leaving out an unknown path.
    public var description: String {
        if let path { return "\(path): \(message)" }
        return message
    }
}
