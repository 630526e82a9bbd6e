import MissiveWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MissiveCore
import NIOCore

extension ChatServer {
    /// The media routes: uploading a file to a conversation, downloading one.
    func mediaRoutes<Context: MissiveRequestContext>(context: Context.Type) -> RouteCollection<MemberRequestContext<Context>> {
        let routes = RouteCollection(context: MemberRequestContext<Context>.self)
        routes.post("conversations/:conversation/media") { request, context in try await uploadMedia(request, context: context) }
        routes.get("conversations/:conversation/media/:sha256") { request, context in try await downloadMedia(request, context: context) }
        routes.delete("conversations/:conversation/media/:sha256") { _, context in try await deleteMedia(context: context) }
        return routes
    }

    /// `POST /api/v1/conversations/{id}/media[?name=NAME]`: a member uploads a file for a media message.
    ///
    /// The body is the file's bytes, `Content-Type` its type. The bytes are written to a temporary file as they
    /// come, hashed, checked against the type (``MediaSniffing``), and kept under their SHA-256. The answer is
    /// what a media reference (`MS:Image`, `MS:File`, `MS:Voice`, `MS:Video`) takes: `remoteURL`, `mimeType`,
    /// `sizeBytes`, and the `name` and `sha256`.
    func uploadMedia(_ request: Request, context: MemberRequestContext<some MissiveRequestContext>) async throws -> Response {
        let member = context.member
        let conversation = try Self.pathParameter(context, "conversation")
        _ = try await requireMembership(member, conversation)
        let limit = configuration.limits.maxUploadBytes
        if let length = request.headers[.contentLength].flatMap({ Int64($0) }), length > Int64(limit) {
            throw APIError(status: .contentTooLarge, code: "too-large", message: "the upload is \(length) bytes; the server takes \(limit) at most")
        }
        // The member's quota, before and after the bytes come.
        let declaredLength = request.headers[.contentLength].flatMap { Int64($0) } ?? 0
        try await checkQuota(of: member, adding: declaredLength, context)
        var declared: String?
        if let header = request.headers[.contentType] {
            guard let essence = MediaSniffing.essence(header) else {
                throw APIError.badRequest("malformed-request", "the Content-Type \(TextHygiene.line(header)) is not a MIME type (type/subtype)")
            }
            declared = essence
        }
        let name = try Self.uploadName(request)

        let received: MediaLibrary.Received
        do {
            received = try await Self.withDeadline(configuration.limits.uploadTimeout, "the upload") { [media] in
                try await media.receive(request.body, limit: limit)
            }
        } catch let error as MediaStorageError {
            throw Self.mediaUnavailable(error, context)
        }
        let mimeType: String
        switch MediaSniffing.storedType(declared: declared, head: received.head, isWhole: received.size <= Int64(received.head.count)) {
        case .success(let type):
            mimeType = type
        case .failure(let refusal):
            unlink(received.temporaryPath)
            throw APIError(status: .unsupportedMediaType, code: "type-mismatch", message: refusal.message)
        }
        let entry: MediaLibrary.Entry
        do {
            let limits = configuration.limits
            entry = try await media.store(
                received, mimeType: mimeType, conversation: conversation, uploader: member, name: name,
                quota: (Int64(limits.maxUploadedBytesPerMember), limits.maxUploadedFilesPerMember))
        } catch let error as MediaStorageError {
            throw Self.mediaUnavailable(error, context)
        } catch let error as MediaLibrary.QuotaExceeded {
            throw quotaExceeded(member, bytes: error.bytes, files: error.files, context)
        }
        return JSONResponse.make(
            status: .created,
            UploadedMedia(remoteURL: Self.mediaPath(conversation, entry.sha256), mimeType: entry.mimeType, sizeBytes: entry.size, name: name, sha256: entry.sha256))
    }

