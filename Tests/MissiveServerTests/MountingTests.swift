import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MissiveServer
import MissiveServerTestSupport
import MissiveStoreTestSupport
import MissiveTestSupport
import NIOCore
import Testing

/// What a host that mounts the routes in its own router gets from ``ChatServer/unmatchedAPIRequests(context:)`` and
/// ``ChatServer/httpServerConfiguration``: Missive's answers where Missive answers, and only there.
@Suite struct MountingTests {
    @Test func unmatchedAPIRequestsChangeOnlyTheRoutersOwnNotFound() async throws {
        let running = try await RunningServer.start(.sqlite)
        defer { Task { await running.stop() } }
        let chat = running.server
        let alice = try running.member("alice")
        // A host with routes of its own, one of them under /api/v1, one throwing Hummingbird's not-found itself.
        let router = Router(context: MissiveServerContext.self)
        router.get("api/v1/host/fine") { _, _ in "fine" }
        router.get("api/v1/host/gone") { _, _ -> String in throw HTTPError(.notFound, message: "the host's own") }
        router.addRoutes(chat.routes(context: MissiveServerContext.self))
        // After the routes: the router's not-found answer sees it wherever it was added.
        router.add(middleware: chat.unmatchedAPIRequests(context: MissiveServerContext.self))
        let bearer: HTTPFields = [.authorization: "Bearer \(alice)"]
        try await Application(router: router).test(.router) { client in
            // A path of the API no route takes, or a method its path does not have: Missive's not-found.
            for (uri, method) in [("/api/v1/nope", HTTPRequest.Method.get), ("/api/v1/conversations", .delete), ("/api/v1", .get)] {
                try await client.execute(uri: uri, method: method, headers: bearer) { response in
                    #expect(response.status == .notFound, "\(uri)")
                    #expect(String(buffer: response.body).contains(#""code":"not-found""#), "\(uri): \(String(buffer: response.body))")
                    #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(uri)")
                }
            }
            // Missive's own routes answer as they do.
            try await client.execute(uri: "/api/v1/me", method: .get, headers: bearer) { response in
                #expect(response.status == .ok && String(buffer: response.body).contains("alice"))
            }
            // The host's routes under /api/v1, their answers and their errors, pass through as they came.
            try await client.execute(uri: "/api/v1/host/fine", method: .get) { response in
                #expect(response.status == .ok && String(buffer: response.body) == "fine")
                #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == nil, "Missive's headers on the host's route")
            }
            try await client.execute(uri: "/api/v1/host/gone", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(!String(buffer: response.body).contains("not-found"), "\(String(buffer: response.body))")
            }
            // Outside /api/v1, the router's own answer.
            try await client.execute(uri: "/shop/nope", method: .get) { response in
                #expect(response.status == .notFound && !String(buffer: response.body).contains("not-found"))
            }
        }
    }

    /// A text frame that is not UTF-8 closes the event stream (1007), rather than reaching the server with its bytes
    /// replaced; a frame larger than Hummingbird's default of 16 KiB is read.
    @Test func theServersWebSocketSettingsHold() async throws {
        let running = try await RunningServer.start(.sqlite, transport: .live)
        defer { Task { await running.stop() } }
        let alice = try running.member("alice")
        _ = try running.member("bob")
        #expect(try await running.request("POST", "/api/v1/conversations", token: alice, body: #"{"id":"team","members":["bob"]}"#).status == 201)
        let client = EventClient(port: running.port, token: alice)
        try await client.expectNext("hello")
        let text = String(repeating: "a", count: 20_000)
        try await client.send(#"{"type":"send","conversation":"team","ref":"big","envelope":{"objectName":"MS:Text","content":{"content":"\#(text)"}}}"#)
        #expect(try await client.expectNext("sent", skipping: ["joined", "message"])["ref"] as? String == "big")
        try await client.sendText(bytes: Array(#"{"type":"read","conversation":"team","upTo":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8))
        #expect(try await client.waitForEnd(timeout: .seconds(30)), "the connection stayed open after a frame that is not UTF-8")
        await client.close()
    }
}
