import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Missive
import MissiveServer
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import NIOCore
import Testing

/// A `ChatServer` running in this process with a fresh data folder and store of the given backend.
///
/// By default (``Transport/router``) requests go straight to the server's router through HummingbirdTesting's router
/// mode: no port is bound and no socket opened, and the server's services (the event feed, pushes) run beside it as
/// they do in `missive serve`. Tests that need a real connection (the event stream's WebSocket, the page in
/// Chromium, bytes written to a socket, a body sent in chunks) start it with ``Transport/live``: on a port of
/// loopback the system chose, driven over real HTTP connections.
package struct RunningServer: Sendable {
    /// How the tests reach the server.
    package enum Transport: Sendable {
        /// Through the router, in process: no socket.
        case router
        /// Over loopback, on a port the system chose.
        case live
    }

    package let server: ChatServer
    private let livePort: Int?
    private let client: (any TestClientProtocol)?
    private let task: Task<Void, any Error>
    private let stopping: AsyncStream<Void>.Continuation?

    /// Whether requests go through the router (``Transport/router``), with no port.
    package var isInProcess: Bool { client != nil }

    /// The port a ``Transport/live`` server listens on.
    package var port: Int {
        guard let livePort else { preconditionFailure("a server started with the router transport has no port: start it with .live") }
        return livePort
    }

    /// Starts a server; stop it with ``stop()``. With `dataDirectory` and `store`, it uses those of another server
    /// (one started before, or one running beside it) instead of fresh ones; `configure` changes the rest of its
    /// configuration (a push gateway...). The server logs to `logger`, or nowhere.
    package static func start(
        _ backend: StoreBackend, limits: ServerLimits = ServerLimits(), keepsRefusedContent: Bool = false, dataDirectory: String? = nil,
        store: StoreLocation? = nil, registry: MessageRegistry? = nil, transport: Transport = .router, logger: Logger? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> RunningServer {
        let data = try dataDirectory ?? Fixtures.temporaryDirectory()
        var store = store
        if store == nil { store = try StoreLocation(parsing: try await backend.newLocation()) }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: data, store: store, limits: limits)
        configuration.keepsRefusedContent = keepsRefusedContent
        configure(&configuration)
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let server = try await ChatServer.open(configuration: configuration, registry: try registry ?? Fixtures.sampleRegistry(), logger: logger ?? quiet)
        switch transport {
        case .live:
            let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
            let task = Task {
                // A server that cannot start ends the stream, so that the test fails instead of waiting.
                defer { continuation.finish() }
                try await server.run(stopsOnSignals: false) { _, port in
                    continuation.yield(port)
                    continuation.finish()
                }
            }
            guard let port = await ports.first(where: { _ in true }) else {
                throw HarnessError("the server did not start: \(await task.result)")
            }
            return RunningServer(server: server, livePort: port, client: nil, task: task, stopping: nil)
        case .router:
            let application = Application(router: server.buildRouter(), services: server.services, logger: quiet)
            let (clients, handOver) = AsyncStream.makeStream(of: (any TestClientProtocol).self)
            let (stop, stopping) = AsyncStream.makeStream(of: Void.self)
            let task = Task {
                defer { handOver.finish() }
                try await application.test(.router) { client in
                    handOver.yield(client)
                    handOver.finish()
                    for await _ in stop {}
                }
            }
            guard let client = await clients.first(where: { _ in true }) else {
                throw HarnessError("the server's services did not start: \(await task.result)")
            }
            return RunningServer(server: server, livePort: nil, client: client, task: task, stopping: stopping)
        }
    }

    /// Stops the server and waits for it.
    package func stop() async {
        if let stopping {
            stopping.finish()
        } else {
            task.cancel()
        }
        _ = try? await task.value
    }

    /// Makes a member and returns its token.
    package func member(_ name: String) throws -> String {
        try server.accounts.add(member: name)
    }

    /// One request: the status, the body and the headers of the answer.
    package func request(_ method: String, _ path: String, token: String?, body: String? = nil, headers: [String: String] = [:]) async throws -> HTTPAnswer {
        if client != nil {
            return try await request(method, path, token: token, bytes: body.map { Array($0.utf8) }, contentType: body.map { _ in "application/json" }, headers: headers)
        }
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Fixtures.load(request)
        return try HTTPAnswer(data: data, response: response)
    }
}

