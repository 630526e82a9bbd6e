import Foundation
import Missive
import MissiveTestSupport
import Testing

/// The plain-C sample, demo:rating: a plugin need not be Swift.
@Suite struct CPluginTests {
    let registry: MessageRegistry

    init() throws {
        registry = try Fixtures.sampleRegistry()
    }

    private func decode(_ content: [UInt8]) -> Message {
        registry.decode(Envelope(id: "r", conversationID: "c", senderID: "s", sentAt: 0, objectName: "demo:rating", content: content))
    }

    @Test func decodesEncodesAndDigests() throws {
        let message = decode(Array(#"{"comment":"Tab\there, \"quoted\" \u00e9 \ud83d\ude00","score":5}"#.utf8))
        #expect(message.isKnown)
        #expect(message.digest == "[Rating] ★★★★★ Tab here, \"quoted\" é 😀")
        #expect(message.content.searchableWords == ["Tab\there, \"quoted\" é 😀"])
        #expect(message.content.pushContent == message.digest)
        // Sent again exactly as received; the plugin's own encoding escapes only what JSON requires.
        let received = Array(#"{"comment":"Tab\there, \"quoted\" \u00e9 \ud83d\ude00","score":5}"#.utf8)
        #expect(try message.reencoded().content == received)
        let encoded = try message.content.typeEncodedContent()
        #expect(encoded.text == #"{"comment":"Tab\there, \"quoted\" é 😀","score":5}"#)
        #expect(try decode(encoded).content.typeEncodedContent() == encoded)
    }

    @Test(arguments: [
        ("", "content must be a JSON object"),
        ("{", "expected a string"),
        (#"{"score":0}"#, "score must be a whole number from 1 to 5"),
        (#"{"score":2.5}"#, "score must be a whole number from 1 to 5"),
        (#"{"score":"5"}"#, "score must be a number"),
        (#"{"comment":"no score"}"#, "missing field 'score'"),
        (#"{"score":3,"comment":"\ud800"}"#, "lone surrogate"),
        (#"{"score":3} trailing"#, "unexpected data after the object"),
        (#"{"score":1e300}"#, "score must be a whole number from 1 to 5"),
        (#"{"score\u0000x":4}"#, "missing field 'score'"),
    ])
    func refusesBadContentWithAReason(content: String, reason: String) throws {
        let unknown = try #require(decode(Array(content.utf8)).unknown)
        #expect(unknown.reason == .decodeFailed(reason))
        #expect(unknown.rawContent == Array(content.utf8))
    }

    @Test func survivesHostileInput() throws {
        let deep = Array((#"{"score":3,"x":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}").utf8)
        #expect(decode(deep).unknown?.reason == .decodeFailed("JSON nested too deeply"))
        let invalidUTF8: [UInt8] = Array(#"{"score":3,"comment":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(decode(invalidUTF8).unknown?.reason == .decodeFailed("string is not valid UTF-8"))
        let nul: [UInt8] = Array(#"{"score":3,"comment":""#.utf8) + [0] + Array(#""}"#.utf8)
        #expect(!decode(nul).isKnown)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let noise = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(decode(noise).unknown?.rawContent == noise)
        }
    }

    @Test func theReadmesOneLineCCommandBuildsAPluginThatLoads() async throws {
        let readme = try String(contentsOfFile: Fixtures.repositoryRoot + "/README.md", encoding: .utf8)
        let start = try #require(readme.range(of: "`cc -shared"))
        let end = try #require(readme[start.upperBound...].firstIndex(of: "`"))
        let command = String(readme[readme.index(after: start.lowerBound)..<end])
        #expect(command == "cc -shared -fPIC -fvisibility=hidden -I path/to/Sources/CMissivePlugin/include rating.c -o libCRating.so")
        // Run it as written, from a folder holding a copy of the sample's source, with `path/to/` being the checkout.
        let folder = try Fixtures.temporaryDirectory()
        try FileManager.default.copyItem(atPath: Fixtures.repositoryRoot + "/SampleTypes/CRating/rating.c", toPath: folder + "/rating.c")
        let run = try await Fixtures.run("/bin/sh", ["-c", command.replacingOccurrences(of: "path/to/", with: Fixtures.repositoryRoot + "/")], directory: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let plugin = try PluginLoader.load(folder + "/libCRating.so")
        #expect(plugin.metadata.name == "CRating")
        #expect(plugin.objectNames == ["demo:rating"])
    }
}
