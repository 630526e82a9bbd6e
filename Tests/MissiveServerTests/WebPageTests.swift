import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import HummingbirdWSClient
import Logging
import Missive
@testable import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import NIOCore
import NIOWebSocket
import Synchronization
import Testing

/// The web page: browser sign-in with the session cookie and its same-origin rule, the pages, the voter rule, and
/// two members using the page in real headless Chromium.
@Suite struct WebPageTests {
    // MARK: Sign-in and the cookie

    @Test(arguments: StoreBackend.allCases)
    func theCookieSignsInOnTheAPIMediaAndTheEventStreamAndChangesNeedTheServersOrigin(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend, transport: .live)
        let alice = try running.member("alice")
        _ = try running.member("bob")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        let origin = "http://127.0.0.1:\(running.port)"

        let signedIn = try await running.browserRequest("POST", "/session", body: #"{"token":"\#(alice)"}"#, contentType: "application/json")
        #expect(signedIn.status == 200, "\(signedIn.text)")
        #expect(try signedIn.json["member"] as? String == "alice")
        let setCookie = try #require(signedIn.headers["set-cookie"])
        for part in ["missive_session=", "HttpOnly", "SameSite=Strict", "Path=/"] { #expect(setCookie.contains(part), "\(setCookie)") }
        #expect(!setCookie.contains("Secure"))
        let cookie = try #require(RunningServer.sessionCookie(setCookie))
        // The session id is not kept: only its hash.
        let raw = String(cookie.dropFirst("missive_session=".count))
        for file in [running.server.accounts.path, running.server.accounts.path + "-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            #expect(bytes.range(of: Data(raw.utf8)) == nil, "\(file) holds the session id")
        }

        // Reading with the cookie alone.
        let me = try await running.browserRequest("GET", "/api/v1/me", cookie: cookie)
        let who = try me.json["member"] as? String
        #expect(me.status == 200 && who == "alice", "\(me.text)")
        // Changing needs the server's own Origin; a bearer token needs none.
        let text = #"{"objectName":"MS:Text","content":{"content":"hi"}}"#
        let noOrigin = try await running.browserRequest("POST", "/api/v1/conversations/team/messages", cookie: cookie, body: text)
        #expect(noOrigin.status == 403 && noOrigin.errorCode == "cross-origin", "\(noOrigin.status) \(noOrigin.text)")
        let foreign = try await running.browserRequest("POST", "/api/v1/conversations/team/messages", cookie: cookie, origin: "http://evil.example", body: text)
        #expect(foreign.status == 403 && foreign.errorCode == "cross-origin", "\(foreign.status) \(foreign.text)")
        let own = try await running.browserRequest("POST", "/api/v1/conversations/team/messages", cookie: cookie, origin: origin, body: text)
        #expect(own.status == 201, "\(own.status) \(own.text)")
        #expect(try await running.send(text, to: "team", token: alice).status == 201)

        // Media: uploaded with the token, downloaded with the cookie (as an <img> does).
        let uploaded = try await running.request("POST", "/api/v1/conversations/team/media", token: alice, bytes: MediaTests.png, contentType: "image/png")
        #expect(uploaded.status == 201, "\(uploaded.text)")
        let url = try #require(try uploaded.json["remoteURL"] as? String)
        let image = try await running.browserRequest("GET", url, cookie: cookie)
        #expect(image.status == 200 && image.body == MediaTests.png, "\(image.status)")

        // The event stream: with the server's Origin it opens, with another or none it is refused.
        let hello = try await Self.openStream(port: running.port, cookie: cookie, origin: origin)
        #expect(hello?.contains(#""type":"hello""#) == true && hello?.contains(#""member":"alice""#) == true, "\(hello ?? "nothing")")
        #expect(try await Self.openStream(port: running.port, cookie: cookie, origin: "http://evil.example") == nil)
        #expect(try await Self.openStream(port: running.port, cookie: cookie, origin: nil) == nil)
        await running.stop()
    }

    @Test func aBadExpiredEndedOrRevokedSessionIsRefused() async throws {
        let running = try await RunningServer.start(.sqlite, transport: .live)
        let alice = try running.member("alice")
        let origin = "http://127.0.0.1:\(running.port)"
        func signIn() async throws -> String {
            let answer = try await running.browserRequest("POST", "/session", body: "token=" + alice, contentType: "application/x-www-form-urlencoded")
            // A form is answered with a redirect to the member's conversations.
            #expect(answer.status == 303 && answer.headers["location"] == "/c", "\(answer.status) \(answer.text)")
            return try #require(RunningServer.sessionCookie(answer.headers["set-cookie"] ?? ""))
        }
        func status(_ cookie: String) async throws -> (Int, String?) {
            let answer = try await running.browserRequest("GET", "/api/v1/me", cookie: cookie)
            return (answer.status, answer.errorCode)
        }

        #expect(try await status("missive_session=not-a-session") == (401, "unauthorized"))
        let wrong = try await running.browserRequest("POST", "/session", body: "token=msv_nope", contentType: "application/x-www-form-urlencoded")
        #expect(wrong.status == 401 && wrong.text.contains("not valid") && wrong.headers["set-cookie"] == nil)
        let wrongJSON = try await running.browserRequest("POST", "/session", body: #"{"token":"msv_nope"}"#, contentType: "application/json")
        #expect(wrongJSON.status == 401 && wrongJSON.errorCode == "unauthorized")
        let crossSite = try await running.browserRequest(
            "POST", "/session", origin: "http://evil.example", body: "token=" + alice, contentType: "application/x-www-form-urlencoded")
        #expect(crossSite.status == 403 && crossSite.headers["set-cookie"] == nil)

        // Expired.
        let expiring = try await signIn()
        #expect(try await status(expiring).0 == 200)
        try running.server.accounts.setSessionExpiry(String(expiring.dropFirst("missive_session=".count)), at: Int64(Date().timeIntervalSince1970 * 1000) - 1)
        #expect(try await status(expiring) == (401, "unauthorized"))

        // Signed out: the cookie is cleared and the session ends; signing out from another site is refused.
        let ending = try await signIn()
        let forged = try await running.browserRequest("POST", "/session/end", cookie: ending, origin: "http://evil.example")
        #expect(forged.status == 403 && forged.errorCode == "cross-origin")
        #expect(try await status(ending).0 == 200)
        let out = try await running.browserRequest("POST", "/session/end", cookie: ending, origin: origin)
        #expect(out.status == 303 && out.headers["location"] == "/login" && out.headers["set-cookie"]?.contains("Max-Age=0") == true)
        #expect(try await status(ending) == (401, "unauthorized"))

        // Revoking the member's tokens ends every session they opened.
        let first = try await signIn()
        let second = try await signIn()
        #expect(try await status(first).0 == 200)
        #expect(try await status(second).0 == 200)
        try running.server.accounts.revoke(member: "alice")
        #expect(try await status(first) == (401, "unauthorized"))
        #expect(try await status(second) == (401, "unauthorized"))
        #expect(try await running.browserRequest("GET", "/c", cookie: second).headers["location"] == "/login")
        await running.stop()
    }

    @Test func thePagesNeedASessionShowOnlyTheMembersConversationsAndCarryThePolicy() async throws {
        let running = try await RunningServer.start(.sqlite, transport: .live)
        let alice = try running.member("alice")
        let zoe = try running.member("zoe")
        try await running.makeConversation("team", token: alice)
        #expect(try await running.send(#"{"id":"m1","objectName":"MS:Text","content":{"content":"<b>bold</b> & <script>x()</script>"}}"#, to: "team", token: alice).status == 201)
        let cookie = try await running.signIn(alice)
        let zoeCookie = try await running.signIn(zoe)

        for path in ["/c", "/c/team"] {
            let anonymous = try await running.browserRequest("GET", path)
            #expect(anonymous.status == 303 && anonymous.headers["location"] == "/login", "\(path)")
        }
        for path in ["/", "/login", "/c", "/c/team"] {
            let page = try await running.browserRequest("GET", path, cookie: path.hasPrefix("/c") ? cookie : nil)
            #expect(page.status == 200, "\(path): \(page.status)")
            #expect(page.headers["content-security-policy"] == ChatServer.pagePolicy, "\(path)")
            #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
            // No inline script or handler, no inline style: only the server's own files.
            #expect(!page.text.contains("<script>") && !page.text.contains("style=") && !page.text.contains(" on"), "\(path)")
        }
        let list = try await running.browserRequest("GET", "/c", cookie: cookie)
        #expect(list.text.contains(#"href="/c/team""#))
        let page = try await running.browserRequest("GET", "/c/team", cookie: cookie)
        // The content is text: escaped by the renderer.
        #expect(page.text.contains("&lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;x()&lt;/script&gt;"), "\(page.text)")
        #expect(page.text.contains(#"data-action="demo.poll.create""#))
        // A conversation of someone else's is not found, as one that does not exist.
        let outsider = try await running.browserRequest("GET", "/c/team", cookie: zoeCookie)
        #expect(outsider.status == 404 && outsider.headers["content-security-policy"] == ChatServer.pagePolicy)
        #expect(try await running.browserRequest("GET", "/c/nothing", cookie: zoeCookie).status == 404)
        #expect(try await running.browserRequest("GET", "/c/team/m/m1", cookie: zoeCookie).status == 404)
        let fragment = try await running.browserRequest("GET", "/c/team/m/m1", cookie: cookie)
        #expect(fragment.status == 200 && fragment.text.hasPrefix("<article") && fragment.text.contains("&lt;script&gt;"))
        // The static files.
        let script = try await running.browserRequest("GET", "/static/missive.js")
        #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true && !script.text.contains("innerHTML = frame"))
        let css = try await running.browserRequest("GET", "/static/missive.css")
        #expect(css.status == 200 && css.text.contains(".pct-37"))

        // The list's form starts a conversation, listed at once for each member, without a message yet.
        let origin = "http://127.0.0.1:\(running.port)"
        let form = "application/x-www-form-urlencoded"
        let made = try await running.browserRequest("POST", "/c", cookie: cookie, origin: origin, body: "id=lunch&members=zoe%2C+nobody", contentType: form)
        #expect(made.status == 400 && made.text.contains("no member named nobody"), "\(made.status) \(made.text)")
        let started = try await running.browserRequest("POST", "/c", cookie: cookie, origin: origin, body: "id=lunch&members=zoe", contentType: form)
        #expect(started.status == 303 && started.headers["location"] == "/c/lunch", "\(started.status)")
        #expect(try await running.browserRequest("GET", "/c", cookie: zoeCookie).text.contains(#"href="/c/lunch""#))
        let again = try await running.browserRequest("POST", "/c", cookie: zoeCookie, origin: origin, body: "id=lunch", contentType: form)
        #expect(again.status == 409 && again.text.contains("taken"))
        let foreign = try await running.browserRequest("POST", "/c", cookie: cookie, origin: "http://evil.example", body: "id=other", contentType: form)
        #expect(foreign.status == 403)
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aMemberVotesOnlyAsItselfAndThePageHasItsVoterFilledIn(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend, transport: .live)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        #expect(try await running.send(#"{"id":"p","objectName":"demo:poll","content":{"question":"Lunch?","options":["Pizza","Sushi"]}}"#, to: "team", token: alice).status == 201)
        // With a token: as another member, refused; as itself, counted.
        let asAlice = try await running.act("vote", on: "p", in: "team", token: bob, arguments: #"[0, "alice"]"#)
        #expect(asAlice.status == 403 && asAlice.errorCode == "not-yourself", "\(asAlice.text)")
        #expect(try await running.act("vote", on: "p", in: "team", token: bob, arguments: #"[0, "bob"]"#).status == 200)
        // With the cookie (the page): the view's arguments only, and the server adds the member.
        let cookie = try await running.signIn(bob)
        let origin = "http://127.0.0.1:\(running.port)"
        let path = "/api/v1/conversations/team/messages/p/actions/vote"
        let filled = try await running.browserRequest("POST", path, cookie: cookie, origin: origin, body: #"{"arguments":[1]}"#)
        #expect(filled.status == 200, "\(filled.text)")
        let forged = try await running.browserRequest("POST", path, cookie: cookie, origin: origin, body: #"{"arguments":[0,"alice"]}"#)
        #expect(forged.status == 403 && forged.errorCode == "not-yourself", "\(forged.text)")
        #expect(try await ActionTests.tallies(running.server.store, "p") == ([0, 1], ["bob": 1]))
        await running.stop()
    }

    // MARK: A real browser

    /// Alice and Bob, each in a browser context of their own (their own cookies) in headless Chromium: both sign in
    /// through the form, alice creates a poll with the composer, bob's page shows it live, bob votes, and alice's
    /// page shows the new tally without a reload; the sample conversation's hostile messages stay inert, and the
    /// server's pages cause no violation of their policy.
    @Test(.timeLimit(.minutes(4))) func twoMembersUseThePageInChromium() async throws {
        guard let chromium = Self.chromiumPath() else {
            Issue.record("chromium is not installed, and the web page test needs a real headless Chromium: run .ci/run (it installs it), or apt-get install -y chromium")
            return
        }
        let running = try await RunningServer.start(.sqlite, transport: .live)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        try await running.makeConversation("team", token: alice, members: ["bob"])
        #expect(try await running.send(#"{"objectName":"MS:Text","content":{"content":"Hello Bob, shall we pick lunch?"}}"#, to: "team", token: alice).status == 201)
        #expect(try await running.send(#"{"objectName":"MS:Text","content":{"content":"Sure, make a poll"}}"#, to: "team", token: bob).status == 201)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let browser = try await DevToolsClient(chromium: chromium, folder: folder)
        do {
            try await Self.drive(browser, running: running, tokens: ["alice": alice, "bob": bob])
        } catch {
            Issue.record("\(error)")
        }
        await browser.close()
        await running.stop()
    }

    private static func drive(_ browser: DevToolsClient, running: RunningServer, tokens: [String: String]) async throws {
        let base = "http://127.0.0.1:\(running.port)"
        var sessions: [String: String] = [:]
        for name in ["alice", "bob"] {
            let context = try #require(try await browser.call("Target.createBrowserContext", #"{"disposeOnDetach":true}"#)["browserContextId"] as? String)
            let target = try #require(
                try await browser.call("Target.createTarget", #"{"url":"about:blank","browserContextId":"\#(context)"}"#)["targetId"] as? String)
            let session = try #require(try await browser.call("Target.attachToTarget", #"{"targetId":"\#(target)","flatten":true}"#)["sessionId"] as? String)
            for method in ["Page.enable", "Runtime.enable", "Log.enable"] { try await browser.call(method, session: session) }
            try await browser.call(
                "Emulation.setDeviceMetricsOverride", #"{"width":900,"height":1200,"deviceScaleFactor":1,"mobile":false}"#, session: session)
            // Every violation of the page's policy, as the page itself hears of it.
            try await browser.call(
                "Page.addScriptToEvaluateOnNewDocument",
                #"{"source":"window.__violations = []; document.addEventListener('securitypolicyviolation', function (e) { window.__violations.push(e.violatedDirective + ' ' + e.blockedURI); });"}"#,
                session: session)
            sessions[name] = session
        }
        let aliceSession = try #require(sessions["alice"])
        let bobSession = try #require(sessions["bob"])

        // Both sign in through the form, land on their conversations, and open the team's page.
        for (name, session) in sessions.sorted(by: { $0.key < $1.key }) {
            try await browser.call("Page.navigate", #"{"url":"\#(base)/login"}"#, session: session)
            #expect(try await browser.waitUntil("document.readyState === 'complete' && document.querySelector('form.sign-in')", session: session), "\(name): the sign-in form")
            let token = try #require(tokens[name])
            _ = try await browser.evaluate(
                "document.querySelector('input[name=token]').value = '\(token)'; document.querySelector('form.sign-in').requestSubmit(); true", session: session)
            let listed = try await browser.waitUntil("location.pathname === '/c' && document.querySelector('a[href=\"/c/team\"]')", session: session)
            let shown = try await browser.evaluate("location.href + ' ' + document.body.innerHTML", session: session)
            #expect(listed, "\(name): the list: \(shown)")
            _ = try await browser.evaluate("document.querySelector('a[href=\"/c/team\"]').click(); true", session: session)
            #expect(try await browser.waitUntil("location.pathname === '/c/team' && document.body.dataset.live === 'yes'", session: session), "\(name): the page, live")
            // The cookie is not readable by the page's scripts.
            #expect(try await browser.evaluate("document.cookie", session: session) == "\"\"")
        }
        // Bob sends text with the composer.
        _ = try await browser.evaluate(
            "document.querySelector('#composer textarea').value = 'Sounds good to me'; document.querySelector('#composer').requestSubmit(); true", session: bobSession)
        let sent = try await browser.waitUntil("document.getElementById('messages').textContent.includes('Sounds good to me')", session: aliceSession)
        let bobStatus = try await browser.evaluate("document.getElementById('status').textContent", session: bobSession)
        #expect(sent, "bob's text reaches alice's page; bob's page says \(bobStatus)")

        // The sample conversation's hostile messages, sent into the conversation, do nothing on either page.
        let hostile = try Fixtures.conversationLines().map { String(decoding: $0, as: UTF8.self) }
            .filter { $0.contains("<script") || $0.contains("javascript:") || $0.contains("onerror") }
        #expect(hostile.count >= 2, "the sample conversation has hostile messages")
        for line in hostile { #expect(try await running.send(line, to: "team", token: tokens["alice"] ?? "").status == 201, "\(line)") }
        let ids = try hostile.map { line -> String in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require(object["id"] as? String)
        }
        for session in [aliceSession, bobSession] {
            let shown = ids.map { "Array.from(document.querySelectorAll('article.msg')).some(a => a.dataset.id === '\($0)')" }.joined(separator: " && ")
            #expect(try await browser.waitUntil(shown, session: session), "the hostile messages are on the page")
            // Give anything they carried a moment to run.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await browser.evaluate("document.querySelectorAll('script').length", session: session) == "1", "only the page's own script")
            #expect(try await browser.evaluate("document.querySelectorAll('script')[0].getAttribute('src')", session: session) == "\"/static/missive.js\"")
            #expect(try await browser.evaluate("document.title === 'team · Missive'", session: session) == "true", "no script changed the title")
            #expect(try await browser.evaluate("document.getElementById('messages').textContent.includes('<script>')", session: session) == "true", "shown as text")
            let handlers = "Array.from(document.querySelectorAll('*')).some(e => Array.from(e.attributes).some(a => a.name.startsWith('on')))"
            #expect(try await browser.evaluate(handlers, session: session) == "false", "no event handler attribute")
            #expect(try await browser.evaluate("Array.from(document.querySelectorAll('a[href]')).some(a => /^\\s*javascript:/i.test(a.getAttribute('href')))", session: session) == "false")
            #expect(try await browser.evaluate("document.querySelectorAll('img[src], iframe, object, embed').length", session: session) == "0")
            #expect(try await browser.evaluate("JSON.stringify(window.__violations)", session: session) == "\"[]\"", "policy violations")
        }
        // A mark that a reload would wipe.
        _ = try await browser.evaluate("window.__sameDocument = true", session: aliceSession)

        // Alice creates a poll with the composer; it reaches bob's page live.
        _ = try await browser.evaluate(
            """
            (function () {
              const form = document.querySelector('form.compose-form[data-action="demo.poll.create"]');
              form.closest('details').open = true;
              form.querySelector('[name=a0]').value = 'Lunch?';
              form.querySelector('[name=a1]').value = 'Pizza\\nSushi\\nSalad';
              form.requestSubmit();
              return true;
            })()
            """, session: aliceSession)
        let pollOnPage = "Array.from(document.querySelectorAll('article.msg')).find(a => a.textContent.includes('Lunch?'))"
        #expect(try await browser.waitUntil(pollOnPage, session: bobSession), "bob's page shows the poll")
        #expect(try await browser.waitUntil(pollOnPage, session: aliceSession), "alice's page shows the poll")

        // Bob votes for Sushi; alice's page shows the tally without a reload.
        #expect(try await browser.waitUntil("(\(pollOnPage)).querySelectorAll('button[data-action=vote]:not([disabled])').length === 3", session: bobSession))
        _ = try await browser.evaluate("(\(pollOnPage)).querySelectorAll('button[data-action=vote]')[1].click(); true", session: bobSession)
        let tally = "Array.from((\(pollOnPage)).querySelectorAll('[role=progressbar]')).map(b => b.getAttribute('aria-valuenow')).join(',')"
        #expect(try await browser.waitUntil("\(tally) === '0,100,0'", session: aliceSession), "alice's page shows bob's vote")
        #expect(try await browser.evaluate(tally, session: aliceSession) == "\"0,100,0\"")
        #expect(try await browser.evaluate("window.__sameDocument === true", session: aliceSession) == "true", "alice's page was not reloaded")
        #expect(try await browser.evaluate("(\(pollOnPage)).textContent.includes('1 vote')", session: aliceSession) == "true")
        let pollID = try await browser.evaluate("(\(pollOnPage)).dataset.id", session: aliceSession).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        #expect(try await ActionTests.tallies(running.server.store, pollID) == ([0, 1, 0], ["bob": 1]))

        let events = browser.events()
        #expect(!events.contains { $0.method == "Page.javascriptDialogOpening" }, "a dialog opened")
        let problems = events.filter { event in
            (event.method == "Log.entryAdded" && (event.text.contains("Content Security Policy") || event.text.contains("Content-Security-Policy")))
                || event.method == "Runtime.exceptionThrown"
                || (event.method == "Runtime.consoleAPICalled" && event.text.contains(#""type":"error""#))
        }
        #expect(problems.isEmpty, "\(problems.map(\.text))")

        // A screenshot of each page, to look at.
        let screenshots = Fixtures.repositoryRoot + "/.build"
        for (name, session) in sessions {
            _ = try await browser.evaluate("window.scrollTo(0, document.body.scrollHeight); true", session: session)
            let shot = try await browser.call("Page.captureScreenshot", #"{"format":"png"}"#, session: session)
            let encoded = try #require(shot["data"] as? String)
            let data = try #require(Data(base64Encoded: encoded))
            #expect(data.count > 10_000 && data.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
            try data.write(to: URL(fileURLWithPath: screenshots + "/web-page-\(name).png"))
        }
    }

    /// The `chromium` (or `chromium-browser`) on `PATH`.
    static func chromiumPath() -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for name in ["chromium", "chromium-browser"] {
            for directory in directories where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }

    /// Opens the event stream with a cookie and an Origin (exactly the headers given: the WebSocket client library
    /// adds an Origin of its own), over a plain socket; the first frame's text, or `nil` when the upgrade was
    /// refused.
    static func openStream(port: Int, cookie: String, origin: String?) async throws -> String? {
        // The socket calls block: on a thread of their own, not one of the concurrency pool's two.
        try await Fixtures.offThePool { try openStreamBlocking(port: port, cookie: cookie, origin: origin) }
    }

    private static func openStreamBlocking(port: Int, cookie: String, origin: String?) throws -> String? {
        let descriptor = try loopbackSocket(port: port)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var handshake = "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        handshake += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nCookie: \(cookie)\r\n"
        if let origin { handshake += "Origin: \(origin)\r\n" }
        handshake += "\r\n"
        let bytes = Array(handshake.utf8)
        try #require(bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) } == bytes.count)
        // The answer's head, then one unmasked text frame.
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func more() -> Bool {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { received += buffer[0..<count] }
            return count > 0
        }
        var headEnd: Int?
        while headEnd == nil {
            guard more() else { return nil }
            headEnd = received.indices.dropLast(3).first { received[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }
        }
        let head = String(decoding: received[..<headEnd!], as: UTF8.self)
        guard head.hasPrefix("HTTP/1.1 101") else { return nil }
        var frame = Array(received[(headEnd! + 4)...])
        func need(_ count: Int) -> Bool {
            while frame.count < count {
                let before = received.count
                guard more() else { return false }
                frame += received[before...]
            }
            return true
        }
        guard need(2) else { return nil }
        var length = Int(frame[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard need(4) else { return nil }
            length = Int(frame[2]) << 8 | Int(frame[3])
            offset = 4
        }
        guard need(offset + length) else { return nil }
        return String(decoding: frame[offset..<offset + length], as: UTF8.self)
    }
}

extension RunningServer {
    /// One request as a browser without a token sends it: the cookie and the Origin given, no cookie kept, no
    /// redirect followed.
    func browserRequest(
        _ method: String, _ path: String, cookie: String? = nil, origin: String? = nil, body: String? = nil, contentType: String = "application/json"
    ) async throws -> HTTPAnswer {
        if isInProcess {
            // The router keeps no cookie and follows no redirect either.
            var headers: [String: String] = [:]
            if let cookie { headers["Cookie"] = cookie }
            if let origin { headers["Origin"] = origin }
            return try await request(method, path, token: nil, bytes: body.map { Array($0.utf8) }, contentType: body.map { _ in contentType }, headers: headers)
        }
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.httpShouldHandleCookies = false
        if let cookie { request.setValue(cookie, forHTTPHeaderField: "Cookie") }
        if let origin { request.setValue(origin, forHTTPHeaderField: "Origin") }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await Fixtures.load(request, session: session)
        return try HTTPAnswer(data: data, response: response)
    }

    /// Signs in with `token` (as JSON) and returns the `Cookie` header value of the session.
    func signIn(_ token: String) async throws -> String {
        let answer = try await browserRequest("POST", "/session", body: #"{"token":"\#(token)"}"#)
        #expect(answer.status == 200, "\(answer.text)")
        return try #require(Self.sessionCookie(answer.headers["set-cookie"] ?? ""))
    }

    /// `missive_session=…` from a `Set-Cookie` value.
    static func sessionCookie(_ setCookie: String) -> String? {
        guard let first = setCookie.split(separator: ";").first, first.hasPrefix("missive_session="), first.count > "missive_session=".count else { return nil }
        return String(first)
    }
}

/// A session delegate that follows no redirect, so that a test sees the `303` itself.
final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
