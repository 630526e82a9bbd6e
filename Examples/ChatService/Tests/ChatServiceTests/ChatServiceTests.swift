import ChatService
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Missive
import MissiveServer
import Testing

@Test func theAppsOwnRoutesAndTheChatAnswerThroughOneRouter() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chat-service-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let logger = Logger(label: "test")
    let chat = try await ChatServer.open(
        configuration: ServerConfiguration(dataDirectory: folder), registry: MessageRegistry.Builder().build(), logger: logger)
    let alice = try chat.accounts.add(member: "alice")
    _ = try chat.accounts.add(member: "bob")

    try await buildApplication(chat: chat, logger: logger).test(.router) { client in
        // The app's own route.
        try await client.execute(uri: "/shop/orders/A-1042", method: .get) { response in
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == "order A-1042 ships tomorrow")
        }
        // The chat's: refused without a token, in the chat's own error shape...
        try await client.execute(uri: "/api/v1/me", method: .get) { response in
            #expect(response.status == .unauthorized)
            #expect(String(buffer: response.body).contains(#""code":"unauthorized""#))
        }
        // ...and with one, a conversation made and a message sent and read back.
        let bearer: HTTPFields = [.authorization: "Bearer \(alice)"]
        try await client.execute(
            uri: "/api/v1/conversations", method: .post, headers: bearer, body: ByteBuffer(string: #"{"id":"team","members":["bob"]}"#)
        ) { response in
            #expect(response.status == .created)
        }
        let envelope = #"{"objectName":"MS:Text","content":{"content":"hello"}}"#
        try await client.execute(
            uri: "/api/v1/conversations/team/messages", method: .post, headers: bearer, body: ByteBuffer(string: envelope)
        ) { response in
            #expect(response.status == .created)
        }
        try await client.execute(uri: "/api/v1/conversations/team/messages", method: .get, headers: bearer) { response in
            #expect(response.status == .ok)
            #expect(String(buffer: response.body).contains(#""content":{"content":"hello"}"#))
        }
        // A path of the API that is no endpoint, or a method its path does not have: the chat's not-found...
        for (uri, method) in [("/api/v1/nope", HTTPRequest.Method.get), ("/api/v1/conversations/team/read", .get)] {
            try await client.execute(uri: uri, method: method, headers: bearer) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body).contains(#""code":"not-found""#), "\(uri)")
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
            }
        }
        // ...while the app's own paths keep Hummingbird's answer.
        try await client.execute(uri: "/shop/nope", method: .get) { response in
            #expect(response.status == .notFound)
            #expect(!String(buffer: response.body).contains("not-found"))
        }
    }
}
