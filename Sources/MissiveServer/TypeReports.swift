import MissiveWire
import Foundation
import Hummingbird
import MissiveCore

/// Type reports: a member's client says which types it can draw, and a member about to send a type asks which of
/// the others in a conversation can draw it. docs/SERVER.md, "Type reports", describes the routes and the frame.
///
/// Reporting is optional: a member that never reports is "unreported", and nothing else changes for it.
extension ChatServer {
    /// The most entries a report may list.
    static let maxReportedTypes = 4_096
    /// The longest version a report may give, in characters.
    static let maxReportedVersionLength = 64

    /// Adds the type report routes to the conversations' collection.
    func addTypeReports<Context: MissiveRequestContext>(to routes: RouteCollection<MemberRequestContext<Context>>) {
        routes.put("me/types") { request, context in
            let member = context.member
            let body = try await Self.jsonBody(request, limit: configuration.limits.maxRequestBytes, timeout: configuration.limits.requestBodyTimeout)
            return JSONResponse.make(try await reportTypes(body, member: member))
        }
        routes.get("me/types") { _, context in
            let member = context.member
            guard let report = try await accounts.typeReport(member: member) else {
                throw APIError(status: .notFound, code: "no-report", message: "\(member) has not reported which types its client can draw")
            }
            return JSONResponse.make(report)
        }
        routes.get("conversations/:conversation/types/:objectName") { _, context in
            let member = context.member
            let conversation = try Self.pathParameter(context, "conversation")
            let objectName = try Self.pathParameter(context, "objectName")
            if let problem = NameGrammar.objectNameProblem(objectName) { throw APIError.badRequest("invalid-type", TextHygiene.line(problem)) }
            let others = try await requireMembership(member, conversation).filter { $0 != member }.sorted()
            let reports = try await accounts.typeReports(of: others, about: objectName)
            return JSONResponse.make(TypeAudience(
                objectName: objectName,
                members: others.map { name -> MemberDrawing in
                    guard let report = reports[name] else { return MemberDrawing(member: name, reported: false, draws: nil, version: nil, reportedAt: nil) }
                    return MemberDrawing(member: name, reported: true, draws: report.version != nil, version: report.version, reportedAt: report.reportedAt)
                }))
        }
    }

    /// Checks a report (`{"types": [...]}`) and keeps it as `member`'s last.
    func reportTypes(_ body: JSONValue, member: String) async throws -> TypeReport {
        guard case .object(let fields) = body else { throw APIError.badRequest("malformed-request", "the body is a JSON object with \"types\"") }
        return try await accounts.replaceTypeReport(member: member, types: try Self.reportedTypes(fields.first { $0.key == "types" }?.value))
    }

    /// A `types` frame of the event stream: its `types` member (JSON text as sent) checked and kept as `member`'s
    /// last report.
    func reportTypes(frameMember types: [UInt8]?, member: String) async throws -> TypeReport {
        try await accounts.replaceTypeReport(member: member, types: try Self.reportedTypes(types.flatMap { try? JSONValue.parse($0) }))
    }

    /// The entries of a report's `types`, each checked: at most ``maxReportedTypes``, each an object with an
    /// `objectName` of the name grammar and a `version` of at most ``maxReportedVersionLength`` printable characters,
    /// no objectName twice. Other members of an entry are ignored, for clients newer than the server.
    static func reportedTypes(_ value: JSONValue?) throws -> [ReportedType] {
        guard case .array(let entries)? = value else {
            throw APIError.badRequest("invalid-report", "a report needs \"types\", an array of {\"objectName\": ..., \"version\": ...}")
        }
        guard entries.count <= maxReportedTypes else {
            throw APIError.badRequest("invalid-report", "the report lists \(entries.count) types; at most \(maxReportedTypes) are taken")
        }
        var seen: Set<String> = []
        var types: [ReportedType] = []
        for (index, entry) in entries.enumerated() {
            func refuse(_ reason: String) -> APIError {
                APIError.badRequest("invalid-report", "types[\(index)]: \(reason)")
            }
            guard case .object(let members) = entry else { throw refuse("an entry is {\"objectName\": ..., \"version\": ...}") }
            guard case .string(let objectName)? = members.first(where: { $0.key == "objectName" })?.value else {
                throw refuse("the entry needs \"objectName\", a string")
            }
            if let problem = NameGrammar.objectNameProblem(objectName) { throw refuse(TextHygiene.line(problem)) }
            guard case .string(let version)? = members.first(where: { $0.key == "version" })?.value else {
                throw refuse("the entry for \(objectName) needs \"version\", a string")
            }
            guard version.count <= maxReportedVersionLength else {
                throw refuse("the version of \(objectName) has \(version.count) characters; at most \(maxReportedVersionLength) are taken")
            }
            guard version.unicodeScalars.allSatisfy(isPrintable) else {
                throw refuse("the version of \(objectName) holds a control or invisible character")
            }
            guard seen.insert(objectName).inserted else { throw refuse("\(objectName) is listed twice") }
            types.append(ReportedType(objectName: objectName, version: version))
        }
        return types
    }

    /// Whether `scalar` shows as itself: not a control, format or separator character, nor unassigned.
    private static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: false
        default: true
        }
    }
}
