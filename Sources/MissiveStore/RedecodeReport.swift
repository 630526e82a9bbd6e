/// What ``MessageStore/redecode(with:progress:)`` did, per objectName.
public struct RedecodeReport: Sendable, Hashable {
    /// The outcome for one objectName.
    public struct TypeReport: Sendable, Hashable {
        /// The objectName the messages were sent under.
        public var objectName: String
        /// How many now decode and were updated.
        public var decoded: Int
        /// How many still fail.
        public var stillUnknown: Int
        /// The reason of the last message that still fails, if any.
        public var reason: String?
        /// How many of the decoded ones changed whether they count as unread: for a personal store's owner; in a
        /// shared store, for the members but their senders.
        public var unreadChanged: Int

        /// Creates a report.
        public init(objectName: String, decoded: Int, stillUnknown: Int, reason: String?, unreadChanged: Int) {
            self.objectName = objectName
            self.decoded = decoded
            self.stillUnknown = stillUnknown
            self.reason = reason
            self.unreadChanged = unreadChanged
        }
    }

    /// One report per objectName among the stored unknown messages, sorted by objectName.
    public var types: [TypeReport]

    /// Creates a report.
    public init(types: [TypeReport]) {
        self.types = types
    }

    /// How many messages now decode.
    public var decodedCount: Int { types.reduce(0) { $0 + $1.decoded } }
    /// How many still fail.
    public var stillUnknownCount: Int { types.reduce(0) { $0 + $1.stillUnknown } }
}
