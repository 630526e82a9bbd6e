import Foundation
import Missive
import MissiveTestSupport
import Testing

/// Unknown and malformed content is kept byte for byte, and decodes once its type is registered.
@Suite struct UnknownMessageTests {
    /// Content with odd spacing, escapes, non-ASCII text, big numbers and nesting: nothing of it may change.
    static let awkwardContent = #"{ "z":1,"a" : [1.0, 2E+3, -0, 12345678901234567890], "s":"\u00e9\n\"q\" ✓", "n":null,"o":{"k":{}} }"#

    @Test func unknownContentIsReencodedByteForByte() throws {
        let registry = MessageRegistry.Builder().build()
        let envelope = Fixtures.envelope("acme:order", Self.awkwardContent)
        let message = registry.decode(envelope)
        #expect(!message.isKnown)
        let unknown = try #require(message.unknown)
        #expect(unknown.objectName == "acme:order")
        #expect(unknown.rawContent == Array(Self.awkwardContent.utf8))
        #expect(unknown.reason == .notRegistered)
        #expect(try message.reencoded() == envelope)
        #expect(try message.reencoded().encoded() == envelope.encoded())
    }

    @Test func theSameEnvelopeDecodesOnceThePluginIsInstalled() throws {
        let line = Array(#"{"id":"x","conversationID":"c","senderID":"s","sentAt":5,"objectName":"demo:poll","content":{"question":"Q","options":["a","b"]}}"#.utf8)
        let before = try MessageRegistry.Builder().build().decode(line: line)
        #expect(!before.isKnown)
        let stored = try before.reencoded().encoded()  // what a host would have kept
        #expect(stored == line)

        let after = try Fixtures.sampleRegistry().decode(line: stored)
        #expect(after.isKnown)
        #expect(after.digest == "[Poll] Q")
    }

    @Test func malformedContentOfARegisteredTypeBecomesUnknownWithTheReason() throws {
        let registry = try Fixtures.sampleRegistry()
        let content = #"{"question":"Dessert?","options":"mochi"}"#
        let message = registry.decode(Fixtures.envelope("demo:poll", content))
        let unknown = try #require(message.unknown)
        guard case .decodeFailed(let reason) = unknown.reason else {
            Issue.record("expected decodeFailed, got \(unknown.reason)")
            return
        }
        #expect(reason.contains("options"))
        #expect(unknown.rawContent.text == content)
        #expect(try message.reencoded().content.text == content)
        // The sender declared nothing: the registered type's flag applies.
        #expect(message.persistence == .counted)
        #expect(unknown.refusingType == "demo:poll")
        #expect(message.digest == "[Invalid message: demo:poll]")
    }

    @Test func refusedCustomContentNamesTheTypeThatRefusedIt() throws {
        let registry = try Fixtures.sampleRegistry()
        // The businessID dispatches to demo:poll, which refuses content without options.
        let message = registry.decode(Fixtures.envelope("MS:Custom", #"{"businessID":"poll","question":"Q"}"#))
        let unknown = try #require(message.unknown)
        #expect(unknown.objectName == "MS:Custom")
        #expect(unknown.refusingType == "demo:poll")
        #expect(message.digest == "[Invalid message: demo:poll]")
        // What the sender says still comes first.
        let described = registry.decode(Fixtures.envelope("MS:Custom", #"{"businessID":"poll","question":"Q"}"#, fallbackText: "[Poll] Q"))
        #expect(described.digest == "[Poll] Q")
    }

    @Test func persistenceAndDigestFollowTheSender() throws {
        let registry = MessageRegistry.Builder().build()
        let declared = registry.decode(Fixtures.envelope("acme:x", "{}", persistence: .status, fallbackText: "[X] hi"))
        #expect(declared.persistence == .status)
        #expect(declared.digest == "[X] hi")
        #expect(declared.content.pushContent == nil)

        let undeclared = registry.decode(Fixtures.envelope("acme:x", "{}"))
        #expect(undeclared.persistence == UnknownMessage.defaultPersistence)
        #expect(undeclared.persistence == .persisted)
        #expect(undeclared.digest == "[Unsupported message: acme:x]")
    }

    @Test func customContentDispatchesOnBusinessID() throws {
        let registry = try Fixtures.sampleRegistry()
        let known = registry.decode(Fixtures.envelope("MS:Custom", #"{"businessID":"text_link","text":"T","link":"https://l"}"#))
        #expect(known.isKnown)
        #expect(known.content.objectName == "demo:link")
        #expect(known.digest == "T")

        let rating = registry.decode(Fixtures.envelope("MS:Custom", #"{"score":2,"businessID":"evaluation"}"#))
        #expect(rating.content.objectName == "demo:rating")
        // Sent again as MS:Custom, exactly as received, although the C encoder leaves businessID out.
        let resent = try rating.reencoded()
        #expect(resent.objectName == "MS:Custom")
        #expect(resent.content.text == #"{"score":2,"businessID":"evaluation"}"#)
        #expect(registry.decode(resent).content.objectName == "demo:rating")
        // An edit keeps it too: the type does not know businessID, so it is carried over after the new members.
        let edited = try registry.edit(rating, content: Array(#"{"score":4,"comment":"better"}"#.utf8))
        #expect(try edited.reencoded().content.text == #"{"score":4,"comment":"better","businessID":"evaluation"}"#)
        #expect(registry.decode(try edited.reencoded()).digest == "[Rating] ★★★★☆ better")

        let unregistered = registry.decode(Fixtures.envelope("MS:Custom", #"{"businessID":"order","n":1}"#))
        #expect(unregistered.unknown?.reason == .notDispatched(container: "MS:Custom", key: "businessID", problem: .notRegistered("order")))
        #expect(unregistered.content.businessID == "order")
        #expect(try unregistered.reencoded().content.text == #"{"businessID":"order","n":1}"#)

        let notAnObject = registry.decode(Fixtures.envelope("MS:Custom", "[1,2]"))
        #expect(notAnObject.unknown?.reason == .notDispatched(container: "MS:Custom", key: "businessID", problem: .notAnObject))
        let missing = registry.decode(Fixtures.envelope("MS:Custom", #"{"n":1}"#))
        #expect(missing.unknown?.reason == .notDispatched(container: "MS:Custom", key: "businessID", problem: .missingKey))
        #expect(missing.digest == "[Unsupported message: MS:Custom]")
        let wrongKind = registry.decode(Fixtures.envelope("MS:Custom", #"{"businessID":7}"#))
        #expect(wrongKind.unknown?.reason == .notDispatched(container: "MS:Custom", key: "businessID", problem: .wrongKind(.string)))
        #expect(wrongKind.unknown?.reason.description == "MS:Custom content's 'businessID' is not a string")
    }
}
