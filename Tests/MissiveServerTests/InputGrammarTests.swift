import Foundation
@testable import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// What the server takes from a member: every sent envelope follows the name grammar of the registry and the type
/// reports, and every path segment and query parameter is percent-encoded UTF-8 without control characters. Anything
/// else gets a `400` with a code and a reason, over HTTP and on the event stream alike, and nothing is stored.
@Suite struct InputGrammarTests {
    /// Envelopes whose names break the grammar, with the member the refusal must name.
    static let misnamed: [(envelope: String, names: String)] = [
        (#"{"objectName":"","content":{}}"#, "objectName"),
        (#"{"objectName":"\#(String(repeating: "x", count: 5_000))","content":{}}"#, "objectName"),
        (#"{"objectName":"demo\u001b[31m","content":{}}"#, "objectName"),
        (#"{"objectName":"demo\u0007","content":{}}"#, "objectName"),
        (#"{"objectName":"a\nb","content":{}}"#, "objectName"),
        (#"{"objectName":"<script>","content":{}}"#, "objectName"),
        (#"{"objectName":"demo\u202Eevil","content":{}}"#, "objectName"),
        (#"{"objectName":"demo/../x","content":{}}"#, "objectName"),
        (#"{"objectName":"de\"mo","content":{}}"#, "objectName"),
        (#"{"objectName":"9lives","content":{}}"#, "objectName"),
        (#"{"id":"","objectName":"MS:Text","content":{"content":"x"}}"#, "id"),
        (#"{"id":"\#(String(repeating: "i", count: 10_000))","objectName":"MS:Text","content":{"content":"x"}}"#, "id"),
        (#"{"id":"two words","objectName":"MS:Text","content":{"content":"x"}}"#, "id"),
        (#"{"id":"caf\u00e9","objectName":"MS:Text","content":{"content":"x"}}"#, "id"),
        (#"{"parentID":"a\u0000b","objectName":"MS:Text","content":{"content":"x"}}"#, "parentID"),
    ]

    @Test func everySentEnvelopeFollowsTheNameGrammarOverHTTPAndTheEventStream() async throws {
        let running = try await RunningServer.start(.sqlite, limits: ServerLimits(burst: 500, requestsPerSecond: 100), transport: .live)
        let alice = try running.member("alice")
        try await running.makeConversation("team", token: alice)
        let stream = EventClient(port: running.port, token: alice)
        try await stream.expectNext("hello")
        for (index, (envelope, names)) in Self.misnamed.enumerated() {
            let answer = try await running.send(envelope, to: "team", token: alice)
            #expect(answer.status == 400 && answer.errorCode == "invalid-name", "\(envelope.prefix(70)): \(answer.status) \(answer.text.prefix(200))")
            let message = (try answer.json["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.hasPrefix(names + ":") && message.count < 400, "\(envelope.prefix(70)): \(message)")
            #expect(!message.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{202E}" }, "\(message)")
            try await stream.send(#"{"type":"send","conversation":"team","ref":\#(index),"envelope":\#(envelope)}"#)
            let frame = try await stream.expectNext("error")
            #expect(frame["ref"] as? Int == index && OddInputTests.error(of: frame).code == "invalid-name", "\(frame)")
        }
        #expect(try await running.server.store.messages(inConversation: "team").isEmpty)
        // A name of the grammar that no type here has, an `MS:` one included, is taken: it may be a newer type.
        for (id, name) in [("n1", "acme:order.v2"), ("n2", "MS:FutureBuiltIn"), ("$event:example.org", "MS:Text")] {
            let answer = try await running.send(#"{"id":"\#(id)","objectName":"\#(name)","content":{"content":"x"}}"#, to: "team", token: alice)
            #expect(answer.status == 201, "\(name): \(answer.text)")
        }
        await stream.close()
        await running.stop()
    }

    @Test func oddBytesInQueriesAndPathsAre400NamingTheParameterNever5xx() async throws {
        let running = try await RunningServer.start(.sqlite, limits: ServerLimits(burst: 500, requestsPerSecond: 100))
        let alice = try running.member("alice")
        try await running.makeConversation("team", token: alice)
        #expect(try await running.send(#"{"id":"m1","objectName":"MS:Text","content":{"content":"hello x"}}"#, to: "team", token: alice).status == 201)
        let refused: [(path: String, code: String, says: String)] = [
            ("/api/v1/search?q=%00x", "malformed-query", "q: it holds a control character"),
            ("/api/v1/search?q=%FF", "malformed-query", "q: it is not UTF-8"),
            ("/api/v1/search?q=%C0%80", "malformed-query", "q: it is not UTF-8"),
            ("/api/v1/search?q=%G1", "malformed-query", "q: '%' is not followed"),
            ("/api/v1/search?q=a&q=b", "malformed-query", "more than once"),
            ("/api/v1/search?q=\(String(repeating: "w", count: 2_000))", "malformed-query", "at most 1024"),
            ("/api/v1/search?q=x&conversation=te%00am", "malformed-query", "conversation:"),
            ("/api/v1/search?q=x&limit=%00", "malformed-query", "limit:"),
            ("/api/v1/conversations/team/messages?before=m%0A1", "malformed-query", "before:"),
            ("/api/v1/conversations/te%00am/messages", "malformed-request", "conversation in the path"),
            ("/api/v1/conversations/te%FFam", "malformed-request", "not UTF-8"),
            ("/api/v1/conversations/team/types/demo%1Bpoll", "malformed-request", "objectName in the path"),
        ]
        for (path, code, says) in refused {
            let answer = try await running.request("GET", path, token: alice)
            #expect(answer.status == 400 && answer.errorCode == code && answer.text.contains(says), "\(path.prefix(80)): \(answer.status) \(answer.text.prefix(200))")
        }
        // The same words, well formed, are found.
        let found = try await running.request("GET", "/api/v1/search?q=hello", token: alice)
        #expect(found.status == 200 && found.text.contains(#""id":"m1""#), "\(found.text)")
        await running.stop()
    }

    @Test func anUploadedNameIsReducedToASafeFileNameAndServedAsAnAttachment() async throws {
        let cast = try await MediaTests.Cast.start(.sqlite)
        let cases: [(query: String, kept: String?)] = [
            ("../../../../tmp/x", "x"),
            ("..%5C..%5Cwindows%5Csystem.ini", "system.ini"),
            ("%22quoted%22%3B%20a%3Db.txt", "_quoted_; a=b.txt"),
            ("evil%E2%80%AEtxt.exe", "evil_txt.exe"),
            ("...", nil),
            ("%2F", nil),
        ]
        for (index, (query, kept)) in cases.enumerated() {
            // Bytes of their own each time: identical bytes share one file, and the name it was first uploaded with.
            let uploaded = try await cast.upload(Array("file \(index)\n".utf8), as: "text/plain", by: cast.alice, query: "?name=" + query)
            #expect(uploaded.status == 201, "\(query): \(uploaded.text)")
            #expect(try uploaded.json["name"] as? String == kept, "\(query): \(uploaded.text)")
            let path = try #require(try uploaded.json["remoteURL"] as? String)
            let served = try await cast.download(path, by: cast.bob)
            let disposition = served.headers["content-disposition"] ?? ""
            #expect(disposition.hasPrefix("attachment"), "\(query): \(disposition)")
            if let kept {
                #expect(disposition.contains("filename=\"\(kept)\"") && !disposition.contains("/") && !disposition.contains("\\"), "\(query): \(disposition)")
            }
        }
        let invalid = try await cast.upload(Array("other\n".utf8), as: "text/plain", by: cast.alice, query: "?name=%FF.txt")
        #expect(invalid.status == 400 && invalid.errorCode == "malformed-query" && invalid.text.contains("name: it is not UTF-8"), "\(invalid.text)")
        await cast.running.stop()
    }
}
