import Foundation
import Missive
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
        let edited = try message.edited(to: TextMessage(content: "hello"))
        // `extra` is the type's: the edit cleared it. `x-trace` is not: it is carried over.
        #expect(try edited.reencoded().content.text == #"{"content":"hello","x-trace":[1,2]}"#)
        #expect(edited.value(as: TextMessage.self)?.content == "hello")
        #expect(throws: MissiveError.self) { try message.edited(to: LocationMessage(latitude: 0, longitude: 0)) }
    }

    @Test func invalidEditsAreRefusedWithAReason() throws {
        let rating = registry.decode(Fixtures.envelope("demo:rating", #"{"score":4}"#))
        let error = #expect(throws: MissiveError.self) { try registry.edit(rating, content: Array(#"{"score":9}"#.utf8)) }
        #expect(error?.message.contains("score must be a whole number from 1 to 5") == true, "\(String(describing: error))")
        #expect(throws: MissiveError.self) { try registry.edit(rating, content: Array("[1]".utf8)) }
        let unknown = registry.decode(Fixtures.envelope("acme:nothing", #"{"a":1}"#))
        #expect(throws: MissiveError.self) { try registry.edit(unknown, content: Array(#"{"a":2}"#.utf8)) }
    }

    @Test func anEditOfACPluginTypeKeepsUnknownMembers() throws {
        let message = registry.decode(Fixtures.envelope("demo:rating", #"{"score":2,"v":{"deep":[true]},"comment":"meh"}"#))
        let edited = try registry.edit(message, content: Array(#"{"comment":"better","score":4}"#.utf8))
        #expect(try edited.reencoded().content.text == #"{"comment":"better","score":4,"v":{"deep":[true]}}"#)
        #expect(edited.digest == "[Rating] ★★★★☆ better")
    }
}