    /// `GET /api/v1/conversations/{id}/media/{sha256}`: a member downloads a file uploaded to that conversation.
    ///
    /// The file is streamed from disk with the type it was stored as, and headers that keep a browser from running
    /// it (`Content-Security-Policy: sandbox`, `nosniff`, an attachment unless it is an image, a sound or a video it
    /// may show). `If-None-Match` with the hash answers `304`; one `Range` of bytes answers `206`.
    func downloadMedia(_ request: Request, context: MemberRequestContext<some MissiveRequestContext>) async throws -> Response {
        let member = context.member
        let conversation = try Self.pathParameter(context, "conversation")
        _ = try await requireMembership(member, conversation)
        let hash = try Self.pathParameter(context, "sha256")
        // A file uploaded to another conversation answers exactly as one that does not exist.
        let found: MediaLibrary.Entry?
        do {
            found = MediaLibrary.isHash(hash) ? try await media.entry(conversation: conversation, sha256: hash) : nil
        } catch {
            throw Self.mediaUnavailable(error, context)
        }
        guard let entry = found else {
            // A file deleted by its uploader, or collected, says so in the conversation it was in.
            if MediaLibrary.isHash(hash), let reason = try? await media.goneReason(conversation: conversation, sha256: hash) {
                throw APIError(status: .gone, code: "media-deleted", message: "the file \(hash) is gone: \(reason)")
            }
            throw APIError(status: .notFound, code: "not-found", message: "no file \(TextHygiene.line(hash)) in conversation \(TextHygiene.line(conversation))")
        }
        var headers: HTTPFields = [
            .contentType: entry.mimeType,
            .eTag: "\"\(hash)\"",
            .cacheControl: "private, max-age=31536000, immutable",
            .contentSecurityPolicy: "sandbox",
            .contentDisposition: Self.disposition(entry),
            .acceptRanges: "bytes",
        ]
        if let match = request.headers[.ifNoneMatch], Self.matches(match, hash) {
            headers[.contentLength] = String(entry.size)
            return Response(status: .notModified, headers: headers)
        }
        let path = media.path(of: hash)
        let files = FileIO()
        if let header = request.headers[.range], let range = Self.byteRange(header, size: entry.size) {
            guard let range else {
                throw APIError(status: .rangeNotSatisfiable, code: "range-not-satisfiable", message: "the file has \(entry.size) bytes", headers: [.contentRange: "bytes */\(entry.size)"])
            }
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(entry.size)"
            return Response(status: .partialContent, headers: headers, body: try await files.loadFile(path: path, range: range, context: context))
        }
        return Response(status: .ok, headers: headers, body: try await files.loadFile(path: path, context: context))
    }

    /// `DELETE /api/v1/conversations/{id}/media/{sha256}`: the uploader deletes its upload of the file to that
    /// conversation (`204`). The file then answers `410 media-deleted` there, unless another member uploaded it
    /// there too; its bytes go when no conversation has it. Another member's upload is `403 not-yours`.
    func deleteMedia(context: MemberRequestContext<some MissiveRequestContext>) async throws -> Response {
        let member = context.member
        let conversation = try Self.pathParameter(context, "conversation")
        _ = try await requireMembership(member, conversation)
        let hash = try Self.pathParameter(context, "sha256")
        let outcome: MediaLibrary.Deletion
        do {
            outcome = MediaLibrary.isHash(hash) ? try await media.delete(conversation: conversation, sha256: hash, by: member) : .notFound
        } catch {
            throw Self.mediaUnavailable(error, context)
        }
        switch outcome {
        case .deleted:
            return Response(status: .noContent)
        case .notYours:
            throw APIError(status: .forbidden, code: "not-yours", message: "the file was uploaded to \(TextHygiene.line(conversation)) by other members; only they may delete it")
        case .notFound:
            throw APIError(status: .notFound, code: "not-found", message: "no file \(TextHygiene.line(hash)) of yours in conversation \(TextHygiene.line(conversation))")
        }
    }

    /// Refuses an upload that would take `member` over its quota (``ServerLimits/maxUploadedBytesPerMember``,
    /// ``ServerLimits/maxUploadedFilesPerMember``): `413 quota-exceeded`, with what it has and what it may have.
    private func checkQuota(of member: String, adding bytes: Int64, _ context: some RequestContext) async throws {
        let usage: (bytes: Int64, files: Int)
        do {
            usage = try await media.usage(of: member)
        } catch {
            throw Self.mediaUnavailable(error, context)
        }
        let limits = configuration.limits
        if usage.files >= limits.maxUploadedFilesPerMember || usage.bytes + bytes > Int64(limits.maxUploadedBytesPerMember) {
            throw quotaExceeded(member, bytes: usage.bytes, files: usage.files, context)
        }
    }

    /// The refusal of an upload over the quota, logged.
    private func quotaExceeded(_ member: String, bytes: Int64, files: Int, _ context: some RequestContext) -> APIError {
        let limits = configuration.limits
        SecurityLog.event(context.logger, "quota-exceeded", ["member": member, "files": String(files), "bytes": String(bytes)])
        return APIError(
            status: .contentTooLarge, code: "quota-exceeded",
            message: "your uploads take \(bytes) bytes in \(files) files; the server keeps \(limits.maxUploadedBytesPerMember) bytes and "
                + "\(limits.maxUploadedFilesPerMember) files a member: delete some first (DELETE …/media/{sha256})")
    }

    // MARK: Helpers

