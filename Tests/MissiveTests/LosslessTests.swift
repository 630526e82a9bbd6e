import Foundation
import Missive
import MissiveTestSupport
import Testing

/// Known types lose nothing either: a received message goes out byte for byte whatever its type, and an edit
/// keeps the top-level members the type does not know. Through the real sample plugins, Swift and C.
@Suite struct LosslessTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    /// The three cases a host with the plugin used to lose, each sent as MS:Custom and under the objectName.
    static let linkContents = [
        // TUIKit's text_link carries a version.
        #"{"businessID":"text_link","text":"Welcome","link":"https://example.com","version":4}"#,
        // A newer sender's field, with spacing and escapes of its own.
        #"{ "text" : "Welcome",  "extraFieldFromNewerSender": "keep me \u00e9", "link":"https://example.com" }"#,
        // Keys that are empty or contain a space.
        #"{"":"empty key","text":"Welcome","a key":"with a space","link":"https://example.com"}"#,
    ]

    @Test(arguments: linkContents)
    func aSwiftPluginTypeSendsAReceivedMessageBackByteForByte(content: String) throws {
        // Content with a businessID goes as MS:Custom too; all of it under the type's objectName.
        for objectName in content.contains("businessID") ? ["MS:Custom", "demo:link"] : ["demo:link"] {
            let message = registry.decode(Fixtures.envelope(objectName, content))
            #expect(message.content.objectName == "demo:link", "\(String(describing: message.unknown?.reason))")
            #expect(try message.reencoded().content.text == content)
            #expect(try message.content.encodedContent().text == content)
            // What the type itself writes leaves out what it does not know.
            #expect(try message.content.typeEncodedContent().text == #"{"link":"https://example.com","text":"Welcome"}"#)
        }
    }

    @Test func aCPluginTypeAndBuiltInTypesSendReceivedMessagesBackByteForByte() throws {
        let cases = [
            ("demo:rating", #"{"score":4, "comment":"ok","version":4,"":"x","a key":[1, 2.50e1]}"#),
            ("MS:Custom", #"{"businessID":"evaluation","score":4,"extraFieldFromNewerSender":"keep me"}"#),
            ("MS:Text", #"{"content":"hi","extraFieldFromNewerSender":{"nested":true}, "a key":null}"#),
            ("MS:Location", #"{"latitude":35.6595,"longitude":139.7005,"poi":"Sushi","accuracy":5}"#),
        ]
        for (objectName, content) in cases {
            let message = registry.decode(Fixtures.envelope(objectName, content))
            #expect(message.isKnown, "\(objectName): \(String(describing: message.unknown?.reason))")
            #expect(try message.reencoded().content.text == content, "\(objectName)")
        }
    }

    @Test func aSwiftPluginEditKeepsWhatTheTypeDoesNotKnowInOrderAndSpelling() throws {
        let received = #"{"businessID":"text_link","text":"Menu","link":"https://example.com/menu","version":4,"#
            + #""extraFieldFromNewerSender": "keep me","":"empty key","a key":"with a space"}"#
        let message = registry.decode(Fixtures.envelope("MS:Custom", received))
        let edited = try registry.edit(message, content: Array(#"{"link":"https://example.com/menu?v=5","text":"Menu, new"}"#.utf8))
        #expect(edited.digest == "Menu, new")
        #expect(edited.envelope.objectName == "MS:Custom")
        #expect(try edited.reencoded().content.text
            == #"{"link":"https://example.com/menu?v=5","text":"Menu, new","businessID":"text_link","version":4,"#
            + #""extraFieldFromNewerSender":"keep me","":"empty key","a key":"with a space"}"#)
        // The edited envelope decodes again, in the container, to the same type.
        #expect(registry.decode(try edited.reencoded()).content.objectName == "demo:link")
        // Edited again, it stays the same: nothing is carried twice.
        let again = try registry.edit(edited, content: Array(#"{"link":"https://example.com/menu?v=5","text":"Menu, new"}"#.utf8))
        #expect(try again.reencoded().content == (try edited.reencoded().content))
    }

    @Test func anEditOfABuiltInTypeDropsAKnownMemberItClearsAndKeepsTheUnknown() throws {
        let message = registry.decode(Fixtures.envelope("MS:Text", #"{"content":"hi","extra":"app data","x-trace":[1,2]}"#))
        let edited = try registry.edit(message, to: TextMessage(content: "hello"))
        // `extra` is the type's: the edit cleared it. `x-trace` is not: it is carried over.
        #expect(try edited.reencoded().content.text == #"{"content":"hello","x-trace":[1,2]}"#)
        #expect(edited.value(as: TextMessage.self)?.content == "hello")
        #expect(throws: MissiveError.self) { try registry.edit(message, to: LocationMessage(latitude: 0, longitude: 0)) }
    }

    @Test func invalidEditsAreRefusedWithAReason() throws {
        let rating = registry.decode(Fixtures.envelope("demo:rating", #"{"score":4}"#))
        let error = #expect(throws: MissiveError.self) { try registry.edit(rating, content: Array(#"{"score":9}"#.utf8)) }
        #expect(error?.message.contains("score must be a whole number from 1 to 5") == true, "\(String(describing: error))")
        #expect(throws: MissiveError.self) { try registry.edit(rating, content: Array("[1]".utf8)) }
        let unknown = registry.decode(Fixtures.envelope("acme:nothing", #"{"a":1}"#))
        #expect(throws: MissiveError.self) { try registry.edit(unknown, content: Array(#"{"a":2}"#.utf8)) }
    }

    @Test func anEditCannotChangeWhatTheContainerDispatchesOnNorRepeatAMember() throws {
        let matrix = registry.decode(Fixtures.envelope("m.room.message", #"{"msgtype":"m.text","body":"hi","m.new":1}"#))
        // MatrixText knows msgtype; an edit that changes it would make the message another type.
        let changed = #expect(throws: MissiveError.self) {
            try registry.edit(matrix, content: Array(#"{"msgtype":"m.emote","body":"waves"}"#.utf8))
        }
        #expect(changed?.message.contains("not valid for the type") == true, "\(String(describing: changed))")
        // A type that does not know the key keeps it as received, and one that writes another value is refused.
        let link = registry.decode(Fixtures.envelope("MS:Custom", #"{"businessID":"text_link","text":"a","link":"https://example.com"}"#))
        #expect(throws: MissiveError.self) {
            try registry.edit(link, content: Array(#"{"businessID":"poll","text":"b","link":"https://example.com"}"#.utf8))
        }
        let twice = #expect(throws: MissiveError.self) {
            try registry.edit(matrix, content: Array(#"{"msgtype":"m.text","body":"a","body":"b"}"#.utf8))
        }
        #expect(twice?.message == "the new content has the member 'body' twice")
        #expect(throws: MissiveError.self) { try registry.edit(matrix, content: [0x7B, 0xFF, 0x7D]) }
    }

    @Test func anEditWritesTheSendersDigestAndPushTextAgain() throws {
        // A host without the type shows fallbackText and pushes pushContent: after an edit they describe the new content.
        let received = registry.decode(
            Envelope(
                id: "e1", conversationID: "c", senderID: "bob", sentAt: 1, objectName: "demo:link",
                content: Array(#"{"text":"Old menu","link":"https://example.com","x-new":1}"#.utf8), fallbackText: "Old menu", pushContent: "Old menu"))
        let edited = try registry.edit(received, content: Array(#"{"text":"New menu","link":"https://example.com"}"#.utf8))
        #expect(edited.envelope.fallbackText == edited.digest && edited.digest.contains("New menu"))
        #expect(edited.envelope.pushContent == edited.content.pushContent)
        #expect(edited.envelope.content.text.contains(#""x-new":1"#))
        let bare = MessageRegistry.Builder().build().decode(try edited.reencoded())
        #expect(bare.digest.contains("New menu"))
    }

    @Test func aHostComposesNewMessagesUnderTheirNameOrTheirContainer() throws {
        let direct = try registry.compose(TextMessage(content: "hello"), id: "n1", conversationID: "c", senderID: "me", sentAt: 1)
        #expect(direct.envelope.objectName == "MS:Text")
        #expect(direct.envelope.content.text == #"{"content":"hello"}"#)
        #expect(direct.envelope.persistence == .counted)
        #expect(direct.envelope.fallbackText == "hello")

        // A plugin type, sent through MS:Custom: the businessID goes first; a host without the type shows the fallback.
        let link = try registry.compose(
            objectName: "demo:link", content: Array(#"{"text":"Menu","link":"https://example.com"}"#.utf8), id: "n2", conversationID: "c",
            senderID: "me", sentAt: 2, viaContainer: true)
        #expect(link.envelope.objectName == "MS:Custom")
        #expect(link.envelope.content.text == #"{"businessID":"text_link","text":"Menu","link":"https://example.com"}"#)
        #expect(registry.decode(try link.reencoded()).content.objectName == "demo:link")
        let bare = MessageRegistry.Builder().build().decode(try link.reencoded())
        #expect(bare.digest == "Menu")
        #expect(bare.persistence == .counted)

        // Through another container, with the key the type itself writes.
        let emote = try registry.compose(
            objectName: "matrix:emote", content: Array(#"{"msgtype":"m.emote","body":"waves"}"#.utf8), id: "n3", conversationID: "c",
            senderID: "me", sentAt: 3, viaContainer: true)
        #expect(emote.envelope.objectName == "m.room.message")
        #expect(emote.envelope.content.text == #"{"msgtype":"m.emote","body":"waves"}"#)

        #expect(throws: MissiveError.self) {
            try registry.compose(objectName: "demo:typing", content: Array(#"{"userID":"a","isTyping":true}"#.utf8), id: "n4",
                                 conversationID: "c", senderID: "me", sentAt: 4, viaContainer: true)
        }
        #expect(throws: MissiveError.self) {
            try registry.compose(objectName: "demo:poll", content: Array(#"{"question":"?","options":[]}"#.utf8), id: "n5",
                                 conversationID: "c", senderID: "me", sentAt: 5)
        }
    }

    @Test func anEditOfACPluginTypeKeepsUnknownMembers() throws {
        let message = registry.decode(Fixtures.envelope("demo:rating", #"{"score":2,"v":{"deep":[true]},"comment":"meh"}"#))
        let edited = try registry.edit(message, content: Array(#"{"comment":"better","score":4}"#.utf8))
        #expect(try edited.reencoded().content.text == #"{"comment":"better","score":4,"v":{"deep":[true]}}"#)
        #expect(edited.digest == "[Rating] ★★★★☆ better")
    }
}
