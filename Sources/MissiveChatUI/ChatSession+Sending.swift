import Foundation
import Missive
import MissiveClient
import MissiveRendering
import MissiveStore

// Sending: text, composed and typed messages, quotes, forwards, the outbox, new conversations.
extension ChatSession {
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
}
