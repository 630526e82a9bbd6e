import Foundation
import HTTPTypes
import Hummingbird
import Missive
import MissiveCore
import MissiveRendering
import MissiveStore
import MissiveWire
import NIOCore

// The web page: sign-in, the member's conversations, one page per conversation drawn by the HTML renderer, and
// the page's own script and stylesheet. docs/SERVER.md, "The web page", describes it.

extension ChatServer {
    /// What every page answers with: nothing loads but the server's own script, stylesheet and images, nothing
    /// frames it, and forms post only to the server.
    static let pagePolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// How many of the newest messages a conversation's page shows.
    static let pageMessageCount = 100

    /// The web page's routes (outside the API's group: they answer with HTML and redirects).
    func pageRoutes<Context: MissiveRequestContext>(context: Context.Type) -> RouteCollection<Context> {
        let router = RouteCollection(context: Context.self)
        router.get("/") { request, _ in
            if try await pageMember(request) != nil { return Self.redirect("/c") }
            return Self.page(Self.signInPage(failed: false))
        }
        router.get("login") { _, _ in Self.page(Self.signInPage(failed: false)) }
        router.post("session") { request, context in try await signIn(request, context: context) }
        router.post("session/end") { request, _ in
            if let id = SessionCookie.id(in: request) {
                guard SessionCookie.isSameOrigin(request) else { throw SessionCookie.crossOrigin }
                try await accounts.endSession(id)
            }
            var response = Self.redirect("/login")
            response.headers[.setCookie] = SessionCookie.clearing(for: request)
            return response
        }
        router.get("c") { request, _ in
            guard let member = try await pageMember(request) else { return Self.redirect("/login") }
            return Self.page(try await conversationListPage(member: member))
        }
        router.post("c") { request, _ in
            // The list page's form: a new conversation, then its page.
            guard let member = try await pageMember(request) else { return Self.redirect("/login") }
            guard SessionCookie.isSameOrigin(request) else { throw SessionCookie.crossOrigin }
            let form = String(decoding: try await Self.bodyBytes(request, limit: 8192, timeout: configuration.limits.requestBodyTimeout), as: UTF8.self)
            let id = (Self.formValue("id", in: form) ?? "").trimmingCharacters(in: .whitespaces)
            let names = (Self.formValue("members", in: form) ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
            do {
                _ = try await makeConversation(id, by: member, with: names)
            } catch let error as APIError {
                return Self.page(try await conversationListPage(member: member, problem: error.message), status: error.status)
            }
            return Self.redirect("/c/" + Self.pathSegment(id))
        }
        router.get("c/:conversation") { request, context in
            guard let member = try await pageMember(request) else { return Self.redirect("/login") }
            let id = try Self.pathParameter(context, "conversation")
            guard try await store.members(ofConversation: id).contains(member) else {
                return Self.page(Self.notFoundPage(), status: .notFound)
            }
            return Self.page(try await conversationPage(member: member, conversation: id))
        }
        router.get("c/:conversation/m/:message") { request, context in
            guard let member = try await pageMember(request) else {
                throw APIError.unauthorized("no session, or it ended (signed out, or the member's tokens were revoked): sign in at /login")
            }
            let id = try Self.pathParameter(context, "conversation")
            let messageID = try Self.pathParameter(context, "message")
            _ = try await requireMembership(member, id)
            guard let stored = try await store.message(id: messageID), stored.conversationID == id else { throw APIError.noMessage(messageID, id) }
            let rows = try await renderedRows([stored], member: member, separators: false)
            return Self.page(rows, contentType: "text/html; charset=utf-8")
        }
        router.get("static/missive.js") { _, _ in
            Self.asset(WebPageAssets.script, contentType: "text/javascript; charset=utf-8")
        }
        router.get("static/missive.css") { _, _ in
            Self.asset(WebPageAssets.stylesheet, contentType: "text/css; charset=utf-8")
        }
        return router
    }

    /// The member of the request's session cookie, or `nil` without a valid one.
    private func pageMember(_ request: Request) async throws -> String? {
        guard let id = SessionCookie.id(in: request) else { return nil }
        return try await accounts.member(forSession: id)
    }

    /// `POST /session` with `token=…` (a form) or `{"token": "…"}` (JSON): a new session. A form is answered with a
    /// redirect to `/c`, JSON with `{"member": …}`; both set the cookie. A token that is not valid counts against the
    /// client address as a failed authentication of the API does (``ServerLimits/failedAuthBurst``).
    private func signIn(_ request: Request, context: some MissiveRequestContext) async throws -> Response {
        if request.headers[.origin] != nil, !SessionCookie.isSameOrigin(request) { throw SessionCookie.crossOrigin }
        let address = ClientAddress.of(request, channel: context.channel, trustedProxies: configuration.trustedProxies)
        let wait = failedAuthLimit.reserve(for: address, at: .now)
        if wait > 0 {
            SecurityLog.event(context.logger, "address-limited", ["address": address, "path": request.uri.path])
            throw APIError.rateLimited(wait: wait)
        }
        var failed = false
        defer { failedAuthLimit.release(for: address, taking: failed, at: .now) }
        let bytes = try await Self.bodyBytes(request, limit: 4096, timeout: configuration.limits.requestBodyTimeout)
        let isJSON = request.headers[.contentType]?.lowercased().hasPrefix("application/json") ?? false
        let token: String?
        if isJSON {
            guard case .object(let members)? = try? JSONValue.parse(bytes) else { throw APIError.badRequest("malformed-json", "the body is not a JSON object") }
            if case .string(let text)? = members.first(where: { $0.key == "token" })?.value { token = text } else { token = nil }
        } else {
            token = Self.formValue("token", in: String(decoding: bytes, as: UTF8.self))
        }
        guard let token = token?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty else {
            if isJSON { throw APIError.badRequest("malformed-request", "the body needs \"token\", a member's token") }
            return Self.page(Self.signInPage(failed: true), status: .unauthorized)
        }
        guard let session = try await accounts.startSession(token: token) else {
            failed = true
            SecurityLog.event(context.logger, "failed-auth", ["address": address, "path": request.uri.path, "reason": "sign-in with a token that is not valid"])
            if isJSON { throw APIError.unauthorized("the token is not valid (unknown, or revoked)") }
            return Self.page(Self.signInPage(failed: true), status: .unauthorized)
        }
        var response = isJSON ? JSONResponse.make(MemberAnswer(member: session.member)) : Self.redirect("/c")
        response.headers[.setCookie] = SessionCookie.setting(session.id, for: request)
        return response
    }

    /// The value of `name` in a form-encoded body.
    static func formValue(_ name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }

    // MARK: Pages

    /// The renderer's components without inline styles, which the page's policy forbids.
    static let pageComponents = HTMLComponents.withoutInlineStyles

    /// Messages drawn by the HTML renderer: each an `<article>`, with date separators when `separators`.
    func renderedRows(_ stored: [StoredMessage], member: String, separators: Bool) async throws -> String {
        // In one call, views included: an isolated plugin's messages cross to its worker once, while this task is
        // suspended, and drawing them crosses no more.
        let messages = await registry.suspending.decode(try stored.map { try $0.envelope() }, views: true)
        let transcript = Transcript(messages: messages, currentUserID: member, actions: { registry.actions(for: $0) })
        let renderer = HTMLRenderer(components: Self.pageComponents)
        var rows: [String] = []
        for row in transcript.rows {
            switch row {
            case .dateSeparator(let title): if separators { rows.append(Self.pageComponents.dateSeparator(title)) }
            case .message(let item): rows.append(renderer.render(item))
            }
        }
        return rows.joined(separator: "\n")
    }

    private func conversationListPage(member: String, problem: String? = nil) async throws -> String {
        let summaries = try await conversationList(member: member)
        var items = ""
        for summary in summaries {
            let unread = summary.unreadCount > 0 ? "<span class=\"unread\">\(summary.unreadCount) unread</span>" : ""
            items += "<li><a" + HTMLEscaping.attribute("href", "/c/" + Self.pathSegment(summary.id)) + ">" + HTMLEscaping.escape(summary.id) + "</a>" + unread + "</li>\n"
        }
        if items.isEmpty { items = "<li class=\"empty\">No conversations yet</li>" }
        let error = problem.map { "<p class=\"error\" role=\"alert\">" + HTMLEscaping.escape($0) + "</p>\n" } ?? ""
        let form = """
            <form class="new-conversation" method="post" action="/c">
            <label><span>New conversation</span><input name="id" required maxlength="128" placeholder="team"></label>
            <label><span>With (member names, separated by commas)</span><input name="members" placeholder="bob, carol"></label>
            <button type="submit">Start</button>
            </form>
            """
        return Self.shell(
            title: "Conversations", member: member, attributes: " data-page=\"list\"",
            body: "<h1>Conversations</h1>\n\(error)<ul class=\"conversations\">\n\(items)</ul>\n\(form)")
    }

    private func conversationPage(member: String, conversation: String) async throws -> String {
        let stored = try await store.messages(inConversation: conversation, limit: Self.pageMessageCount)
        var rows = try await renderedRows(stored, member: member, separators: true)
        if rows.isEmpty { rows = "<p class=\"transcript-empty\">No messages</p>" }
        var actions = ""
        for action in registry.composerActions {
            var fields = ""
            for (index, parameter) in action.parameters.enumerated() {
                let name = HTMLEscaping.escape(parameter.name.replacingOccurrences(of: "_", with: " "))
                let common = HTMLEscaping.attribute("name", "a\(index)") + HTMLEscaping.attribute("data-type", parameter.type.rawValue)
                let control: String
                switch parameter.type {
                case .string: control = "<textarea rows=\"\(index == 0 ? 1 : 3)\" required" + common + "></textarea>"
                case .bool: control = "<input type=\"checkbox\"" + common + ">"
                case .double: control = "<input type=\"number\" step=\"any\" required" + common + ">"
                default: control = "<input type=\"number\" step=\"1\" required" + common + ">"
                }
                fields += "<label><span>\(name)</span>\(control)</label>"
            }
            actions += "<details class=\"compose-action\"><summary>" + HTMLEscaping.escape(action.title) + "</summary>"
                + "<form class=\"compose-form\"" + HTMLEscaping.attribute("data-action", action.id) + ">" + fields
                + "<button type=\"submit\">Create</button></form></details>\n"
        }
        let body = """
            <h1>\(HTMLEscaping.escape(conversation))</h1>
            <main class="transcript" id="messages">
            \(rows)
            </main>
            <p id="status" class="status" role="status"></p>
            <form id="composer" class="composer">
            <textarea name="text" rows="2" placeholder="Write a message" aria-label="Message" required></textarea>
            <button type="submit">Send</button>
            </form>
            <div class="compose-actions">
            \(actions)</div>
            """
        return Self.shell(
            title: conversation, member: member,
            attributes: " data-page=\"conversation\"" + HTMLEscaping.attribute("data-conversation", conversation), body: body)
    }

    static func signInPage(failed: Bool) -> String {
        let error = failed ? "<p class=\"error\" role=\"alert\">That token is not valid (unknown, or revoked).</p>" : ""
        return shell(
            title: "Sign in", member: nil, attributes: " data-page=\"login\"",
            body: """
                <h1>Sign in to Missive</h1>
                \(error)<form class="sign-in" method="post" action="/session">
                <label><span>Your token</span><input type="password" name="token" autocomplete="current-password" required placeholder="msv_…"></label>
                <button type="submit">Sign in</button>
                </form>
                <p class="hint"><code>missive serve users token NAME</code> gives a member a token.</p>
                """)
    }

    static func notFoundPage() -> String {
        shell(
            title: "Not found", member: nil, attributes: "",
            body: "<h1>Not found</h1>\n<p>No such conversation of yours. <a href=\"/c\">Your conversations</a></p>")
    }

    /// A page: the head (the stylesheet and the script, both the server's own files), the header, then `body`.
    /// The referrer policy is `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null`
    /// on the page's own form posts and same-origin `fetch` posts, which the same-origin rule would refuse.
    static func shell(title: String, member: String?, attributes: String, body: String) -> String {
        let header =
            member.map {
                "<header class=\"page-header\"><a class=\"home\" href=\"/c\">Missive</a><span class=\"who\">" + HTMLEscaping.escape($0)
                    + "</span><form method=\"post\" action=\"/session/end\"><button type=\"submit\">Sign out</button></form></header>"
            } ?? "<header class=\"page-header\"><span class=\"home\">Missive</span></header>"
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="referrer" content="same-origin">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(HTMLEscaping.escape(title)) · Missive</title>
            <link rel="stylesheet" href="/static/missive.css">
            <script src="/static/missive.js" defer></script>
            </head>
            <body\(attributes)>
            \(header)
            <div class="page">
            \(body)
            </div>
            </body>
            </html>
            """
    }

    /// A conversation id as one path segment.
    static func pathSegment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~@"))) ?? id
    }

    // MARK: Responses

    static func page(_ html: String, status: HTTPResponse.Status = .ok, contentType: String = "text/html; charset=utf-8") -> Response {
        Response(
            status: status,
            headers: [.contentType: contentType, .contentSecurityPolicy: pagePolicy, .cacheControl: "no-store", .init("Referrer-Policy")!: "same-origin"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .contentSecurityPolicy: pagePolicy, .cacheControl: "no-store"])
    }

    static func asset(_ text: String, contentType: String) -> Response {
        Response(status: .ok, headers: [.contentType: contentType, .cacheControl: "no-cache"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
