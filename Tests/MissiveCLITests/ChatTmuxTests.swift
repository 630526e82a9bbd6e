import Foundation
import MissiveTestSupport
import Testing

/// `missive chat` on a real terminal: tmux runs it in a detached session of a fixed size on a socket of its own,
/// and the test types with send-keys and reads the screen with capture-pane, as a person would.
@Suite struct ChatTmuxTests {
    /// tmux on its own socket, so that it never touches another tmux server.
    struct Tmux {
        let socket = "missive-chat-\(getpid())-\(UUID().uuidString.prefix(8))"

        @discardableResult
        func run(_ arguments: String...) async throws -> Fixtures.Run {
            try await Fixtures.run("/usr/bin/env", ["tmux", "-L", socket] + arguments, timeout: .seconds(20), priority: .immediate)
        }

        /// The screen and its history, as text.
        func screen() async throws -> String {
            try await run("capture-pane", "-p", "-J", "-S", "-500", "-t", "chat").stdout
        }

        /// Waits (20 s at most) until the screen satisfies `condition`; the last screen read.
        func waitFor(_ condition: (String) -> Bool) async throws -> (Bool, String) {
            let deadline = ContinuousClock.now + .seconds(60)
            var text = try await screen()
            while !condition(text) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                text = try await screen()
            }
            return (condition(text), text)
        }

        /// Types a line and Enter.
        func type(_ line: String) async throws {
            try await run("send-keys", "-t", "chat", "-l", line)
            try await run("send-keys", "-t", "chat", "Enter")
        }
    }

    @Test(SanitizerRun.timeLimit(minutes: 10)) func aMemberReadsAConversationSendsAndVotesInATerminal() async throws {
        let host = try ChatHost(plugins: [], useBuiltExecutable: true)
        let (server, tokens) = try await ChatServer.start(host, members: ["alice", "bob"])
        defer { server.process.stop() }
        let alice = try #require(tokens["alice"])
        let bob = try #require(tokens["bob"])
        #expect(try await server.api("POST", "conversations", token: bob, body: #"{"id":"team","members":["alice"]}"#).status == 201)
        for text in ["Hello alice", "Lunch at noon?"] {
            let sent = try await server.api("POST", "conversations/team/messages", token: bob, body: #"{"objectName":"MS:Text","content":{"content":"\#(text)"}}"#)
            #expect(sent.status == 201, "\(sent.json)")
        }
        let poll = try await server.api("POST", "conversations/team/compose/demo.poll.create", token: bob, body: #"{"arguments":["Where?","Pizza\nSushi"]}"#)
        #expect(poll.status == 201, "\(poll.json)")

        let tmux = Tmux()
        defer {
            _ = try? Fixtures.runBlocking("/usr/bin/env", ["tmux", "-L", tmux.socket, "kill-server"])
            // tmux leaves its socket file behind.
            let folder = (ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp") + "/tmux-\(getuid())/"
            try? FileManager.default.removeItem(atPath: folder + tmux.socket)
        }
        let environment = host.environment.filter { ["XDG_DATA_HOME", "MISSIVE_SYSTEM_PLUGIN_DIR", "MISSIVE_METADATA_CACHE", "MISSIVE_QUARANTINE", "PATH"].contains($0.key) }
            .map { "\($0.key)='\($0.value)'" }.sorted().joined(separator: " ")
        let command = "env -u NO_COLOR \(environment) TERM=xterm-256color '\(host.executable)' chat --server \(server.url) --token \(alice)"
        // The tmux server the first command starts keeps the descriptors it inherits open, so Foundation would wait
        // for it to end: the command is started and left alone, and the screen is read until the client draws.
        let starter = Process()
        starter.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        starter.arguments = ["tmux", "-L", tmux.socket, "new-session", "-d", "-s", "chat", "-x", "100", "-y", "40", command]
        starter.standardInput = FileHandle.nullDevice
        starter.standardOutput = FileHandle.nullDevice
        starter.standardError = FileHandle.nullDevice
        try starter.run()

        var (seen, screen) = try await tmux.waitFor { $0.contains("1. team  3 unread") }
        #expect(seen, "\(screen)")
        #expect(screen.contains("> "), "a prompt on a terminal: \(screen)")

        try await tmux.type("/open team")
        (seen, screen) = try await tmux.waitFor { $0.contains("team: 0 unread") }
        #expect(seen, "\(screen)")
        for text in ["Hello alice", "Lunch at noon?", "Where?", "Pizza · 0 votes", "[1]", "[3]"] { #expect(screen.contains(text), "\(text): \(screen)") }
        #expect(try await server.api("GET", "conversations/team", token: alice).json["unreadCount"] as? Int == 0)

        try await tmux.type("/list")
        (seen, screen) = try await tmux.waitFor { $0.contains("1. team  0 unread") }
        #expect(seen, "\(screen)")

        try await tmux.type("Sounds good")
        (seen, screen) = try await tmux.waitFor { $0.contains("[4]") }
        #expect(seen, "\(screen)")
        let last = try #require(try await server.messages("team", token: bob).last)
        #expect(last["senderID"] as? String == "alice")
        #expect((envelopeOf(last)["content"] as? [String: Any])?["content"] as? String == "Sounds good", "\(last)")

        try await tmux.type("/act 3 vote 1")
        (seen, screen) = try await tmux.waitFor { $0.contains("[3] changed:") && $0.contains("Sushi · 1 vote") }
        #expect(seen, "\(screen)")
        let tally = try #require(try await server.messages("team", token: bob).first { $0["objectName"] as? String == "demo:poll" })
        #expect((envelopeOf(tally)["content"] as? [String: Any])?["votes"] as? [Int] == [0, 1], "\(tally)")

        try await tmux.type("/quit")
        try await tmux.run("kill-server")
    }
}
