import Foundation
@testable import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Type reports: a member's client says which types it can draw, over the event stream or HTTP; the server keeps
/// the last report of each member, and a member asks which of the others in a conversation can draw a type.
@Suite struct TypeReportTests {
    /// A report of the demo poll and the built-in text, as a client with the demo plugins sends it.
    static let withPoll = #"[{"objectName":"demo:poll","version":"1.0.0"},{"objectName":"MS:Text","version":"0.7.0"}]"#
    /// The same client after the poll's plugin was removed.
    static let withoutPoll = #"[{"objectName":"MS:Text","version":"0.7.0"}]"#

    /// The `types` of a report answer, as (objectName, version) pairs in the order given.
    static func types(_ report: [String: Any]) -> [String] {
        (report["types"] as? [[String: Any]] ?? []).map { "\($0["objectName"] ?? "?") \($0["version"] ?? "?")" }
    }

    @Test(arguments: StoreBackend.allCases)
    func aReportOverTheStreamIsKeptAndASecondOneReplacesIt(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend, transport: .live)
        let alice = try running.member("alice")
        #expect(try await running.request("GET", "/api/v1/me/types", token: alice).errorCode == "no-report")

        let client = EventClient(port: running.port, token: alice)
        try await client.expectNext("hello")
        try await client.send(#"{"type":"types","ref":"r1","types":\#(Self.withPoll)}"#)
        let first = try await client.expectNext("reported")
        #expect(first["ref"] as? String == "r1")
        let result = try #require(first["result"] as? [String: Any], "\(first)")
        #expect(result["member"] as? String == "alice")
        #expect(Self.types(result) == ["MS:Text 0.7.0", "demo:poll 1.0.0"], "\(result)")
        let asked = try await running.request("GET", "/api/v1/me/types", token: alice)
        #expect(asked.status == 200, "\(asked.text)")
        #expect(Self.types(try asked.json) == ["MS:Text 0.7.0", "demo:poll 1.0.0"])
        #expect((try asked.json["reportedAt"] as? NSNumber)?.int64Value == (result["reportedAt"] as? NSNumber)?.int64Value)

        // The plugin set changes while the client is connected: it reports again, and the new report replaces the old.
        try await client.send(#"{"type":"types","ref":2,"types":\#(Self.withoutPoll)}"#)
        let second = try await client.expectNext("reported")
        #expect(second["ref"] as? Int == 2)
        #expect(Self.types(try await running.request("GET", "/api/v1/me/types", token: alice).json) == ["MS:Text 0.7.0"])

        // Over HTTP, the same: the answer is the report as kept; an empty list is a report too (draws nothing).
        let put = try await running.request("PUT", "/api/v1/me/types", token: alice, body: #"{"types":\#(Self.withPoll)}"#)
        #expect(put.status == 200, "\(put.text)")
        #expect(Self.types(try put.json) == ["MS:Text 0.7.0", "demo:poll 1.0.0"])
        #expect(try await running.request("PUT", "/api/v1/me/types", token: alice, body: #"{"types":[]}"#).status == 200)
        let empty = try await running.request("GET", "/api/v1/me/types", token: alice)
        #expect(try empty.status == 200 && Self.types(empty.json).isEmpty, "\(empty.text)")
        // The stream still answers after the reports.
        try await client.send(#"{"type":"types","ref":3,"types":\#(Self.withoutPoll)}"#)
        try await client.expectNext("reported")
        // A member without a token reports nothing.
        #expect(try await running.request("PUT", "/api/v1/me/types", token: nil, body: #"{"types":[]}"#).status == 401)
        await client.close()
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aMemberAsksWhichOfTheOthersDrawAType(backend: StoreBackend) async throws {
        let running = try await RunningServer.start(backend)
        let alice = try running.member("alice")
        let bob = try running.member("bob")
        let carol = try running.member("carol")
        _ = try running.member("dave")
        let eve = try running.member("eve")
        try await running.makeConversation("team", token: alice, members: ["dave", "carol", "bob"])
        #expect(try await running.request("PUT", "/api/v1/me/types", token: bob, body: #"{"types":\#(Self.withPoll)}"#).status == 200)
        #expect(try await running.request("PUT", "/api/v1/me/types", token: carol, body: #"{"types":\#(Self.withoutPoll)}"#).status == 200)
        // alice's own report is not in her answer; eve's report says nothing about a conversation she is not in.
        #expect(try await running.request("PUT", "/api/v1/me/types", token: alice, body: #"{"types":\#(Self.withPoll)}"#).status == 200)
        #expect(try await running.request("PUT", "/api/v1/me/types", token: eve, body: #"{"types":\#(Self.withPoll)}"#).status == 200)

        let answer = try await running.request("GET", "/api/v1/conversations/team/types/demo%3Apoll", token: alice)
        #expect(answer.status == 200, "\(answer.text)")
        #expect(try answer.json["objectName"] as? String == "demo:poll")
        let members = try #require(try answer.json["members"] as? [[String: Any]], "\(answer.text)")
        #expect(members.map { $0["member"] as? String } == ["bob", "carol", "dave"], "\(answer.text)")
        #expect(members[0]["reported"] as? Bool == true && members[0]["draws"] as? Bool == true && members[0]["version"] as? String == "1.0.0")
        #expect((members[0]["reportedAt"] as? NSNumber).map { $0.int64Value > 1_700_000_000_000 } == true, "\(members[0])")
        #expect(members[1]["reported"] as? Bool == true && members[1]["draws"] as? Bool == false && members[1]["version"] is NSNull, "\(members[1])")
        #expect(members[2]["reported"] as? Bool == false && members[2]["draws"] is NSNull, "\(members[2])")
        #expect(members[2]["version"] is NSNull && members[2]["reportedAt"] is NSNull, "\(members[2])")
        // The exact text, so that a client can rely on every member being present, null included.
        #expect(answer.text.contains(#"{"member":"dave","reported":false,"draws":null,"version":null,"reportedAt":null}"#), "\(answer.text)")
        // A built-in type, asked by bob: alice and carol draw it; the path may spell the colon as it is.
        let text = try await running.request("GET", "/api/v1/conversations/team/types/MS:Text", token: bob)
        let drawing = try #require(try text.json["members"] as? [[String: Any]], "\(text.text)")
        #expect(drawing.map { "\($0["member"] as? String ?? "?") \(($0["draws"] as? Bool).map(String.init) ?? "null")" } == ["alice true", "carol true", "dave null"], "\(text.text)")

        // Someone outside the conversation learns nothing, as for every conversation route; nor does anyone about
        // a conversation that does not exist.
        let outside = try await running.request("GET", "/api/v1/conversations/team/types/demo:poll", token: eve)
        #expect(outside.status == 404 && outside.errorCode == "not-found", "\(outside.text)")
        #expect(try await running.request("GET", "/api/v1/conversations/nowhere/types/demo:poll", token: alice).status == 404)
        // A type name outside the grammar is refused with the reason.
        let invalid = try await running.request("GET", "/api/v1/conversations/team/types/9lives", token: alice)
        #expect(invalid.status == 400 && invalid.errorCode == "invalid-type" && invalid.text.contains("letter"), "\(invalid.text)")
        await running.stop()
    }

    @Test func invalidReportsAreRefusedWithTheEntryNamedAndTheLastReportStays() async throws {
        let running = try await RunningServer.start(.sqlite, transport: .live)
        let alice = try running.member("alice")
        #expect(try await running.request("PUT", "/api/v1/me/types", token: alice, body: #"{"types":\#(Self.withPoll)}"#).status == 200)
        let longVersion = String(repeating: "1", count: 65)
        let many = (0...4_096).map { #"{"objectName":"t\#($0)","version":"1"}"# }.joined(separator: ",")
        let refused: [(body: String, says: String)] = [
            (#"{"types":[{"objectName":"MS:Text","version":"1"},{"objectName":"9lives","version":"1"}]}"#, "types[1]: objectName '9lives'"),
            (#"{"types":[{"objectName":"a b","version":"1"}]}"#, "types[0]:"),
            (#"{"types":[{"objectName":"demo:poll"}]}"#, "types[0]: the entry for demo:poll needs \"version\""),
            (#"{"types":[{"objectName":"demo:poll","version":1}]}"#, "types[0]: the entry for demo:poll needs \"version\", a string"),
            (#"{"types":[{"version":"1"}]}"#, "types[0]: the entry needs \"objectName\""),
            (#"{"types":[{"objectName":"demo:poll","version":"\#(longVersion)"}]}"#, "types[0]: the version of demo:poll has 65 characters"),
            (#"{"types":[{"objectName":"demo:poll","version":"1\u0007"}]}"#, "types[0]: the version of demo:poll holds a control"),
            (#"{"types":[{"objectName":"demo:poll","version":"1"},{"objectName":"demo:poll","version":"2"}]}"#, "types[1]: demo:poll is listed twice"),
            (#"{"types":["demo:poll"]}"#, "types[0]: an entry is"),
            (#"{"types":{"demo:poll":"1"}}"#, "a report needs \"types\", an array"),
            (#"{}"#, "a report needs \"types\""),
            (#"{"types":[\#(many)]}"#, "the report lists 4097 types; at most 4096"),
        ]
        for (body, says) in refused {
            let answer = try await running.request("PUT", "/api/v1/me/types", token: alice, body: body)
            #expect(answer.status == 400 && answer.errorCode == "invalid-report", "\(body.prefix(80)): \(answer.status) \(answer.text)")
            let message = (try answer.json["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains(says), "\(body.prefix(80)): \(answer.text)")
        }
        // A body that is not JSON, or not an object.
        #expect(try await running.request("PUT", "/api/v1/me/types", token: alice, body: "types").errorCode == "malformed-json")
        #expect(try await running.request("PUT", "/api/v1/me/types", token: alice, body: "[]").errorCode == "malformed-request")
        // 4,096 entries are taken; a longer version in characters than in bytes counts characters.
        let most = (0..<4_096).map { #"{"objectName":"t\#($0)","version":"1"}"# }.joined(separator: ",")
        #expect(try await running.request("PUT", "/api/v1/me/types", token: alice, body: #"{"types":[\#(most)]}"#).status == 200)
        let accented = String(repeating: "é", count: 64)
        #expect(try await running.request("PUT", "/api/v1/me/types", token: alice, body: #"{"types":\#(Self.withPoll)}"#).status == 200)

        // Over the stream: an error frame with the ref and the entry named; the connection stays, and so does the
        // report kept before.
        let client = EventClient(port: running.port, token: alice)
        try await client.expectNext("hello")
        try await client.send(#"{"type":"types","ref":"bad","types":[{"objectName":"demo:poll","version":"1"},{"objectName":"","version":"1"}]}"#)
        let error = try await client.expectNext("error")
        #expect(error["ref"] as? String == "bad")
        let details = try #require(error["error"] as? [String: Any])
        #expect(details["code"] as? String == "invalid-report" && (details["message"] as? String ?? "").hasPrefix("types[1]: objectName is empty"), "\(details)")
        try await client.send(#"{"type":"types","ref":"none"}"#)
        #expect((try await client.expectNext("error")["error"] as? [String: Any])?["code"] as? String == "invalid-report")
        try await client.send(#"{"type":"types","ref":"ok","types":[{"objectName":"demo:link","version":"\#(accented)"}]}"#)
        let accepted = try await client.expectNext("reported")
        #expect(Self.types(try #require(accepted["result"] as? [String: Any])) == ["demo:link \(accented)"])
        #expect(Self.types(try await running.request("GET", "/api/v1/me/types", token: alice).json) == ["demo:link \(accented)"])
        await client.close()
        await running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func aReportSurvivesARestartOfTheServer(backend: StoreBackend) async throws {
        let first = try await RunningServer.start(backend)
        let alice = try first.member("alice")
        let bob = try first.member("bob")
        try await first.makeConversation("pair", token: alice, members: ["bob"])
        #expect(try await first.request("PUT", "/api/v1/me/types", token: bob, body: #"{"types":\#(Self.withPoll)}"#).status == 200)
        let before = try await first.request("GET", "/api/v1/me/types", token: bob).text
        await first.stop()

        let second = try await RunningServer.start(
            backend, dataDirectory: first.server.configuration.dataDirectory, store: first.server.configuration.storeLocation)
        #expect(try await second.request("GET", "/api/v1/me/types", token: bob).text == before)
        let answer = try await second.request("GET", "/api/v1/conversations/pair/types/demo:poll", token: alice)
        let members = try #require(try answer.json["members"] as? [[String: Any]], "\(answer.text)")
        #expect(members.count == 1 && members[0]["member"] as? String == "bob" && members[0]["draws"] as? Bool == true, "\(answer.text)")
        await second.stop()
    }
}