extension RunningServer {
    /// One request whose body is `bytes` as they are (an upload), with `contentType` as its `Content-Type`, through
    /// a session that caches nothing, so that each answer (a `304` too) is the server's own. With `chunked`, the
    /// body is sent without a `Content-Length`, in chunks, as a client streaming a file sends it.
    package func request(
        _ method: String, _ path: String, token: String?, bytes: [UInt8]?, contentType: String? = nil, headers: [String: String] = [:], chunked: Bool = false
    ) async throws -> HTTPAnswer {
        if let client {
            precondition(!chunked, "a body sent in chunks needs a live server")
            var fields = HTTPFields()
            if let token { fields[.authorization] = "Bearer \(token)" }
            if let contentType { fields[.contentType] = contentType }
            for (name, value) in headers { fields[try #require(HTTPField.Name(name))] = value }
            let method = try #require(HTTPRequest.Method(method))
            let response = try await client.executeRequest(uri: path, method: method, headers: fields, body: bytes.map { ByteBuffer(bytes: $0) })
            var answered: [String: String] = [:]
            for field in response.headers {
                let name = field.name.canonicalName
                answered[name] = answered[name].map { $0 + ", " + field.value } ?? field.value
            }
            return HTTPAnswer(status: response.status.code, body: Array(buffer: response.body), headers: answered)
        }
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.cachePolicy = .reloadIgnoringLocalCacheData
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let bytes {
            if chunked { request.httpBodyStream = InputStream(data: Data(bytes)) } else { request.httpBody = Data(bytes) }
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await Fixtures.load(request, session: session)
        return try HTTPAnswer(data: data, response: response)
    }
}

/// An answer of the server.
package struct HTTPAnswer: Sendable {
    package var status: Int
    package var body: [UInt8]
    package var headers: [String: String]

    /// An answer with every part given.
    package init(status: Int, body: [UInt8], headers: [String: String]) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// The answer URLSession gave, its header names in lower case.
    package init(data: Data, response: URLResponse) throws {
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        self.init(status: http.statusCode, body: Array(data), headers: fields)
    }

    /// The body as text.
    package var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object.
    package var json: [String: Any] {
        get throws { try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], "\(text)") }
    }

    /// The `error.code` of an error answer.
    package var errorCode: String? {
        ((try? json)?["error"] as? [String: Any])?["code"] as? String
    }
}

/// A TCP socket connected to `port` on 127.0.0.1, for tests that speak to the server byte by byte; its caller
/// closes it. `receiveBuffer` sets its receive buffer before it connects (a small one makes a reader that falls
/// behind at once). Blocking: call it off the concurrency pool (`Fixtures.offThePool`) when it may wait.
package func loopbackSocket(port: Int, receiveBuffer: Int32? = nil, from source: String? = nil) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
    if var size = receiveBuffer { setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
    // Another address of loopback (127.0.0.2...), for a client the server must tell from those at 127.0.0.1.
    if let source { try onIPv4Address(source, port: 0, of: descriptor, "bind to \(source)", bind) }
    try onIPv4Address("127.0.0.1", port: port, of: descriptor, "connect to port \(port)", connect)
    return descriptor
}

/// Calls `call` (`bind` or `connect`) on `descriptor` with the IPv4 address `address`:`port`; on failure closes the
/// descriptor and throws, saying `what` failed and why.
private func onIPv4Address(
    _ address: String, port: Int, of descriptor: Int32, _ what: String, _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
) throws {
    var socketAddress = sockaddr_in()
    socketAddress.sin_family = sa_family_t(AF_INET)
    socketAddress.sin_port = in_port_t(UInt16(port).bigEndian)
    socketAddress.sin_addr.s_addr = inet_addr(address)
    let result = withUnsafePointer(to: &socketAddress) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw HarnessError("\(what): \(reason)")
    }
}

package struct HarnessError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

extension RunningServer {
    /// Makes the conversation `id` as the member of `token`, with `members`, and checks that it was made.
    package func makeConversation(_ id: String, token: String, members: [String] = []) async throws {
        let names = members.map { "\"\($0)\"" }.joined(separator: ",")
        let answer = try await request("POST", "/api/v1/conversations", token: token, body: #"{"id":"\#(id)","members":[\#(names)]}"#)
        #expect(answer.status == 201, "making \(id): \(answer.status) \(answer.text)")
    }

    /// Sends the envelope `body` to the conversation `conversation` (a path segment, percent-encoded as needed).
    package func send(_ body: String, to conversation: String, token: String) async throws -> HTTPAnswer {
        try await request("POST", "/api/v1/conversations/\(conversation)/messages", token: token, body: body)
    }

    /// Performs the message action `action` on `message` in `conversation` (path segments, percent-encoded as
    /// needed), with `arguments` (a JSON array) when given.
    package func act(_ action: String, on message: String, in conversation: String, token: String?, arguments: String? = nil) async throws -> HTTPAnswer {
        try await request(
            "POST", "/api/v1/conversations/\(conversation)/messages/\(message)/actions/\(action)", token: token,
            body: arguments.map { #"{"arguments":\#($0)}"# })
    }
}
