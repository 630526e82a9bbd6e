/// Whose store a store is: one account's, or a service's for many members.
public enum StoreKind: Sendable, Hashable {
    /// One account's store, as a client host keeps it: the owner is a member of every conversation as soon as
    /// it has a message, and the one-account API (``MessageStore/unreadCount(conversation:)``, ...) acts for
    /// it. `nil` is an owner without a name: every message counts as someone else's.
    case personal(owner: String?)
    /// A store of many members, as a server keeps it: conversations have the members that joined them, and
    /// every read names its member.
    case shared
}

extension StoreKind: CustomStringConvertible {
    /// `personal (owner alice)`, `personal`, or `shared`.
    public var description: String {
        switch self {
        case .personal(let owner?): "personal (owner \(owner))"
        case .personal(nil): "personal"
        case .shared: "shared"
        }
    }
}

extension StoreKind {
    /// How the store writes its kind down: `personal` or `shared`.
    package var storedName: String {
        switch self {
        case .personal: "personal"
        case .shared: "shared"
        }
    }

    /// The kind a store opens as, from what it remembers (`stored`, both `nil` for a new store) and what the
    /// caller asks for (`nil`: whatever it is); whether that must be written down, and the owner a personal
    /// store without one claims now (its unread counts are then recounted).
    package static func resolve(
        stored: (kind: String?, owner: String?), requested: StoreKind?, location: String
    ) throws(StoreError) -> (kind: StoreKind, write: Bool, claimedOwner: String?) {
        switch (stored.kind, requested) {
        case (nil, nil):
            return (.personal(owner: nil), true, nil)
        case (nil, .shared?):
            return (.shared, true, nil)
        case (nil, .personal(let owner)?):
            return (.personal(owner: owner), true, owner)
        case ("shared", nil), ("shared", .shared?):
            return (.shared, false, nil)
        case ("shared", .personal?):
            throw StoreError(.kindMismatch, "the store is shared by many members; it cannot be opened as one account's", path: location)
        case (_, .shared?):
            throw StoreError(.kindMismatch, "the store is one account's (personal); it cannot be opened as a shared store", path: location)
        case (_, nil), (_, .personal(nil)?):
            return (.personal(owner: stored.owner), false, nil)
        case (_, .personal(let owner?)?):
            if let current = stored.owner {
                guard current == owner else {
                    throw StoreError(.ownerMismatch, "the store belongs to '\(current)', not '\(owner)'", path: location)
                }
                return (.personal(owner: owner), false, nil)
            }
            return (.personal(owner: owner), true, owner)
        }
    }
}
