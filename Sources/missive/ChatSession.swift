import Foundation
import Missive
import MissiveClient
import MissiveRendering
import MissiveStore

/// One run of `missive chat`: the commands a member types, the local store kept in step by ``ChatSync``, and what
/// is drawn. Every command's error is one line; nothing a command or the server does ends the session but
/// `/quit` and the end of the input.
actor ChatSession {
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

    init(
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
    func run() async {
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
    func perform(_ line: String) async -> Bool {
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

    private func render(_ block: TerminalBlock, _ renderer: TerminalRenderer) -> String {
        var lines = block.lines.map { $0.rendered(colors: renderer.colors) }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    /// The open conversation laid out as the renderer draws it.
    private func layout(of conversation: String) async throws -> (Transcript, TerminalRenderer) {
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
    private func markNewestRead(_ conversation: String) async {
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
    private func message(numbered word: ChatWords.Word?) async -> StoredMessage? {
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

    // MARK: Actions

    /// `/actions [N]`.
    func showActions(_ number: String?) async {
        guard let number else {
            let actions = registry.composerActions
            guard !actions.isEmpty else { return output.say("no composer actions: no plugin here offers one") }
            output.say((["composer actions (/compose ACTION ARGS...):"] + actions.map {
                "  \($0.id)  \($0.title)  creates \($0.objectName)  (\($0.signature.valueParameters.map(\.description).joined(separator: ", ")))"
            }).joined(separator: "\n"))
            return
        }
        guard let stored = await message(numbered: ChatWords.Word(text: number, isQuoted: false)) else { return }
        do {
            let decoded = try stored.decoded(with: registry)
            let actions = registry.actions(for: decoded)
            if decoded.isKnown {
                guard !actions.isEmpty else { return output.say("message \(number) (\(stored.objectName)) has no actions") }
                output.say((["actions of message \(number) (\(stored.objectName)):"] + actions.map {
                    "  \($0.id)  \($0.title)  \($0.yields == .url ? "opens a URL, here" : "changes the message, on the server")  "
                        + "(\($0.signature.valueParameters.map(\.description).joined(separator: ", ")))"
                }).joined(separator: "\n"))
            } else {
                let remote = try await sync.client.actions(conversation: stored.conversationID, message: stored.id)
                guard !remote.isEmpty else {
                    return output.say("message \(number) (\(stored.objectName)) has no actions here: no plugin here draws its type, nor the server's")
                }
                output.say((["actions of message \(number) (\(stored.objectName)), as the server offers them (no plugin here draws it):"] + remote.map {
                    "  \($0.id)  \($0.title)  (\($0.parameters.map { "\($0.type) \($0.name)" }.joined(separator: ", ")))"
                }).joined(separator: "\n"))
            }
        } catch {
            output.say("cannot list the actions of message \(number): \(error)")
        }
    }

    /// `/act N ACTION [ARG...]`: an action that changes the message is performed by the server on its copy; one
    /// that opens a URL runs here, with this host's plugin.
    func act(_ words: [ChatWords.Word]) async {
        guard words.count >= 2 else { return output.say("/act needs a message number and an action: /act 3 vote 1") }
        guard let stored = await message(numbered: words[0]) else { return }
        let action = words[1].text
        var arguments = words.dropFirst(2).map(\.argument)
        do {
            let decoded = try stored.decoded(with: registry)
            let local = decoded.isKnown ? registry.actions(for: decoded).first(where: { $0.id == action }) : nil
            if let local, local.yields == .url {
                switch try registry.perform(action, on: decoded, arguments: arguments) {
                case .url(let url): output.say("open \(url)")
                case .edited: output.say("\(action) changed the message here only; nothing was sent")
                }
                return
            }
            // A member acts as itself: a last `voter` parameter left out is the member, as the web page fills it in.
            let parameters: [(type: String, name: String)]
            if let local {
                parameters = local.signature.valueParameters.map { ($0.type.rawValue, $0.name) }
            } else {
                let remote = (try? await sync.client.actions(conversation: stored.conversationID, message: stored.id)) ?? []
                parameters = (remote.first { $0.id == action }?.parameters ?? []).map { ($0.type, $0.name) }
            }
            if parameters.count == arguments.count + 1, let last = parameters.last, last.name == "voter", last.type == "string" {
                arguments.append(.string(sync.member))
            }
            switch try await sync.client.perform(action, conversation: stored.conversationID, message: stored.id, arguments: arguments) {
            case .edited(let message):
                // Stored now; the edit's event, which every member's client gets, draws it (once).
                try await sync.apply(edit: message)
            case .url(let url):
                output.say("open \(url)")
            }
        } catch let error as ServerClientError {
            output.say("the server refused \(action): \(error.message)")
        } catch let error as MissiveError {
            output.say("\(action) failed: \(error.message)")
        } catch {
            output.say("\(action) failed: \(error)")
        }
    }

    // MARK: Sending

    /// A plain line: an `MS:Text` message (a reply to `parentID` when given).
    func sendText(_ text: String, parentID: String?) async {
        guard let open else { return output.say("no conversation is open: /open NAME first, then type a message") }
        do {
            let message = try registry.compose(
                TextMessage(content: text), id: MessageRegistry.newMessageID(), conversationID: open, senderID: sync.member, sentAt: MessageRegistry.now(),
                parentID: parentID)
            await send(message.envelope)
        } catch {
            output.say("cannot send: \(Self.describe(error))")
        }
    }

    /// `/compose ACTION [ARG...]`: made here, with this host's plugin, then sent.
    func compose(_ words: [ChatWords.Word]) async {
        guard let open else { return output.say("no conversation is open: /open NAME first") }
        guard let action = words.first?.text else { return output.say("/compose needs a composer action: /actions lists them") }
        do {
            let message = try registry.compose(
                action: action, arguments: words.dropFirst().map(\.argument), conversationID: open, senderID: sync.member)
            await send(message.envelope)
        } catch {
            output.say("cannot compose with \(action): \(Self.describe(error))")
        }
    }

    /// `/send TYPE CONTENT`: a message of a type this host has, its content given as JSON.
    func sendContent(_ words: [ChatWords.Word], rawLine: String) async {
        guard let open else { return output.say("no conversation is open: /open NAME first") }
        guard let type = words.first?.text, let contentStart = rawLine.firstIndex(of: "{") else {
            return output.say("/send needs a type and its content as a JSON object: /send demo:link {\"text\":\"Docs\",\"link\":\"https://example.com\"}")
        }
        do {
            let message = try registry.compose(
                objectName: type, content: Array(rawLine[contentStart...].utf8), id: MessageRegistry.newMessageID(), conversationID: open,
                senderID: sync.member, sentAt: MessageRegistry.now())
            await send(message.envelope)
        } catch {
            output.say("cannot send a \(type): \(Self.describe(error))")
        }
    }

    /// `/quote N TEXT`.
    func quote(_ words: [ChatWords.Word], rawLine: String) async {
        guard words.count >= 2, let stored = await message(numbered: words[0]) else {
            if words.count < 2 { output.say("/quote needs a message number and the text: /quote 3 I agree") }
            return
        }
        // The text as typed, after the number.
        var rest = rawLine.drop { $0 != " " }.drop { $0 == " " }
        rest = rest.drop { $0 != " " }.drop { $0 == " " }
        await sendText(String(rest), parentID: stored.id)
    }

    /// `/forward N [CONVERSATION]`: the message's content sent again, byte for byte, under its type (an unknown
    /// type's too), with a new id, this member as the sender.
    func forward(_ words: [ChatWords.Word]) async {
        guard !words.isEmpty else { return output.say("/forward needs a message number: /forward 3 [CONVERSATION]") }
        guard let stored = await message(numbered: words[0]), let open else { return }
        let target = words.count > 1 ? words[1].text : open
        do {
            let original = try stored.envelope()
            let envelope = Envelope(
                id: MessageRegistry.newMessageID(), conversationID: target, senderID: sync.member, sentAt: MessageRegistry.now(),
                objectName: original.objectName, content: original.content, persistence: original.persistence, fallbackText: original.fallbackText,
                pushContent: original.pushContent)
            await send(envelope, to: target)
        } catch {
            output.say("cannot forward message \(words[0].text): \(error)")
        }
    }

    /// Tells who cannot draw the envelope's type, then sends it and draws what the server stored.
    func send(_ envelope: Envelope, to conversation: String? = nil) async {
        let target = conversation ?? envelope.conversationID
        if let others = try? await sync.client.drawing(envelope.objectName, in: target) {
            for other in others where other.draws == false {
                let sees = envelope.fallbackText.map { "the fallback text \"\(TextHygiene.line($0))\"" } ?? "an unsupported message"
                output.say("\(other.member) has no plugin for \(envelope.objectName): they will see \(sees)")
            }
        }
        do {
            switch try await sync.send(envelope: envelope.encoded(), to: target) {
            case .stored:
                if target == open { await drawNew() } else { output.say("sent to \(target)") }
            case .delivered:
                output.say("delivered to who is online (not kept)")
            }
        } catch let error as ServerClientError where error.status == nil && error.code == "unreachable" {
            outbox.append((envelope, target))
            output.say("not sent yet: \(error.message); it is sent when the server is back (\(Self.count(outbox.count, "message")) waiting)")
        } catch let error as ServerClientError {
            output.say("the server refused the message: \(error.message)")
        } catch {
            output.say("cannot send: \(error)")
        }
    }

    /// Sends the messages kept while the server could not be reached, in order, until one cannot be sent again.
    func sendOutbox() async {
        while let (envelope, target) = outbox.first {
            do {
                switch try await sync.send(envelope: envelope.encoded(), to: target) {
                case .stored:
                    if target != open { output.say("sent to \(target)") }
                case .delivered:
                    output.say("delivered to who is online (not kept)")
                }
                outbox.removeFirst()
            } catch let error as ServerClientError where error.status == nil && error.code == "unreachable" {
                return
            } catch let error as ServerClientError {
                outbox.removeFirst()
                output.say("the server refused a message kept while it was away: \(error.message)")
            } catch {
                outbox.removeFirst()
                output.say("cannot send a message kept while the server was away: \(error)")
            }
        }
        if open != nil { await drawNew() }
    }

    /// `3 messages`, `1 message`.
    static func count(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    /// `/new NAME MEMBER...`.
    func newConversation(_ words: [String]) async {
        guard let name = words.first else { return output.say("/new needs a name and the members: /new team bob carol") }
        do {
            try await sync.client.createConversation(name, members: Array(words.dropFirst()))
            await sync.note(conversation: name)
            started.insert(name)
            output.say("started \(name): /open \(name)")
        } catch {
            output.say("cannot start \(name): \(error.message)")
        }
    }

    // MARK: Plugins

    /// Reads the plugin folders again when what they hold changed.
    func checkPlugins() async {
        let now = pluginFingerprint()
        guard now != lastFingerprint else { return }
        await reloadPlugins(automatic: true)
    }

    /// `/reload`: the plugins discovered again, the local store re-decoded with them, the types reported again,
    /// and the open conversation drawn again.
    func reloadPlugins(automatic: Bool) async {
        lastFingerprint = pluginFingerprint()
        do {
            let registry = try reload()
            self.registry = registry
            let report = try await sync.use(registry)
            output.say(
                (automatic ? "the plugins changed: " : "") + "\(Self.count(registry.types.count, "type")); \(Self.count(report.decodedCount, "message")) decoded anew, "
                    + "\(report.stillUnknownCount) still unknown")
            if let open {
                numbered = []
                lastSeparator = nil
                output.say("── \(open) ──")
                await drawNew()
            }
        } catch {
            output.say("cannot reload the plugins: \(error)")
        }
    }

    /// The plugin files on the search path, each with its size and time of change.
    nonisolated static func fingerprint(directories: [String]) -> String {
        PluginSearchPath.standard(explicitDirectories: directories).candidateFiles().files.map { path in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
            let time = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            return "\(path) \(size) \(time)"
        }.joined(separator: "\n")
    }

    // MARK: Events

    /// What the sync tells: drawn in the open conversation, a one-line notice for the others.
    func handle(_ change: ChatChange) async {
        switch change {
        case .connected(let resynced):
            if connectedOnce && !online { output.say("connected to \(sync.client.server.absoluteString) again" + (resynced ? " (reloaded)" : "")) }
            online = true
            connectedOnce = true
            if !outbox.isEmpty { await sendOutbox() }
            if open != nil { await drawNew() }
        case .disconnected(let reason, _):
            if online || !connectedOnce {
                output.say("lost the server: \(reason); trying again")
            }
            online = false
            connectedOnce = true
        case .message(let conversation, let id, let isNew):
            if conversation == open {
                await drawNew()
            } else if isNew {
                await notice(conversation, about: id)
            }
        case .edited(let conversation, let id):
            if conversation == open { await redraw(id: id) }
        case .deleted(let conversation, let id):
            if conversation == open, let index = numbered.firstIndex(of: id) { output.say("message \(index + 1) was deleted") }
        case .read(let conversation):
            if conversation != open, let unread = try? await sync.store.unreadCount(conversation: conversation) {
                output.say("\(conversation): \(unread) unread")
            }
        case .membership(let conversation, let member, let joined):
            if member == sync.member, joined, conversation != open {
                if started.remove(conversation) != nil { return }
                output.say("you are in \(conversation) now: /open \(conversation)")
            } else if conversation == open, member != sync.member {
                output.say("\(member) \(joined ? "joined" : "left") \(conversation)")
            }
        case .transient(let conversation, let message):
            if conversation == open, message.persistence != .status {
                output.say("\(message.envelope.senderID) (not kept): \(message.digest)")
            }
        case .problem(let reason):
            output.say(reason)
        }
    }

    /// An error in words: a Missive error's or the server's message, as it came.
    static func describe(_ error: any Error) -> String {
        if let error = error as? MissiveError { return error.message }
        if let error = error as? ServerClientError { return error.message }
        return "\(error)"
    }

    /// One line about a new message in a conversation that is not open.
    private func notice(_ conversation: String, about id: String) async {
        guard let stored = try? await sync.store.message(id: id) else { return }
        let unread = (try? await sync.store.unreadCount(conversation: conversation)) ?? 0
        output.say("\(conversation): \(unread) unread (\(stored.senderID): \(TextHygiene.cut(stored.digest, toCodePoints: 40)))")
    }
}

/// A command line split into words: spaces separate them, a double-quoted word (JSON's escapes inside) is one.
enum ChatWords {
    /// One word.
    struct Word: Sendable {
        /// The word as typed (with its quotes, for a quoted one).
        var text: String
        /// Whether it was in double quotes.
        var isQuoted: Bool

        /// The word as an action's argument: a JSON value when it is one (a quoted word is a JSON string), else a
        /// string.
        var argument: ActionArgument {
            if (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil { return ActionArgument(json: text) }
            return .string(text)
        }
    }

    static func split(_ line: String) -> [Word] {
        var words: [Word] = []
        var current = ""
        var quoted = false
        var inQuotes = false
        var escaped = false
        for character in line {
            if inQuotes {
                current.append(character)
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inQuotes = false
                }
            } else if character == " " {
                if !current.isEmpty { words.append(Word(text: current, isQuoted: quoted)) }
                current = ""
                quoted = false
            } else {
                if character == "\"" {
                    inQuotes = true
                    quoted = true
                }
                current.append(character)
            }
        }
        if !current.isEmpty { words.append(Word(text: current, isQuoted: quoted)) }
        return words
    }
}