    /// The download path of a file in a conversation: what `remoteURL` holds.
    static func mediaPath(_ conversation: String, _ sha256: String) -> String {
        let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return "/api/v1/conversations/\(conversation.addingPercentEncoding(withAllowedCharacters: unreserved) ?? conversation)/media/\(sha256)"
    }

    /// `?name=`, reduced to a safe file name (``safeFileName(_:)``); `nil` when absent or when nothing of it is left.
    /// A value that is not percent-encoded UTF-8 without control characters is refused (`400 malformed-query`).
    private static func uploadName(_ request: Request) throws -> String? {
        try RequestInput.query(request, "name").flatMap(safeFileName)
    }

    /// The longest file name kept, in UTF-8 bytes.
    static let maxFileNameBytes = 255

    /// `name` as a file name that is safe to offer for saving: only what follows its last `/` or `\`; control and
    /// format characters (bidirectional overrides included), quotes and the characters Windows forbids in a name
    /// (`<>:"|?*`) each become `_`; no leading or trailing space or dot; at most ``maxFileNameBytes`` bytes, the
    /// extension kept. `nil` when nothing is left.
    static func safeFileName(_ name: String) -> String? {
        let base = name.split(omittingEmptySubsequences: false) { $0 == "/" || $0 == "\\" }.last.map(String.init) ?? name
        let forbidden: Set<Unicode.Scalar> = ["<", ">", ":", "\"", "'", "|", "?", "*", "`"]
        var scalars = String.UnicodeScalarView()
        for scalar in base.unicodeScalars {
            let category = scalar.properties.generalCategory
            let isHidden = category == .control || category == .format || category == .lineSeparator || category == .paragraphSeparator
            scalars.append(isHidden || forbidden.contains(scalar) ? "_" : scalar)
        }
        var safe = String(scalars).trimmingCharacters(in: CharacterSet(charactersIn: " .").union(.whitespacesAndNewlines))
        if safe.utf8.count > maxFileNameBytes {
            let dot = safe.lastIndex(of: ".").map { safe[$0...] } ?? ""
            let suffix = dot.utf8.count <= 16 ? String(dot) : ""
            var stem = Substring(safe.dropLast(suffix.count))
            while stem.utf8.count + suffix.utf8.count > maxFileNameBytes { stem = stem.dropLast() }
            safe = String(stem) + suffix
        }
        return safe.isEmpty ? nil : safe
    }

    /// `inline` for what a browser may show, `attachment` for anything else, with the uploaded name as a quoted
    /// ASCII fallback and as UTF-8 (`filename*`, RFC 6266 and RFC 8187). A name kept before names were reduced is
    /// reduced here.
    private static func disposition(_ entry: MediaLibrary.Entry) -> String {
        let kind = MediaSniffing.isSafeInline(entry.mimeType) ? "inline" : "attachment"
        guard let name = entry.name.flatMap(safeFileName) else { return kind }
        let plain = String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            scalar.isASCII && scalar.value >= 0x20 && scalar.value != 0x7F && scalar != "\"" && scalar != "\\" && scalar != "%" ? scalar : "_"
        }))
        let attributeCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&+-.^_`|~")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: attributeCharacters) ?? plain
        return "\(kind); filename=\"\(plain)\"; filename*=UTF-8''\(encoded)"
    }

    /// Whether an `If-None-Match` value names the file's entity tag (strong or weak), or is `*`.
    private static func matches(_ header: String, _ hash: String) -> Bool {
        header.split(separator: ",").contains { tag in
            var tag = tag.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == "*" || tag == "\"\(hash)\""
        }
    }

    /// One range of `Range: bytes=...`, clamped to the file: `nil` for a header the server does not take (several
    /// ranges, another unit, a malformed one: the whole file is served), `.some(nil)` for a range past the end.
    private static func byteRange(_ header: String, size: Int64) -> ClosedRange<Int>?? {
        guard header.hasPrefix("bytes="), size > 0 else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        let end = Int(size) - 1
        if first.isEmpty {
            guard let suffix = Int(last), suffix > 0 else { return nil }
            return .some(max(0, end - suffix + 1)...end)
        }
        guard let start = Int(first), start >= 0 else { return nil }
        guard start <= end else { return .some(nil) }
        if last.isEmpty { return .some(start...end) }
        guard let stop = Int(last), stop >= start else { return nil }
        return .some(start...min(stop, end))
    }

    /// A media file that cannot be written: logged, and answered `503`.
    private static func mediaUnavailable(_ error: MediaStorageError, _ context: some RequestContext) -> APIError {
        context.logger.error("media: \(error)")
        return APIError(status: .serviceUnavailable, code: "media-unavailable", message: "the server cannot keep the file now")
    }
}
