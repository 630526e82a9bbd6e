import Foundation
import Missive
import MissiveTestSupport
import Testing

/// Every built-in and sample type's own encoding survives decode → encode → decode → encode with stable
/// bytes, and a received message goes out as it came in.
@Suite struct RoundTripTests {
    @Test func everyRegisteredTypeRoundTripsItsExamples() throws {
        let registry = try Fixtures.sampleRegistry()
        let expected: Set = [
            "MS:Text", "MS:Image", "MS:Voice", "MS:Video", "MS:File", "MS:Location",
            "demo:link", "demo:poll", "demo:typing", "demo:sticker", "demo:rating", "matrix:text", "matrix:notice", "matrix:emote",
        ]
        var checked: Set<String> = []
        for type in registry.types where !type.examples.isEmpty {
            for example in type.examples {
                let first = registry.decode(Fixtures.envelope(type.objectName, example.text))
                #expect(first.isKnown, "\(type.objectName) example did not decode: \(String(describing: first.unknown?.reason))")
                #expect(try first.reencoded().content == example)
                let firstBytes = try first.content.typeEncodedContent()
                let second = registry.decode(Fixtures.envelope(type.objectName, firstBytes.text))
                let secondBytes = try second.content.typeEncodedContent()
                #expect(firstBytes == secondBytes, "\(type.objectName): \(firstBytes.text) vs \(secondBytes.text)")
                #expect(!first.digest.isEmpty)
                #expect(!first.digest.contains("\n"))
            }
            checked.insert(type.objectName)
        }
        #expect(checked == expected)
    }

    @Test func builtInValuesDecodeToTheirSwiftTypes() throws {
        let registry = MessageRegistry.Builder().build()
        let message = registry.decode(Fixtures.envelope("MS:Location", #"{"latitude":1.5,"longitude":-2,"poi":"Dock\n7"}"#))
        let location = try #require(message.value(as: LocationMessage.self))
        #expect(location.latitude == 1.5)
        #expect(message.digest == "[Location] Dock 7")
        #expect(message.content.searchableWords == ["Dock\n7"])

        let image = registry.decode(Fixtures.envelope("MS:Image", #"{"localPath":"/tmp/a.png","mimeType":"image/png"}"#))
        #expect(image.content.media == MediaReference(localPath: "/tmp/a.png", mimeType: "image/png"))

        let outOfRange = registry.decode(Fixtures.envelope("MS:Location", #"{"latitude":91,"longitude":0}"#))
        #expect(outOfRange.unknown?.reason == .decodeFailed("coordinates out of range: 91.0, 0.0"))
    }

    @Test func samplePluginTypesAnswerDigestWordsPushAndMedia() throws {
        let registry = try Fixtures.sampleRegistry()

        let poll = registry.decode(Fixtures.envelope("demo:poll", #"{"question":"Tea?","options":["Green","Black"]}"#))
        #expect(poll.digest == "[Poll] Tea?")
        #expect(poll.content.searchableWords == ["Tea?", "Green", "Black"])
        #expect(poll.content.pushContent == "[Poll] Tea?")
        #expect(poll.persistence == .counted)

        let typing = registry.decode(Fixtures.envelope("demo:typing", #"{"userID":"ann","isTyping":false}"#))
        #expect(typing.digest == "ann stopped typing")
        #expect(typing.persistence == .status)
        #expect(typing.content.pushContent == nil)

        let sticker = registry.decode(Fixtures.envelope(
            "demo:sticker", #"{"pack":"p","name":"n","url":"https://x.example/s.webp","mimeType":"image/webp","sizeBytes":7}"#))
        #expect(sticker.content.media == MediaReference(remoteURL: "https://x.example/s.webp", mimeType: "image/webp", sizeBytes: 7))
        #expect(registry.type(objectName: "demo:sticker")?.isMedia == true)
    }
}
