import Foundation
import Hummingbird
import Logging
import Missive
import MissiveStore
import MissiveWire
import NIOCore

extension ChatServer {
    /// `POST /api/v1/conversations/{id}/messages`: a member sends an envelope (see ``accept(_:from:in:)``).
    func send(_ request: Request, member: String, conversation: String) async throws -> Response {
        let body = try await Self.bodyBytes(request, limit: configuration.limits.maxRequestBytes, timeout: configuration.limits.requestBodyTimeout)
        return try await accept(body, from: member, in: conversation).response
    }

    /// Takes a message a member sends, over HTTP or the event stream, and delivers it.
    ///
    /// The body is an envelope as any SDK writes one. Its content's bytes and the members the server does not know
    /// are kept as they came; the sender is the member whose token it is, the time the server's, and the
    /// conversation the one given (an envelope that names another is refused). Without an `id`, the server gives
    /// one; with one, sending the same envelope again answers with the stored message instead of storing it twice.
    /// A stored message reaches the members through the store's change feed; one its flag keeps out of the store
    /// (`none`, `status`) is published on the feed as a transient change, which reaches the members online on
    /// every instance, and `none` waits for those who are not.
    func accept(_ body: [UInt8], from member: String, in conversation: String) async throws -> Accepted {
        let members = try await requireMembership(member, conversation)
        guard case .object(let fields)? = try? JSONValue.parse(body) else {
            throw APIError.badRequest("malformed-envelope", "the envelope is not a JSON object")
        }
        let names = Set(fields.map(\.key))
        if case .string(let named)? = fields.first(where: { $0.key == "conversationID" })?.value, named != conversation {
            throw APIError.badRequest("conversation-mismatch", "the envelope names conversation \(TextHygiene.line(named)), the path \(conversation)")
        }
        // The members the server sets, added in front when the client left them out, so that the envelope parses;
        // their values are replaced below either way.
        var given: [String] = []
        if !names.contains("id") { given.append(#""id":"# + Self.quoted(Self.newMessageID())) }
        if !names.contains("conversationID") { given.append(#""conversationID":"# + Self.quoted(conversation)) }
        if !names.contains("senderID") { given.append(#""senderID":"# + Self.quoted(member)) }
        if !names.contains("sentAt") { given.append(#""sentAt":0"#) }
        var envelope: Envelope
        do {
            envelope = try Envelope(parsing: Self.prepending(given, to: body))
        } catch {
            throw APIError.badRequest("malformed-envelope", error.message)
        }
        envelope.conversationID = conversation
        envelope.senderID = member
        envelope.sentAt = Self.serverTime()
        try checkEnvelope(envelope, from: member)  // before any plugin decodes it
        let received = envelope
        let message = await registry.suspending.decode(received)
        return try await storeSent(message, member: member, conversation: conversation, members: members)
    }

    /// Stores a message a member sent, or made with a composer action, or hands it to the members online when its
    /// flag keeps it out of the store, and queues the pushes of a new message (see ``schedulePushes(for:from:in:to:)``).
    /// Content that its type refused is refused (`422`), unless the policy keeps it
    /// as unknown. `members` are the conversation's.
    func storeSent(_ message: Message, member: String, conversation: String, members: [String]) async throws -> Accepted {
        let envelope = message.envelope
        try checkEnvelope(envelope, from: member)
        if let unknown = message.unknown, case .decodeFailed(let reason) = unknown.reason, !configuration.keepsRefusedContent {
            throw APIError(
                status: .unprocessableContent, code: "refused-content",
                message: "\(TextHygiene.line(envelope.objectName)) refused the content: \(TextHygiene.line(reason))")
        }
        // Before the message is stored: a file it names is never collected as unreferenced, whatever happens next.
        if message.persistence != .none && message.persistence != .status { try await recordMediaReferences(envelope) }
        let outcome = try await store.ingest([IncomingMessage(message)]).outcomes.first
        switch outcome {
        case .stored?:
            guard let stored = try await store.message(id: envelope.id) else { throw APIError.storeLost(envelope.id) }
            if let parentID = envelope.parentID { noteParentElsewhere(parentID, of: envelope.id, from: member, in: conversation) }
            var offline: [String] = []
            if pushes != nil { offline = await events.offline(members) }
            schedulePushes(for: message, from: member, in: conversation, to: offline)
            return .stored(stored, isNew: true)
        case .duplicate?:
            // A retry of the same send gets the stored message; another message under a taken id is refused.
            guard let stored = try await store.message(id: envelope.id) else { throw APIError.storeLost(envelope.id) }
            let storedContent = try? Envelope(parsing: stored.envelopeBytes).content
            guard stored.senderID == member, stored.conversationID == conversation, storedContent == envelope.content else {
                throw APIError(status: .conflict, code: "duplicate-id", message: "a message with id \(TextHygiene.line(envelope.id)) exists")
            }
            return .stored(stored, isNew: false)
        case .notStored?:
            let bytes = envelope.encoded()
            var offline: [String] = []
            // Through the feed, so that the members connected to every instance get it.
            if try await publishTransient(message) {
                if message.persistence == .none { offline = await events.offline(members) }
            } else {
                offline = events.deliverTransient(bytes, persistence: message.persistence, conversation: conversation, to: members)
            }
            if message.persistence == .none {
                try await accounts.keepPending(bytes, conversation: conversation, for: offline.filter { $0 != member })
                schedulePushes(for: message, from: member, in: conversation, to: offline)
            }
            return .notStored(id: envelope.id, persistence: message.persistence)
        case .refused(let reason)?:
            throw APIError.badRequest("refused-by-store", reason)
        case nil:
            throw APIError.storeLost(envelope.id)
        }
    }

    /// Records the files a message about to be stored names, so that they are not collected as unreferenced; when
    /// the media index cannot be written, the message is refused (`503 media-unavailable`) rather than stored with
    /// files that could later be collected.
    ///
    /// Most messages name no file: the envelope is parsed for references only when the bytes of its content or of its
    /// other members hold `media` (a reference that spells those letters as `\u` escapes is not seen, and its file
    /// may be collected).
    func recordMediaReferences(_ envelope: Envelope) async throws {
        let parts = [envelope.content] + envelope.additionalFields.map(\.rawValue)
        let texts = [envelope.fallbackText, envelope.pushContent].compactMap { $0 }
        guard parts.contains(where: MediaLibrary.mayName) || texts.contains(where: { $0.contains("media") }) else { return }
        let hashes = MediaLibrary.referencedHashes(in: envelope.encoded())
        guard !hashes.isEmpty else { return }
        do {
            try await media.recordReferences(hashes, conversation: envelope.conversationID, messageID: envelope.id)
        } catch {
            logger.error("media: \(error)")
            throw APIError(status: .serviceUnavailable, code: "media-unavailable", message: "the server cannot record the files the message names now")
        }
    }

    /// Logs a reply whose parent is a message of another conversation (which the store took as a parent never
    /// stored) as a security event, after the answer: the sender's answer and its timing are those of any reply.
    private func noteParentElsewhere(_ parentID: String, of id: String, from member: String, in conversation: String) {
        Task.detached { [store, logger] in
            guard let parent = try? await store.message(id: parentID), parent.conversationID != conversation else { return }
            SecurityLog.event(logger, "cross-conversation", ["member": member, "conversation": conversation, "message": id, "parentID": parentID])
        }
    }

    /// Publishes a message its flag keeps out of the store on the store's feed, which hands it to the members online
    /// on every instance; `false` when the store cannot (a store without the feed for it), and it was not.
    private func publishTransient(_ message: Message) async throws -> Bool {
        do throws(StoreError) {
            try await store.publishTransient(IncomingMessage(message))
            return true
        } catch {
            if error.code == .unsupported { return false }
            throw error
        }
    }

    /// Refuses an envelope that breaks the name grammar (``checkNames(_:)``) or whose content is over the server's
    /// limit.
    func checkEnvelope(_ envelope: Envelope, from member: String) throws {
        do {
            try Self.checkNames(envelope)
        } catch {
            SecurityLog.event(logger, "refused-name", ["member": member, "conversation": envelope.conversationID, "reason": error.message])
            throw error
        }
        try checkContentSize(envelope)
    }

    /// The server's one rule for the names a sent envelope carries, the grammar the registry and the type reports
    /// use (``NameGrammar``): its `objectName` is an objectName of that grammar (an unknown `MS:` name is taken, as a
    /// built-in type newer than the server), and its `id` and `parentID` are message ids. A refusal is `400
    /// invalid-name`, naming the member and the rule it breaks.
    static func checkNames(_ envelope: Envelope) throws(APIError) {
        let problems = [
            NameGrammar.objectNameProblem(envelope.objectName).map { "objectName: \($0) (an objectName has 1 to 32 characters: an ASCII letter, then letters, digits, '.', '_', ':' or '-')" },
            NameGrammar.messageIDProblem(envelope.id).map { "id: \($0)" },
            envelope.parentID.flatMap(NameGrammar.messageIDProblem).map { "parentID: \($0)" },
        ]
        if let problem = problems.lazy.compactMap({ $0 }).first {
            throw APIError.badRequest("invalid-name", TextHygiene.line(problem))
        }
    }

    /// Refuses an envelope whose content is over the server's limit.
    func checkContentSize(_ envelope: Envelope) throws {
        guard envelope.content.count <= configuration.limits.maxContentBytes else {
            throw APIError(
                status: .contentTooLarge, code: "content-too-large",
                message: "the content is \(envelope.content.count) bytes; the server takes \(configuration.limits.maxContentBytes) at most")
        }
    }

    /// An id the server gives a message that comes without one.
    static func newMessageID() -> String { "m-" + UUID().uuidString.lowercased() }

    /// The time now, in milliseconds since 1970: the `sentAt` of every message the server takes.
    static func serverTime() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// `body` with `members` (JSON `"name":value` texts) added at the front of its top-level object.
    static func prepending(_ members: [String], to body: [UInt8]) -> [UInt8] {
        guard !members.isEmpty, let open = body.firstIndex(of: UInt8(ascii: "{")) else { return body }
        let rest = body[(open + 1)...]
        let isEmpty = rest.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "}")
        return Array(body[...open]) + Array(members.joined(separator: ",").utf8) + (isEmpty ? [] : [UInt8(ascii: ",")]) + Array(rest)
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        var writer = MissiveJSONWriter()
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The request's body, at most `limit` bytes, all of it within `timeout` (else `408 request-timeout`).
    static func bodyBytes(_ request: Request, limit: Int, timeout: Duration) async throws -> [UInt8] {
        do {
            return try await withDeadline(timeout, "the request's body") { Array(try await request.body.collect(upTo: limit).readableBytesView) }
        } catch is NIOTooManyBytesError {
            throw APIError(status: .contentTooLarge, code: "too-large", message: "the request body is over \(limit) bytes")
        }
    }

    /// What `work` gives, when it ends within `timeout`; else `408 request-timeout` (naming `what` did not arrive)
    /// and `work` is cancelled.
    static func withDeadline<T: Sendable>(_ timeout: Duration, _ what: String, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw APIError(status: .requestTimeout, code: "request-timeout", message: "\(what) did not arrive within \(timeout)")
            }
            return value
        }
    }
}

extension APIError {
    /// A message the store said it stored and then did not find.
    static func storeLost(_ id: String) -> APIError {
        APIError(status: .serviceUnavailable, code: "store-unavailable", message: "the store did not keep \(TextHygiene.line(id))")
    }
}

/// What became of a message a member sent.
enum Accepted: Sendable {
    /// Stored (or, for a retry of the same send, stored before).
    case stored(StoredMessage, isNew: Bool)
    /// Kept out of the store by its flag, and delivered to the members online.
    case notStored(id: String, persistence: Persistence)

    /// The HTTP answer: 201 for a new message, 200 for a retry, 202 for one that is not stored.
    var response: Response {
        switch self {
        case .stored(let stored, let isNew):
            JSONResponse.make(status: isNew ? .created : .ok, StoredAnswer(message: RemoteMessage(stored)))
        case .notStored(let id, let persistence):
            JSONResponse.make(status: .accepted, NotStoredAnswer(id: id, persistence: persistence))
        }
    }
}
