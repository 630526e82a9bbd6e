import Foundation
import Missive
import MissiveClient
import MissiveRendering
import MissiveStore

// `/actions` and `/act`: what a member can do with a message, here or on the server.
extension ChatSession {
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
}
