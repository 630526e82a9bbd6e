import Foundation
import Missive
import MissiveStore

/// What a ``ChatSync`` changed in the local store, or heard from the server, for a client to show.
public enum ChatChange: Sendable {
    /// The event stream is open; `resynced` when the client loaded every conversation again (a first start, or a
    /// position the server could not resume from).
    case connected(resynced: Bool)
    /// The connection ended: the reason, and when it tries again.
    case disconnected(reason: String, retryingIn: Duration)
    /// A message was stored locally (`isNew` is `false` when the store had it already).
    case message(conversation: String, id: String, isNew: Bool)
    /// A message has a new version.
    case edited(conversation: String, id: String)
    /// A message was deleted.
    case deleted(conversation: String, id: String)
    /// The member's read mark moved in a conversation.
    case read(conversation: String)
    /// A member joined or left a conversation.
    case membership(conversation: String, member: String, joined: Bool)
    /// A message that is not kept (`none`, `status`), decoded.
    case transient(conversation: String, message: Message)
    /// Something could not be applied (a malformed event, a store that refused it): the reason. Sync goes on.
    case problem(String)
}

/// Keeps a member's local one-account store in step with a server: the first sync of every conversation's
/// history, then the live events of the server's event stream, resumed after the last position applied, which
/// is kept durably beside the store (`STORE.position`), written after each event is in the store, so that a
/// restart resumes with no gap; an event applied again after a crash between the two is a duplicate the store
/// recognises, so nothing is stored twice.
///
/// It also re-decodes the local store when the host's plugin set changes (``use(_:)``), and reports the types
/// the host can draw to the server (``reportTypes()``), as docs/SERVER.md describes.
public actor ChatSync {
    /// The server.
    public nonisolated let client: ServerClient
    /// The member the token belongs to.
    public nonisolated let member: String
    /// The local store: personal, owned by ``member``.
    public nonisolated let store: SQLiteMessageStore
    /// The registry messages are decoded with.
    public private(set) var registry: MessageRegistry
    /// The conversations the member is in, as the server last said (and as events since told).
    public private(set) var conversations: Set<String> = []
    /// The feed position of the last event applied (`nil` before the first sync).
    public private(set) var position: Int64?
    /// Where ``position`` is kept.
    public nonisolated let positionFile: String

    /// Opens the local store at `storePath` (made if missing, with its folder) for the member whose token
    /// `client` has, after asking the server who that is.
    ///
    /// - Throws: ``ServerClientError`` when the server cannot say; `StoreError` when the store cannot be opened
    ///   or belongs to another member.
    public init(client: ServerClient, storePath: String, registry: MessageRegistry) async throws {
        self.client = client
        self.registry = registry
        member = try await client.me()
        let folder = URL(fileURLWithPath: storePath).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let opened = try SQLiteMessageStore(path: storePath, owner: member)
        store = opened
        positionFile = opened.path + ".position"
        if let text = try? String(contentsOfFile: positionFile, encoding: .utf8) {
            position = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Follows the server's event stream until the task is cancelled, applying each event to the local store and
    /// telling `report` what changed. The first connection without a kept position (and any the server could
    /// not resume) loads every conversation's history first.
    public func run(report: @escaping @Sendable (ChatChange) async -> Void) async {
        let stream = ServerEventStream(client: client)
        await stream.run(position: { await self.position }) { update in
            for change in await self.apply(update) { await report(change) }
        }
    }

    /// Applies one update of the stream; what changed.
    func apply(_ update: EventStreamUpdate) async -> [ChatChange] {
        switch update {
        case .malformed(let reason):
            return [.problem("an event could not be read: \(reason)")]
        case .disconnected(let reason, let delay):
            return [.disconnected(reason: reason, retryingIn: delay)]
        case .event(let event):
            do {
                let changes = try await apply(event)
                if let position = event.position { try keep(position) }
                return changes
            } catch {
                return [.problem("an event could not be applied: \(error)")]
            }
        }
    }

    private func apply(_ event: ServerEvent) async throws -> [ChatChange] {
        switch event {
        case .hello(_, let position, let resumed):
            guard !resumed else {
                _ = await reportTypes()
                return [.connected(resynced: false)]
            }
            let problems = try await resync()
            try keep(position)
            _ = await reportTypes()
            return problems.map(ChatChange.problem) + [.connected(resynced: true)]
        case .stored(_, let message):
            conversations.insert(message.conversationID)
            let isNew = try await ingest(message)
            return [.message(conversation: message.conversationID, id: message.id, isNew: isNew)]
        case .edited(_, let message):
            let incoming = try IncomingMessage(line: message.envelope, registry: registry)
            if try await store.message(id: message.id) == nil {
                _ = try await store.ingest([incoming])
            } else {
                _ = try await store.replace(incoming)
            }
            return [.edited(conversation: message.conversationID, id: message.id)]
        case .deleted(_, let conversation, let id):
            if try await store.message(id: id) != nil { try await store.delete(messageID: id) }
            return [.deleted(conversation: conversation, id: id)]
        case .read(_, let conversation, let upTo, _):
            if try await store.message(id: upTo) != nil { _ = try await store.markRead(conversation: conversation, upTo: upTo) }
            return [.read(conversation: conversation)]
        case .joined(_, let conversation, let member), .left(_, let conversation, let member):
            let joined = if case .joined = event { true } else { false }
            if member == self.member {
                if joined { conversations.insert(conversation) } else { conversations.remove(conversation) }
            }
            return [.membership(conversation: conversation, member: member, joined: joined)]
        case .transient(let conversation, let envelope):
            return [.transient(conversation: conversation, message: try registry.decode(line: envelope))]
        case .other:
            return []
        }
    }

    /// Loads every conversation's history and read mark from the server into the local store; the problems
    /// met (each conversation that could not be loaded), in words.
    private func resync() async throws -> [String] {
        var problems: [String] = []
        let list = try await client.conversations()
        conversations = Set(list.map(\.id))
        for conversation in list {
            do {
                let messages = try await client.allMessages(in: conversation.id)
                var incoming: [IncomingMessage] = []
                for message in messages { incoming.append(try IncomingMessage(line: message.envelope, registry: registry)) }
                _ = try await store.ingest(incoming)
                let detail = try await client.conversation(conversation.id)
                if let upTo = detail.readUpTo, try await store.message(id: upTo) != nil {
                    _ = try await store.markRead(conversation: conversation.id, upTo: upTo)
                }
            } catch {
                problems.append("conversation \(conversation.id) could not be loaded: \(error)")
            }
        }
        return problems
    }

    /// Stores a message the server gave; whether it is new to the local store.
    @discardableResult
    public func ingest(_ message: RemoteMessage) async throws -> Bool {
        let report = try await store.ingest([IncomingMessage(line: message.envelope, registry: registry)])
        return report.outcomes.first == .stored
    }

    /// Writes the position down, durably, once what it stands for is in the store.
    private func keep(_ newPosition: Int64) throws {
        guard newPosition != position else { return }
        position = newPosition
        try Data("\(newPosition)\n".utf8).write(to: URL(fileURLWithPath: positionFile), options: .atomic)
    }

    // MARK: What the member does

    /// Sends an envelope to a conversation and stores the stored message locally at once (the event that
    /// follows is then a duplicate); what the server did.
    public func send(envelope: [UInt8], to conversation: String) async throws -> SendOutcome {
        let outcome = try await client.send(envelope: envelope, to: conversation)
        if case .stored(let message) = outcome { try await ingest(message) }
        return outcome
    }

    /// Moves the member's read mark to `message`, on the server and in the local store; the unread count left.
    @discardableResult
    public func markRead(conversation: String, upTo message: String) async throws -> Int {
        let left = try await client.markRead(conversation: conversation, upTo: message)
        if try await store.message(id: message) != nil { _ = try await store.markRead(conversation: conversation, upTo: message) }
        return left
    }

    /// Stores the new version of a message an action on the server gave.
    public func apply(edit message: RemoteMessage) async throws {
        _ = try await apply(.edited(position: 0, message))
    }

    /// Notes a conversation the member is in (one it just made).
    public func note(conversation: String) {
        conversations.insert(conversation)
    }

    // MARK: Plugins and type reports

    /// Decodes with `registry` from now on: re-decodes the local store with it, and reports the new set of types
    /// to the server. The store's report of what changed.
    public func use(_ registry: MessageRegistry) async throws -> RedecodeReport {
        self.registry = registry
        let report = try await store.redecode(with: registry)
        _ = await reportTypes()
        return report
    }

    /// The types ``registry`` draws, as a client reports them: each type's objectName and the version of the
    /// plugin that registers it (Missive's for a built-in type); containers and `MS:Unknown` are not types a
    /// message is drawn as.
    public static func reportedTypes(of registry: MessageRegistry) -> [ReportedType] {
        registry.types.compactMap { type in
            guard type.declaredContainer == nil, type.objectName != UnknownMessage.objectName else { return nil }
            switch type.origin {
            case .plugin(let info): return ReportedType(objectName: type.objectName, version: info.version)
            case .builtIn, .application: return ReportedType(objectName: type.objectName, version: MissiveVersion.string)
            }
        }
        .sorted { $0.objectName < $1.objectName }
    }

    /// Reports ``registry``'s types to the server; whether the server took the report (a server without type
    /// reports answers `404`, and the client goes on without them).
    @discardableResult
    public func reportTypes() async -> Bool {
        (try? await client.reportTypes(Self.reportedTypes(of: registry))) != nil
    }
}
