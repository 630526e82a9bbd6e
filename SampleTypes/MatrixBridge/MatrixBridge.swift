import Foundation
import MissivePluginKit

// A bridge for Matrix room messages: Matrix sends every message as the event type `m.room.message`, and its
// content's `msgtype` names the real type. The plugin declares that container, and each of its types
// registers under the `msgtype` value that selects it. Content is Matrix's own, `msgtype` included, so that
// what a host sends back is valid Matrix content.

/// `m.text`: a plain message.
@MissiveMessage("matrix:text", container: "m.room.message", businessID: "m.text", persistence: .counted)
struct MatrixText: Codable, MessageTextContent {
    var msgtype: String
    var body: String
    var format: String?
    var formattedBody: String?

    enum CodingKeys: String, CodingKey {
        case msgtype, body, format
        case formattedBody = "formatted_body"
    }

    static var examples: [MatrixText] {
        [
            MatrixText(msgtype: "m.text", body: "Hello from Matrix", format: nil, formattedBody: nil),
            MatrixText(msgtype: "m.text", body: "Hello *world*", format: "org.matrix.custom.html", formattedBody: "Hello <em>world</em>"),
        ]
    }

    init(msgtype: String, body: String, format: String?, formattedBody: String?) {
        (self.msgtype, self.body, self.format, self.formattedBody) = (msgtype, body, format, formattedBody)
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
        try MatrixContent.expect(msgtype, "m.text")
    }

    var digest: String { MatrixContent.oneLine(body) }
    var searchableWords: [String]? { [body] }
}

extension MatrixText: MessageViewContent {
    /// The body, with its line breaks; the HTML `formatted_body` is not trusted and not shown.
    var view: ViewElement { .text(body) }
}

/// `m.notice`: a message from a bot; kept, but not counted as unread.
@MissiveMessage("matrix:notice", container: "m.room.message", businessID: "m.notice", persistence: .persisted)
struct MatrixNotice: Codable, MessageTextContent {
    var msgtype: String
    var body: String

    static var examples: [MatrixNotice] { [MatrixNotice(msgtype: "m.notice", body: "Build 4711 passed")] }

    init(msgtype: String, body: String) {
        (self.msgtype, self.body) = (msgtype, body)
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
        try MatrixContent.expect(msgtype, "m.notice")
    }

    var digest: String { "[Notice] " + MatrixContent.oneLine(body) }
    var searchableWords: [String]? { [body] }
}

extension MatrixNotice: MessageViewContent {
    /// A badge that says it comes from a bot, then the body in the secondary style.
    var view: ViewElement {
        .vstack {
            ViewElement.badge("notice", tone: .info)
            ViewElement.text(body, role: .caption)
        }
    }
}

/// `m.emote`: an action, shown as `* sender waves`.
@MissiveMessage("matrix:emote", container: "m.room.message", businessID: "m.emote", persistence: .counted)
struct MatrixEmote: Codable, MessageTextContent {
    var msgtype: String
    var body: String

    static var examples: [MatrixEmote] { [MatrixEmote(msgtype: "m.emote", body: "waves")] }

    init(msgtype: String, body: String) {
        (self.msgtype, self.body) = (msgtype, body)
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
        try MatrixContent.expect(msgtype, "m.emote")
    }

    var digest: String { "* " + MatrixContent.oneLine(body) }
    var searchableWords: [String]? { [body] }
}

extension MatrixEmote: MessageViewContent {
    /// The action in italics.
    var view: ViewElement { .text("* " + body, emphasis: .italic) }
}

/// What the three types share.
enum MatrixContent {
    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    /// Refuses content of another msgtype, which can arrive when a type's objectName is used directly.
    static func expect(_ msgtype: String, _ expected: String) throws {
        guard msgtype == expected else { throw Mismatch(description: "msgtype is '\(msgtype)', not '\(expected)'") }
    }

    /// The body on one line, as a digest must be.
    static func oneLine(_ body: String) -> String {
        let line = body.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.isEmpty ? "(empty message)" : line
    }
}

#MissivePlugin(
    name: "MatrixBridge", version: "1.0.0", vendor: "Missive Samples",
    containers: [MessageContainer(objectName: "m.room.message", key: "msgtype", keyKind: .string)],
    types: [MatrixText.self, MatrixNotice.self, MatrixEmote.self])
