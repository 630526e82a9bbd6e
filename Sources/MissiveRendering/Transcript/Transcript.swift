import Foundation
import Missive

/// The preview of a replied-to message, drawn above the reply. It shows one level only: the parent's own
/// quote is never shown.
public enum QuotedPreview: Sendable, Hashable {
    /// The parent is in the transcript: its author, its digest and, for media, its media reference.
    case found(author: String, text: String, media: MediaReference?)
    /// The parent is not in the transcript.
    case notFound(parentID: String)

    /// What renderers write for a parent that is not found.
    public static let notFoundText = "Original message not found"
}

/// What an unknown or refused message shows instead of its content.
public struct UnsupportedCard: Sendable, Hashable {
    /// The sender's fallback text, or `[Unsupported message]`.
    public let title: String
    /// The type's name, as sent.
    public let objectName: String
    /// The registered type that refused the content, when one did.
    public let refusedBy: String?
    /// Why the message could not be shown.
    public let reason: String
    /// Whether no type is registered for it at all (rather than a container value or a refusal).
    public let isNotInstalled: Bool

    /// What a card without the sender's fallback text says.
    public static let defaultTitle = "[Unsupported message]"

    /// The card of an unknown message: every string cleaned.
    public init(_ unknown: UnknownMessage) {
        let fallback = unknown.fallbackText.map(TextHygiene.digest) ?? ""
        self.title = fallback.contains(where: { $0 != " " }) ? fallback : Self.defaultTitle
        self.objectName = TextHygiene.line(unknown.objectName)
        self.refusedBy = unknown.refusingType.map(TextHygiene.line)
        self.reason = TextHygiene.digest(unknown.reason.description)
        if case .notRegistered = unknown.reason { self.isNotInstalled = true } else { self.isNotInstalled = false }
    }

    /// The line that says why: `demo:poll refused this content: …`, `type acme:order is not installed`, or
    /// for a container value no type registers, the reason (`no type is registered in MS:Custom under …`).
    public var detail: String {
        if let refusedBy { return "\(refusedBy) refused this content: \(reason)" }
        return isNotInstalled ? "type \(objectName) is not installed" : reason
    }
}

/// One drawn message: its content, the options resolved for it and its decorations.
public struct TranscriptMessage: Sendable {
    /// What the bubble holds.
    public enum Body: Sendable {
        /// The view of known content (described by its type, or the default view).
        case view(ViewElement)
        /// The card of unknown or refused content.
        case unsupported(UnsupportedCard)
    }

    /// The message.
    public let message: Message
    /// Its layout options.
    public let options: MessageLayoutOptions
    /// The author's name, cleaned.
    public let author: String
    /// The time it was sent, as the clock spells it.
    public let time: String
    /// What the bubble holds.
    public let body: Body
    /// The quoted preview, for a reply.
    public let quote: QuotedPreview?
    /// How many messages of the transcript reply to it.
    public let replyCount: Int
    /// The actions of its type that its view does not already show as buttons, in menu order: renderers
    /// draw them as buttons under the content. None for unknown messages.
    public let actions: [ActionDeclaration]
}

/// A conversation laid out for drawing: messages with their options and decorations, and date separators.
///
/// Building it is pure and done once; renderers only draw it. Messages are drawn in the order they were sent
/// (`sentAt`; messages sent at the same time keep the order given), a message whose id comes more than once
/// is drawn once, as the last version given (an edit replaces the original in place), and status messages
/// (persistence `status`, such as typing indicators) are not drawn.
public struct Transcript: Sendable {
    /// One row.
    public enum Row: Sendable {
        /// A date separator before the first message of a calendar day.
        case dateSeparator(String)
        /// A message.
        case message(TranscriptMessage)
    }

    /// The rows, in order.
    public let rows: [Row]
    /// What the resolver was told.
    public let context: TranscriptContext

    /// Whether a message is drawn: every message but status ones.
    public static func isDrawn(_ message: Message) -> Bool { message.persistence != .status }

