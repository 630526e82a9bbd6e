import Foundation
import Missive
import MissiveClient
import MissiveRendering
import MissiveStore

/// One run of `missive chat`: the commands a member types, the local store kept in step by ``ChatSync``, and what
/// is drawn. Every command's error is one line; nothing a command or the server does ends the session but
/// `/quit` and the end of the input.
///
/// The session's parts by concern: the commands and drawing here; actions, sending, plugins and the sync's events
/// in the extensions of the same name; ``ChatWords`` for splitting a line; ``ChatOutput`` for where it writes.
package actor ChatSession {
    let sync: ChatSync
    let output: ChatOutput
    let width: Int
    let colors: Bool
    /// Discovers the plugins again, for `/reload` and the automatic check.
    let reload: @Sendable () throws -> MessageRegistry
    /// What the plugin folders hold now, to notice a change.
    let pluginFingerprint: @Sendable () -> String

    var registry: MessageRegistry
    /// The open conversation.
    var open: String?
    /// The open conversation's messages as numbered, in order: message N is `numbered[N - 1]`.
    var numbered: [String] = []
    /// The conversations as `/list` last numbered them.
    var listed: [String] = []
    /// The newest message marked read in each conversation, so that a mark is sent once.
    var markedUpTo: [String: String] = [:]
    /// Whether the event stream is connected, and whether it ever was.
    var online = false
    /// Messages not sent because the server could not be reached, oldest first, each with its conversation: sent
    /// again, in order, when the connection is back. Their ids were made here, so a message the server did take
    /// before the connection broke is answered as the same message, not stored twice.
    var outbox: [(envelope: Envelope, target: String)] = []
    /// The date separator drawn last in the open conversation, so that new messages of the same day get none.
    var lastSeparator: String?
    /// Conversations this client started, whose "you are in" notice would repeat what `/new` said.
    var started: Set<String> = []
    var connectedOnce = false
    var lastFingerprint = ""

    /// A session of the member `sync` signs in as, drawing `width` columns wide with the plugins of `registry`.
    package init(
        sync: ChatSync, registry: MessageRegistry, output: ChatOutput, width: Int, colors: Bool, reload: @escaping @Sendable () throws -> MessageRegistry,
        pluginFingerprint: @escaping @Sendable () -> String
    ) {
        self.sync = sync
        self.registry = registry
        self.output = output
        self.width = width
        self.colors = colors
        self.reload = reload
        self.pluginFingerprint = pluginFingerprint
    }

    /// Syncs, shows the conversations, then runs the commands of standard input until `/quit` or its end.
    package func run() async {
        let (lines, sink) = AsyncStream.makeStream(of: String.self)
        // Standard input is read on a thread of its own (a blocking read would hold a thread of the pool), with
        // read(2) rather than stdio: a thread blocked in stdio's reading holds the stream's lock, which `exit`
        // waits for when the session ends.
        Thread.detachNewThread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: 0x0A) {
                    var line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    if line.last == 0x0D { line.removeLast() }
                    // Control characters a terminal passes on (Ctrl-L, a stray escape) are not part of what was meant.
                    line.removeAll { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }
                    sink.yield(String(decoding: line, as: UTF8.self))
                }
            }
            if !pending.isEmpty { sink.yield(String(decoding: pending, as: UTF8.self)) }
            sink.finish()
        }
        await run(lines: lines)
    }

    /// Syncs, shows the conversations (after the first sync, or 30 s), then runs `lines` as commands until `/quit`
    /// or their end; the sync and the plugin watch stop with it.
    package func run(lines: some AsyncSequence<String, Never> & Sendable) async {
        lastFingerprint = pluginFingerprint()
        let syncTask = Task { await sync.run { change in await self.handle(change) } }
        let watchTask = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                await self.checkPlugins()
            }
        }
        defer {
            syncTask.cancel()
            watchTask.cancel()
        }
        // The first sync, for 30 s at most: the list is what the member sees first.
        let deadline = ContinuousClock.now + .seconds(30)
        while !connectedOnce && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if !connectedOnce { output.say("not connected yet: the messages kept here are shown; the server's will follow") }
        await list()
        for await line in lines {
            guard await perform(line) else { return }
        }
    }

    // MARK: Commands

    /// Runs one line; `false` to end the session.
    package func perform(_ line: String) async -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            output.showPrompt()
            return true
        }
        guard trimmed.hasPrefix("/") else {
            await sendText(trimmed, parentID: nil)
            return true
        }
        let words = ChatWords.split(trimmed)
        let command = words.first?.text ?? ""
        let rest = Array(words.dropFirst())
        switch command {
        case "/quit", "/exit":
            if !outbox.isEmpty {
                output.say("\(Self.count(outbox.count, "message")) not sent: the server could not be reached")
            }
            return false
        case "/help":
            output.say(Self.help)
        case "/list":
            await list()
        case "/open":
            await openConversation(rest.first?.text)
        case "/actions":
            await showActions(rest.first?.text)
        case "/act":
            await act(rest)
        case "/compose":
            await compose(rest)
        case "/send":
            await sendContent(rest, rawLine: trimmed)
        case "/quote":
            await quote(rest, rawLine: trimmed)
        case "/forward":
            await forward(rest)
        case "/new":
            await newConversation(rest.map(\.text))
        case "/reload":
            await reloadPlugins(automatic: false)
        default:
            output.say("unknown command \(command): /help lists the commands")
        }
        return true
    }

    static let help = """
        /list                      the conversations and their unread counts
        /open NAME|NUMBER          open a conversation: its messages, numbered; they are marked read
        TEXT                       send TEXT to the open conversation
        /actions [N]               the composer actions, or message N's actions
        /act N ACTION [ARG...]     perform an action on message N (/act 3 vote 1)
        /compose ACTION [ARG...]   make a message with a composer action and send it
        /send TYPE CONTENT         send a message of TYPE with CONTENT (JSON) made by this host's plugin
        /quote N TEXT              reply to message N with TEXT, quoting it
        /forward N [CONVERSATION]  send message N again, its content unchanged, here or to CONVERSATION
        /new NAME MEMBER...        start a conversation with the members
        /reload                    read the plugin folders again and redraw
        /help                      this list
        /quit                      leave
        Arguments are JSON values (1, true, "two words"); a word that is not JSON is a string.
        """

    /// `/list`: the conversations, newest activity first, then those without a message, each with its unread count.
    func list() async {
        do {
            let summaries = try await sync.store.conversations()
            var ids = summaries.map(\.id)
            for id in await sync.conversations.sorted() where !ids.contains(id) { ids.append(id) }
            listed = ids
            guard !ids.isEmpty else { return output.say("no conversations yet: /new NAME MEMBER... starts one") }
            var lines = ["conversations:"]
            for (index, id) in ids.enumerated() {
                let summary = summaries.first { $0.id == id }
                let unread = summary?.unreadCount ?? 0
                var line = "  \(index + 1). \(id)  \(unread) unread"
                if let last = summary?.lastMessage { line += "  (\(last.senderID): \(TextHygiene.cut(last.digest, toCodePoints: 40)))" }
                lines.append(line)
            }
            output.say(lines.joined(separator: "\n"))
        } catch {
            output.say("cannot list the conversations: \(error)")
        }
    }

    /// `/open NAME|NUMBER`.
    func openConversation(_ name: String?) async {
        guard let name else { return output.say("/open needs a conversation's name or its number in /list") }
        var id = name
        if let number = Int(name), listed.indices.contains(number - 1) { id = listed[number - 1] }
        let known = await sync.conversations
        let stored = (try? await sync.store.conversations().map(\.id)) ?? []
        guard known.contains(id) || stored.contains(id) else {
            return output.say("no conversation \(id) of yours: /list shows them")
        }
        open = id
        numbered = []
        lastSeparator = nil
        output.say("── \(id) ──")
        await drawNew()
    }

    /// Draws the open conversation's messages not drawn yet, numbered, and marks the newest read.
    func drawNew() async {
        guard let open else { return }
        do {
            let (transcript, renderer) = try await layout(of: open)
            var lines: [String] = []
            var pendingSeparator: String?
            for (row, block) in zip(transcript.rows, renderer.blocks(for: transcript)) {
                switch row {
                case .dateSeparator:
                    pendingSeparator = render(block, renderer)
                case .message(let item):
                    let id = item.message.envelope.id
                    guard !numbered.contains(id) else { continue }
                    numbered.append(id)
                    if let separator = pendingSeparator, separator != lastSeparator {
                        lines.append(separator)
                        lastSeparator = separator
                    }
                    pendingSeparator = nil
                    lines.append("[\(numbered.count)]")
                    lines.append(render(block, renderer))
                }
            }
            if numbered.isEmpty && lines.isEmpty { lines.append(TerminalRenderer.emptyText) }
            if !lines.isEmpty { output.drawn(lines.joined(separator: "\n")) }
            await markNewestRead(open)
        } catch {
            output.say("cannot draw \(open): \(error)")
        }
    }

    /// Draws message N again (an edit).
    func redraw(id: String) async {
        guard let open, let index = numbered.firstIndex(of: id) else { return }
        do {
            let (transcript, renderer) = try await layout(of: open)
            for (row, block) in zip(transcript.rows, renderer.blocks(for: transcript)) {
                if case .message(let item) = row, item.message.envelope.id == id {
                    output.drawn("[\(index + 1)] changed:\n" + render(block, renderer))
                }
            }
        } catch {
            output.say("cannot draw \(open): \(error)")
        }
    }

    func render(_ block: TerminalBlock, _ renderer: TerminalRenderer) -> String {
        var lines = block.lines.map { $0.rendered(colors: renderer.colors) }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    /// The open conversation laid out as the renderer draws it.
    func layout(of conversation: String) async throws -> (Transcript, TerminalRenderer) {
        let stored = try await sync.store.messages(inConversation: conversation)
        var messages: [Message] = []
        for message in stored { messages.append(try message.decoded(with: registry)) }
        var byID: [String: Message] = [:]
        for message in messages { byID[message.envelope.id] = message }
        let registry = registry
        let transcript = Transcript(
            messages: messages, currentUserID: sync.member, actions: registry.actions(for:), original: { byID[$0] })
        return (transcript, TerminalRenderer(width: width, colors: colors))
    }

    /// Moves the read mark (server and local store) to the newest message of a conversation, once.
    func markNewestRead(_ conversation: String) async {
        guard let newest = numbered.last, markedUpTo[conversation] != newest else { return }
        do {
            let before = try await sync.store.unreadCount(conversation: conversation)
            let left = try await sync.markRead(conversation: conversation, upTo: newest)
            markedUpTo[conversation] = newest
            if before > 0 { output.say("\(conversation): \(left) unread") }
        } catch {
            output.say("cannot mark \(conversation) read: \(error)")
        }
    }

    /// The stored message numbered N in the open conversation.
    func message(numbered word: ChatWords.Word?) async -> StoredMessage? {
        guard let open else {
            output.say("no conversation is open: /open NAME first")
            return nil
        }
        guard let word, let number = Int(word.text), numbered.indices.contains(number - 1) else {
            output.say("no message \(word?.text ?? "") in \(open): messages are numbered 1 to \(numbered.count)")
            return nil
        }
        do {
            guard let stored = try await sync.store.message(id: numbered[number - 1]) else {
                output.say("message \(number) was deleted")
                return nil
            }
            return stored
        } catch {
            output.say("cannot read message \(number): \(error)")
            return nil
        }
    }
}
