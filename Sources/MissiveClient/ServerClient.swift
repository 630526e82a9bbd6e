import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MissiveCore

/// A member's HTTP client of `missive serve`'s API (`/api/v1`, docs/SERVER.md), through Foundation's
/// `URLSession`.
///
/// Every call sends the member's token and answers the API's JSON read into the types of this module; an error
/// of the API is thrown as ``ServerClientError`` with the server's code and message as they came, so that a
/// client can show the server's reason word for word.
public struct ServerClient: Sendable {
    /// The server's address, such as `http://127.0.0.1:8080`.
    public let server: URL
    /// The member's token.
    public let token: String
    /// How long one request may take.
    public var timeout: TimeInterval = 30

    /// A client of the server at `server` (its scheme, host and port; any path is ignored) as the member whose
    /// token this is.
    public init(server: URL, token: String) {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.path = ""
        components.query = nil
        self.server = components.url ?? server
        self.token = token
    }

    // MARK: The member and its conversations

    /// The member the token belongs to (`GET /api/v1/me`).
    public func me() async throws(ServerClientError) -> String {
        try await request("GET", "me", answer: MemberAnswer.self).member
    }

    /// The member's conversations, newest activity first (`GET /api/v1/conversations`).
    public func conversations() async throws(ServerClientError) -> [RemoteConversation] {
        try await request("GET", "conversations", answer: ConversationList.self).conversations
    }

    /// A conversation's members and the member's read mark (`GET /api/v1/conversations/{id}`).
    public func conversation(_ id: String) async throws(ServerClientError) -> RemoteConversationDetail {
        try await request("GET", "conversations/\(Self.segment(id))", answer: RemoteConversationDetail.self)
    }

    /// Makes a conversation with the member and `members` in it (`POST /api/v1/conversations`); its members.
    @discardableResult
    public func createConversation(_ id: String, members: [String]) async throws(ServerClientError) -> RemoteConversationDetail {
        try await request("POST", "conversations", body: NewConversation(id: id, members: members), answer: RemoteConversationDetail.self)
    }

    /// One page of a conversation's messages, oldest first (`GET /api/v1/conversations/{id}/messages`): the
    /// newest `limit`, or those just before the message `before`.
    public func messages(in conversation: String, before: String? = nil, limit: Int = 500) async throws(ServerClientError) -> [RemoteMessage] {
        var query = "limit=\(limit)"
        if let before { query += "&before=" + Self.segment(before) }
        return try await request("GET", "conversations/\(Self.segment(conversation))/messages", query: query, answer: MessageList.self).messages
    }

    /// Every message of a conversation, oldest first, a page at a time.
    public func allMessages(in conversation: String) async throws(ServerClientError) -> [RemoteMessage] {
        var all: [RemoteMessage] = []
        var before: String?
        while true {
            let page = try await messages(in: conversation, before: before, limit: 500)
            all.insert(contentsOf: page, at: 0)
            guard page.count == 500, let oldest = page.first?.id else { return all }
            before = oldest
        }
    }

    // MARK: Sending and reading

    /// Sends an envelope (its JSON, as `Envelope.encoded()` writes it) to a conversation
    /// (`POST /api/v1/conversations/{id}/messages`).
    public func send(envelope: [UInt8], to conversation: String) async throws(ServerClientError) -> SendOutcome {
        try SendOutcome(answer: try await request("POST", "conversations/\(Self.segment(conversation))/messages", body: envelope))
    }

    /// Moves the member's read mark to `message` (`POST /api/v1/conversations/{id}/read`); the unread count left.
    @discardableResult
    public func markRead(conversation: String, upTo message: String) async throws(ServerClientError) -> Int {
        try await request(
            "POST", "conversations/\(Self.segment(conversation))/read", body: ReadMarkRequest(upTo: message), answer: RemoteReadState.self
        ).unreadCount
    }

    // MARK: Actions

    /// The composer actions the server offers (`GET /api/v1/actions`).
    public func composerActions() async throws(ServerClientError) -> [RemoteAction] {
        try await request("GET", "actions", answer: ActionList.self).actions
    }

