import Foundation
import Hummingbird
import MissiveCore
import MissiveStore
import MissiveWire

// Messages: sending, history by pages, read marks, search.

extension ChatServer {
    /// The message routes: sending, history, read marks, search.
    func messageRoutes<Context: MissiveRequestContext>(context: Context.Type) -> RouteCollection<MemberRequestContext<Context>> {
        let routes = RouteCollection(context: MemberRequestContext<Context>.self)
        routes.post("conversations/:conversation/messages") { request, context in
            try await send(request, member: context.member, conversation: try Self.pathParameter(context, "conversation"))
        }
        routes.get("conversations/:conversation/messages") { request, context in
            let id = try Self.pathParameter(context, "conversation")
            _ = try await requireMembership(context.member, id)
            return JSONResponse.make(MessageList(messages: try await history(request, member: context.member, conversation: id).map(RemoteMessage.init)))
        }
        routes.post("conversations/:conversation/read") { request, context in
            let id = try Self.pathParameter(context, "conversation")
            let body = try await Self.wireBody(ReadMarkRequest.self, request, limit: configuration.limits.maxRequestBytes, timeout: configuration.limits.requestBodyTimeout)
            return JSONResponse.make(try await markRead(member: context.member, conversation: id, upTo: body.upTo))
        }
        routes.get("search") { request, context in
            try await search(request, member: context.member)
        }
        return routes
    }

    /// `GET …/messages`: the newest `limit` messages, or the `limit` before or after a message of the conversation
    /// (`?before=ID`, `?after=ID`), in the order sent.
    private func history(_ request: Request, member: String, conversation: String) async throws -> [StoredMessage] {
        let limit = try Self.limit(request)
        let cursor: HistoryCursor
        switch (try RequestInput.query(request, "before"), try RequestInput.query(request, "after")) {
        case (nil, nil): return try await store.messages(inConversation: conversation, limit: limit)
        case (let before?, nil): cursor = .before(before)
        case (nil, let after?): cursor = .after(after)
        case (_?, _?): throw APIError.badRequest("malformed-request", "give before or after, not both")
        }
        let id =
            switch cursor {
            case .before(let id), .after(let id): id
            }
        // A cursor from another conversation is a mistake to report, not an empty page.
        let found = try await store.message(id: id)
        guard let anchor = found, anchor.conversationID == conversation else {
            noteElsewhere(found, named: "cursor", by: member, in: conversation)
            throw APIError.badRequest("unknown-cursor", "no message \(TextHygiene.line(id)) in this conversation")
        }
        return try await store.messages(inConversation: conversation, from: cursor, limit: limit)
    }

    /// Moves `member`'s read mark in `conversation` to `upTo`. The member's other connections hear of it through
    /// the feed (a `read` event).
    func markRead(member: String, conversation: String, upTo: String) async throws -> RemoteReadState {
        _ = try await requireMembership(member, conversation)
        let state: ReadState
        do {
            state = try await store.markRead(member: member, conversation: conversation, upTo: upTo)
        } catch {
            guard error.code == .notFound else { throw error }
            throw APIError.badRequest("unknown-message", "no message \(TextHygiene.line(upTo)) in this conversation")
        }
        return RemoteReadState(conversation: conversation, readUpTo: state.readUpTo, unreadCount: state.unreadCount)
    }

    /// `GET /api/v1/search?q=…[&conversation=ID][&limit=N]`: the member's messages that match, in its own
    /// conversations only: best first, or newest first on a SQLite store (whose ranking would weigh words by
    /// conversations the member is not in).
    private func search(_ request: Request, member: String) async throws -> Response {
        guard let text = try RequestInput.query(request, "q"), !text.isEmpty else { throw APIError.badRequest("malformed-request", "search needs ?q=, the words to find") }
        let query: SearchQuery
        do {
            query = try SearchQuery(parsing: text)
        } catch {
            throw APIError.badRequest("malformed-query", error.message)
        }
        var conversation: String?
        if let id = try RequestInput.query(request, "conversation") {
            _ = try await requireMembership(member, id)
            conversation = id
        }
        let hits = try await store.search(query, member: member, conversation: conversation, limit: try Self.limit(request))
        return JSONResponse.make(SearchResults(hits: hits.map { SearchHit(snippet: $0.snippet, message: RemoteMessage($0.message)) }))
    }
}
