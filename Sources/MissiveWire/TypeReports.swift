/// One type a client can draw, as it reports it: the type's objectName and the version of what registers it
/// (the plugin's version, or Missive's for a built-in type).
public struct ReportedType: WireType, Hashable {
    public static let wireName = "reported-type"
    /// The type's objectName.
    public var objectName: String
    /// The version of the plugin that registers it (Missive's version for a built-in type).
    public var version: String

    /// A type with its version.
    public init(objectName: String, version: String) {
        self.objectName = objectName
        self.version = version
    }

    public static let wireExample = ReportedType(objectName: "demo:poll", version: "1.0.0")
}

/// `PUT /api/v1/me/types`'s body: every type the client draws (it replaces the member's last report).
public struct TypeReportRequest: WireType, Hashable {
    public static let wireName = "type-report-request"
    /// The types.
    public var types: [ReportedType]

    /// A report of `types`.
    public init(types: [ReportedType]) { self.types = types }

    public static let wireExample = TypeReportRequest(types: [.wireExample])
}

/// A member's report as the server keeps it: the types sorted by objectName, and when it was made.
public struct TypeReport: WireType, Hashable {
    public static let wireName = "type-report"
    /// The member.
    public var member: String
    /// When it reported, in milliseconds since 1970.
    public var reportedAt: Int64
    /// The types.
    public var types: [ReportedType]

    /// A report with every field given.
    public init(member: String, reportedAt: Int64, types: [ReportedType]) {
        self.member = member
        self.reportedAt = reportedAt
        self.types = types
    }

    public static let wireExample = TypeReport(member: "bob", reportedAt: 1_767_225_600_000, types: [.wireExample])
}

/// Whether one other member of a conversation can draw a type, as its last report says.
public struct MemberDrawing: WireType, Hashable {
    public static let wireName = "member-drawing"
    /// The member.
    public var member: String
    /// Whether the member ever reported its types.
    public var reported: Bool
    /// Whether it can draw the type: `nil` when it never reported.
    public var draws: Bool?
    /// The version it reported for the type, when it draws it.
    public var version: String?
    /// When it last reported, in milliseconds since 1970; `nil` when it never did.
    public var reportedAt: Int64?

    /// A member's answer with every field given.
    public init(member: String, reported: Bool, draws: Bool?, version: String?, reportedAt: Int64? = nil) {
        self.member = member
        self.reported = reported
        self.draws = draws
        self.version = version
        self.reportedAt = reportedAt
    }

    public static let wireExample = MemberDrawing(member: "bob", reported: true, draws: true, version: "1.0.0", reportedAt: 1_767_225_600_000)
}

/// `GET /api/v1/conversations/{id}/types/{objectName}`: what each other member of the conversation said about a
/// type, sorted by member.
public struct TypeAudience: WireType, Hashable {
    public static let wireName = "type-audience"
    /// The type.
    public var objectName: String
    /// The other members.
    public var members: [MemberDrawing]

    /// An audience with every field given.
    public init(objectName: String, members: [MemberDrawing]) {
        self.objectName = objectName
        self.members = members
    }

    public static let wireExample = TypeAudience(objectName: "demo:poll", members: [.wireExample])
}