    /// The actions the server offers on one message (`GET …/messages/{m}/actions`): none when it cannot decode it.
    public func actions(conversation: String, message: String) async throws(ServerClientError) -> [RemoteAction] {
        let path = "conversations/\(Self.segment(conversation))/messages/\(Self.segment(message))/actions"
        return try await request("GET", path, answer: MessageActions.self).actions
    }

    /// Performs a message action on the server's copy of a message (`POST …/messages/{m}/actions/{a}`).
    ///
    /// - Throws: ``ServerClientError``: among others `unknown-type` (422) when the server has no plugin for the
    ///   message's type, with the server's reason.
    public func perform(
        _ action: String, conversation: String, message: String, arguments: [ActionArgument]
    ) async throws(ServerClientError) -> RemoteActionResult {
        let path = "conversations/\(Self.segment(conversation))/messages/\(Self.segment(message))/actions/\(Self.segment(action))"
        return try RemoteActionResult(answer: try await request("POST", path, body: ActionRequest(arguments: arguments).encoded()))
    }

    // MARK: Type reports

    /// Reports the types this client can draw (`PUT /api/v1/me/types`); the report replaces the member's last one.
    @discardableResult
    public func reportTypes(_ types: [ReportedType]) async throws(ServerClientError) -> TypeReport {
        try await request("PUT", "me/types", body: TypeReportRequest(types: types), answer: TypeReport.self)
    }

    /// Whether each other member of a conversation can draw a type, as their last reports say
    /// (`GET /api/v1/conversations/{c}/types/{objectName}`), sorted by member.
    public func drawing(_ objectName: String, in conversation: String) async throws(ServerClientError) -> [MemberDrawing] {
        try await request("GET", "conversations/\(Self.segment(conversation))/types/\(Self.segment(objectName))", answer: TypeAudience.self).members
    }

    // MARK: Requests

    /// `text` as one percent-encoded path segment (or query value).
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// One request to `/api/v1/PATH` with a wire body, its answer read as the wire type `answer`.
    func request<Body: WireType, Answer: WireType>(
        _ method: String, _ path: String, query: String? = nil, body: Body, answer: Answer.Type
    ) async throws(ServerClientError) -> Answer {
        try ServerClientError.reading(answer, try await request(method, path, query: query, body: body.encoded()))
    }

    /// One request to `/api/v1/PATH` without a body, its answer read as the wire type `answer`.
    func request<Answer: WireType>(_ method: String, _ path: String, query: String? = nil, answer: Answer.Type) async throws(ServerClientError) -> Answer {
        try ServerClientError.reading(answer, try await request(method, path, query: query, body: nil))
    }

    /// One request to `/api/v1/PATH`: the answer's bytes, or the API's error (a ``WireError``) thrown.
    func request(_ method: String, _ path: String, query: String? = nil, body: [UInt8]?) async throws(ServerClientError) -> [UInt8] {
        guard let url = URL(string: server.absoluteString + "/api/v1/" + path + (query.map { "?" + $0 } ?? "")) else {
            throw ServerClientError(status: nil, code: "malformed-request", message: "cannot make a URL of \(path)")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let answer: (Data, URLResponse)
        do {
            // In a task of its own: cancelling a request in flight can deadlock FoundationNetworking on Linux (a
            // lock taken in two orders by the cancel and by the completion), which would hold a thread of the
            // concurrency pool for ever. The request ends anyway, by its answer or its timeout.
            answer = try await Task.detached { try await URLSession.shared.data(for: request) }.value
        } catch {
            throw ServerClientError.unreachable("cannot reach \(server.absoluteString): \(error.localizedDescription)")
        }
        let status = (answer.1 as? HTTPURLResponse)?.statusCode ?? 0
        let bytes = [UInt8](answer.0)
        guard (200..<300).contains(status) else {
            let error = try? WireError.decoded(from: bytes).error
            throw ServerClientError(status: status, code: error?.code ?? "http-\(status)", message: error?.message ?? "the server answered \(status)")
        }
        return bytes
    }
}
