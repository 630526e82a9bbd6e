import Foundation
import Missive

/// One layout option of a message in a transcript: what parts it shows and how.
///
/// Options are strings, so that an app or a custom resolver can add its own (`LayoutOption("pinned")`)
/// and a custom component can read them; renderers ignore options they do not know.
public struct LayoutOption: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    /// Creates an option from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates an option from its name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates an option from a literal name.
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// The message is the current user's own: drawn on the other side.
    public static let flipped: LayoutOption = "flipped"
    /// The content is drawn in a bubble.
    public static let bubble: LayoutOption = "bubble"
    /// The sender's avatar is shown next to the bubble.
    public static let avatar: LayoutOption = "avatar"
    /// The sender's name is shown above the bubble.
    public static let authorName: LayoutOption = "authorName"
    /// The time is shown under the bubble.
    public static let timestamp: LayoutOption = "timestamp"
    /// A preview of the message this one replies to is shown above its content.
    public static let quotedMessage: LayoutOption = "quotedMessage"
    /// The number of replies is shown under the bubble.
    public static let threadInfo: LayoutOption = "threadInfo"
    /// The content is unknown, or a registered type refused it: drawn as the unsupported card.
    public static let unsupported: LayoutOption = "unsupported"
    /// The message continues a group (it is not the group's last): its bubble has no tail.
    public static let continuation: LayoutOption = "continuation"
}

/// The options of one message: a set, so that it can hold options of an app's own.
public typealias MessageLayoutOptions = Set<LayoutOption>

/// What a layout resolver knows about the transcript.
public struct TranscriptContext: Sendable {
    /// The current user's id: their messages are flipped.
    public var currentUserID: String?
    /// The clock that gives days and times, in the transcript's time zone.
    public var clock: TranscriptClock
    /// The number of replies each message has in the transcript, by message id.
    public var replyCounts: [String: Int]

    /// Creates a context.
    public init(currentUserID: String? = nil, clock: TranscriptClock = TranscriptClock(), replyCounts: [String: Int] = [:]) {
        self.currentUserID = currentUserID
        self.clock = clock
        self.replyCounts = replyCounts
    }
}

/// Computes each message's ``MessageLayoutOptions``. Replace it to change the rules.
public protocol MessageLayoutResolving: Sendable {
    /// The options of `messages[index]`, which is drawn (not a status message).
    func options(at index: Int, in messages: [Message], context: TranscriptContext) -> MessageLayoutOptions
}

/// The usual rules of a chat transcript.
///
/// - A group is a run of consecutive messages from one sender, each sent within ``groupingInterval`` of
///   the one before and on the same calendar day. The first of a group shows the author's name (not for
///   the current user's own messages), the last shows the avatar (others' messages only) and the
///   timestamp; the others are continuations.
/// - The current user's messages are flipped.
/// - Every message is in a bubble; unknown or refused content is unsupported.
/// - A reply shows its quoted message; a message with replies in the transcript shows the thread info.
public struct DefaultLayoutResolver: MessageLayoutResolving {
    /// The longest gap between two messages of a group, in milliseconds: 60 s.
    public var groupingInterval: Int64

    /// Creates the resolver.
    public init(groupingInterval: Int64 = 60_000) {
        self.groupingInterval = groupingInterval
    }

    /// Whether `later` continues the group of `earlier`.
    public func groups(_ earlier: Message, with later: Message, context: TranscriptContext) -> Bool {
        earlier.envelope.senderID == later.envelope.senderID
            && later.envelope.sentAt - earlier.envelope.sentAt <= groupingInterval
            && later.envelope.sentAt >= earlier.envelope.sentAt
            && context.clock.day(of: earlier.envelope.sentAt) == context.clock.day(of: later.envelope.sentAt)
    }

    public func options(at index: Int, in messages: [Message], context: TranscriptContext) -> MessageLayoutOptions {
        let message = messages[index]
        let previous = Self.drawnNeighbour(of: index, in: messages, step: -1)
        let next = Self.drawnNeighbour(of: index, in: messages, step: 1)
        let isFirst = previous.map { !groups($0, with: message, context: context) } ?? true
        let isLast = next.map { !groups(message, with: $0, context: context) } ?? true
        let isOwn = context.currentUserID != nil && message.envelope.senderID == context.currentUserID
        var options: MessageLayoutOptions = [.bubble]
        if isOwn { options.insert(.flipped) }
        if isFirst && !isOwn { options.insert(.authorName) }
        if isLast {
            options.insert(.timestamp)
            if !isOwn { options.insert(.avatar) }
        } else {
            options.insert(.continuation)
        }
        if !message.isKnown { options.insert(.unsupported) }
        if message.envelope.parentID != nil { options.insert(.quotedMessage) }
        if (context.replyCounts[message.envelope.id] ?? 0) > 0 { options.insert(.threadInfo) }
        return options
    }

    /// The nearest message before (`step` -1) or after (+1) `index` that is drawn.
    private static func drawnNeighbour(of index: Int, in messages: [Message], step: Int) -> Message? {
        var position = index + step
        while messages.indices.contains(position) {
            if Transcript.isDrawn(messages[position]) { return messages[position] }
            position += step
        }
        return nil
    }
}
