import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Missive
import MissiveServer
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// A `MissiveServer` running in this process on a port of loopback the system chose, with a fresh data folder and
/// store of the given backend, driven over real HTTP connections.
struct RunningServer {
    let server: MissiveServer
    let port: Int
    private let task: Task<Void, any Error>

    /// Starts a server; stop it with ``stop()``. With `dataDirectory` and `store`, it uses those of another server
    /// (one started before, or one running beside it) instead of fresh ones.
    static func start(
        _ backend: StoreBackend, limits: ServerLimits = ServerLimits(), keepsRefusedContent: Bool = false, dataDirectory: String? = nil,
        store: StoreLocation? = nil, registry: MessageRegistry? = nil
    ) async throws -> RunningServer {
        let data = try dataDirectory ?? Fixtures.temporaryDirectory()
        var store = store
        if store == nil { store = try StoreLocation(parsing: try await backend.newLocation()) }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: data, store: store, limits: limits)
        configuration.keepsRefusedContent = keepsRefusedContent
        let server = try await MissiveServer.open(configuration: configuration, registry: try registry ?? Fixtures.sampleRegistry(), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
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
        return RunningServer(server: server, port: port, task: task)
    }

    /// Stops the server and waits for it.
    func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// Makes a member and returns its token.
    func member(_ name: String) throws -> String {
        try server.accounts.add(member: name)
    }

    /// One request: the status, the body and the headers of the answer.
    func request(_ method: String, _ path: String, token: String?, body: String? = nil, headers: [String: String] = [:]) async throws -> HTTPAnswer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Fixtures.load(request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return HTTPAnswer(status: http.statusCode, body: Array(data), headers: fields)
    }
}

extension RunningServer {
    /// One request whose body is `bytes` as they are (an upload), with `contentType` as its `Content-Type`, through
    /// a session that caches nothing, so that each answer (a `304` too) is the server's own. With `chunked`, the
    /// body is sent without a `Content-Length`, in chunks, as a client streaming a file sends it.
    func request(
        _ method: String, _ path: String, token: String?, bytes: [UInt8]?, contentType: String? = nil, headers: [String: String] = [:], chunked: Bool = false
    ) async throws -> HTTPAnswer {
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
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return HTTPAnswer(status: http.statusCode, body: Array(data), headers: fields)
    }
}

/// An answer of the server.
struct HTTPAnswer {
    var status: Int
    var body: [UInt8]
    var headers: [String: String]

    /// The body as text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object.
    var json: [String: Any] {
        get throws { try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], "\(text)") }
    }

    /// The `error.code` of an error answer.
    var errorCode: String? {
        ((try? json)?["error"] as? [String: Any])?["code"] as? String
    }
}

/// A TCP socket connected to `port` on 127.0.0.1, for tests that speak to the server byte by byte; its caller
/// closes it. `receiveBuffer` sets its receive buffer before it connects (a small one makes a reader that falls
/// behind at once). Blocking: call it off the concurrency pool (`Fixtures.offThePool`) when it may wait.
func loopbackSocket(port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
    if var size = receiveBuffer { setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw HarnessError("connect to port \(port): \(reason)")
    }
    return descriptor
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension RunningServer {
    /// Makes the conversation `id` as the member of `token`, with `members`, and checks that it was made.
    func makeConversation(_ id: String, token: String, members: [String] = []) async throws {
        let names = members.map { "\"\($0)\"" }.joined(separator: ",")
        let answer = try await request("POST", "/api/v1/conversations", token: token, body: #"{"id":"\#(id)","members":[\#(names)]}"#)
        #expect(answer.status == 201, "making \(id): \(answer.status) \(answer.text)")
    }

    /// Sends the envelope `body` to the conversation `conversation` (a path segment, percent-encoded as needed).
    func send(_ body: String, to conversation: String, token: String) async throws -> HTTPAnswer {
        try await request("POST", "/api/v1/conversations/\(conversation)/messages", token: token, body: body)
    }

    /// Performs the message action `action` on `message` in `conversation` (path segments, percent-encoded as
    /// needed), with `arguments` (a JSON array) when given.
    func act(_ action: String, on message: String, in conversation: String, token: String?, arguments: String? = nil) async throws -> HTTPAnswer {
        try await request(
            "POST", "/api/v1/conversations/\(conversation)/messages/\(message)/actions/\(action)", token: token,
            body: arguments.map { #"{"arguments":\#($0)}"# })
    }
}