    /// Lays out `messages`, in the order they were sent.
    ///
    /// - Parameters:
    ///   - messages: the conversation, in any order; a message given twice (the same id) is drawn once, in
    ///     the place of the first, as the last version given.
    ///   - currentUserID: whose messages are flipped.
    ///   - clock: the days and times, in a time zone (UTC by default).
    ///   - resolver: the layout rules.
    ///   - authorName: a display name for a sender id; the id itself by default. Cleaned before use.
    ///   - actions: the actions a message offers, usually `MessageRegistry.actions(for:)`; none by default.
    ///     A message shows, as buttons under its content, those its view does not already name in a button.
    ///   - replyCountsGiven: each message's number of replies, when the host knows more of them than `messages`
    ///     holds (a store drawing one page of a conversation); by default the replies among `messages`.
    ///   - original: the message a reply quotes when it is not among `messages` (a store looks it up); by
    ///     default none, and the preview says the original was not found.
    public init(
        messages: [Message], currentUserID: String? = nil, clock: TranscriptClock = TranscriptClock(),
        resolver: any MessageLayoutResolving = DefaultLayoutResolver(), authorName: @Sendable (String) -> String = { $0 },
        actions: (Message) -> [ActionDeclaration] = { _ in [] }, replyCounts replyCountsGiven: [String: Int]? = nil,
        original: (String) -> Message? = { _ in nil }
    ) {
        // In the order sent, each id once: a message received twice (a retry, a resync) is drawn once, and one
        // given again with new content (an edit, an action's result) is drawn as the last version given, in
        // the place of the first.
        // Ids are compared as their bytes: Swift's String equality would take `é` and `e` + U+0301, two
        // different ids, for the same message.
        var latest: [MessageID: Message] = [:]
        for message in messages { latest[MessageID(message.envelope.id)] = message }
        var seen: Set<MessageID> = []
        let messages = messages.enumerated()
            .sorted { $0.element.envelope.sentAt != $1.element.envelope.sentAt ? $0.element.envelope.sentAt < $1.element.envelope.sentAt : $0.offset < $1.offset }
            .map(\.element)
            .filter { seen.insert(MessageID($0.envelope.id)).inserted }
            .map { latest[MessageID($0.envelope.id)] ?? $0 }
        var byID: [MessageID: Message] = [:]
        var counted: [MessageID: Int] = [:]
        for message in messages where Self.isDrawn(message) {
            byID[MessageID(message.envelope.id)] = message
            if let parent = message.envelope.parentID { counted[MessageID(parent), default: 0] += 1 }
        }
        var replyCounts = counted
        if let given = replyCountsGiven {
            replyCounts = [:]
            for (id, count) in given { replyCounts[MessageID(id)] = count }
        }
        var contextCounts: [String: Int] = [:]
        for (id, count) in replyCounts { contextCounts[id.text] = count }
        let context = TranscriptContext(currentUserID: currentUserID, clock: clock, replyCounts: contextCounts)
        func name(_ sender: String) -> String {
            let cleaned = TextHygiene.line(authorName(sender))
            return cleaned.contains(where: { $0 != " " }) ? cleaned : TextHygiene.line(sender)
        }
        var rows: [Row] = []
        var lastDay: TranscriptClock.Day?
        for (index, message) in messages.enumerated() where Self.isDrawn(message) {
            let day = clock.day(of: message.envelope.sentAt)
            if day != lastDay {
                rows.append(.dateSeparator(clock.dayTitle(of: message.envelope.sentAt)))
                lastDay = day
            }
            let body: TranscriptMessage.Body
            var offered: [ActionDeclaration] = []
            if let unknown = message.unknown {
                body = .unsupported(UnsupportedCard(unknown))
            } else {
                let view = message.content.view ?? .text(message.digest)
                body = .view(view)
                let shown = view.buttonActions
                offered = actions(message).filter { $0.kind == .message && !shown.contains($0.id) }
            }
            var quote: QuotedPreview?
            if let parentID = message.envelope.parentID {
                if let parent = byID[MessageID(parentID)] ?? original(parentID).flatMap({ Self.isDrawn($0) ? $0 : nil }) {
                    quote = .found(author: name(parent.envelope.senderID), text: parent.digest, media: parent.content.media)
                } else {
                    quote = .notFound(parentID: TextHygiene.line(parentID))
                }
            }
            rows.append(
                .message(
                    TranscriptMessage(
                        message: message, options: resolver.options(at: index, in: messages, context: context),
                        author: name(message.envelope.senderID), time: clock.time(of: message.envelope.sentAt), body: body,
                        quote: quote, replyCount: replyCounts[MessageID(message.envelope.id)] ?? 0, actions: offered)))
        }
        self.rows = rows
        self.context = context
    }
}

/// A message id compared by its UTF-8 bytes, as envelopes and stores compare ids, not by Swift's canonical
/// equivalence.
private struct MessageID: Hashable {
    let bytes: [UInt8]
    init(_ text: String) { bytes = Array(text.utf8) }
    var text: String { String(decoding: bytes, as: UTF8.self) }
}

extension ViewElement {
    /// The ids of the actions the buttons of this view name.
    var buttonActions: Set<String> {
        switch self {
        case .button(let button): [button.action]
        case .stack(let stack): stack.children.reduce(into: Set<String>()) { $0.formUnion($1.buttonActions) }
        default: []
        }
    }
}
