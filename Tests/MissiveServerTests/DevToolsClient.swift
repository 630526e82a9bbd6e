import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import MissiveServerTestSupport
import MissiveTestSupport
import NIOCore
import NIOWebSocket
import Synchronization
import Testing

/// Headless Chromium with its DevTools protocol open (`--remote-debugging-port=0`), driven over a WebSocket: JSON
/// commands with ids, answered by id, and events, kept in order for the test to read.
final class DevToolsClient: Sendable {
    private let browser: Mutex<Process>
    private let profile: String
    /// What the connection's reader shares with the test: answers by id, events in order, and whether it ended.
    private final class Shared: Sendable {
        let answers = Mutex<[Int: String]>([:])
        let eventLog = Mutex<[String]>([])
        let ended = Mutex(false)
    }

    private let shared: Shared
    private let nextID = Mutex(0)
    private let writer = Mutex<WebSocketOutboundWriter?>(nil)
    private let task: Task<Void, any Error>

    /// Starts `chromium` with a throwaway profile under `folder` and connects to its browser endpoint.
    init(chromium: String, folder: String) async throws {
        let profile = folder + "/chromium-profile"
        self.profile = profile
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromium)
        process.arguments = [
            "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--hide-scrollbars", "--mute-audio", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
            // The WebSocket client sends an Origin header, which DevTools refuses unless allowed.
            "--remote-allow-origins=*",
            "--user-data-dir=\(profile)", "about:blank",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        // Chromium writes the port and the browser's path to DevToolsActivePort once it listens.
        let file = profile + "/DevToolsActivePort"
        let deadline = ContinuousClock.now + .seconds(60)
        var lines: [String] = []
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: file, encoding: .utf8) {
                lines = text.split(separator: "\n").map(String.init)
                if lines.count >= 2 { break }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard lines.count >= 2, let port = Int(lines[0]) else {
            process.terminate()
            throw HarnessError("chromium did not open its DevTools port within 60 s")
        }
        browser = Mutex(process)
        let url = "ws://127.0.0.1:\(port)\(lines[1])"
        let (writers, writerSink) = AsyncStream.makeStream(of: WebSocketOutboundWriter.self)
        let shared = Shared()
        self.shared = shared
        task = Task {
            defer {
                shared.ended.withLock { $0 = true }
                writerSink.finish()
            }
            try await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: 1 << 26), logger: Logger(label: "devtools") { _ in SwiftLogNoOpLogHandler() }
            ) { inbound, outbound, _ in
                writerSink.yield(outbound)
                for try await message in inbound.messages(maxSize: 1 << 27) {
                    guard case .text(let text) = message else { continue }
                    let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                    if let id = (object?["id"] as? NSNumber)?.intValue {
                        shared.answers.withLock { $0[id] = text }
                    } else {
                        shared.eventLog.withLock { $0.append(text) }
                    }
                }
            }
        }
        var iterator = writers.makeAsyncIterator()
        guard let first = await iterator.next() else { throw HarnessError("could not connect to chromium's DevTools at \(url): \(await task.result)") }
        writer.withLock { $0 = first }
    }

    /// Sends `method` with `params` (a JSON object's text), to the page of `session` when given, and returns the
    /// result; a protocol error is thrown.
    @discardableResult
    func call(_ method: String, _ params: String = "{}", session: String? = nil, timeout: Duration = .seconds(30)) async throws -> [String: Any] {
        let id = nextID.withLock { value -> Int in
            value += 1
            return value
        }
        var frame = #"{"id":\#(id),"method":"\#(method)","params":\#(params)"#
        if let session { frame += #","sessionId":"\#(session)""# }
        frame += "}"
        try await #require(writer.withLock { $0 }).write(.text(frame))
        let deadline = ContinuousClock.now + timeout
        while true {
            if let text = shared.answers.withLock({ $0.removeValue(forKey: id) }) {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                if let error = object["error"] { throw HarnessError("\(method): \(error)") }
                return object["result"] as? [String: Any] ?? [:]
            }
            if shared.ended.withLock({ $0 }) { throw HarnessError("\(method): the DevTools connection ended") }
            if ContinuousClock.now >= deadline { throw HarnessError("\(method): no answer within \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Evaluates `expression` in the page of `session` (awaiting a promise) and returns its value as JSON text.
    func evaluate(_ expression: String, session: String) async throws -> String {
        let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [expression], options: [.fragmentsAllowed]), as: UTF8.self).dropFirst().dropLast()
        let result = try await call(
            "Runtime.evaluate", #"{"expression":\#(quoted),"awaitPromise":true,"returnByValue":true}"#, session: session)
        if let exception = result["exceptionDetails"] { throw HarnessError("evaluating \(expression.prefix(80)): \(exception)") }
        let value = (result["result"] as? [String: Any])?["value"]
        guard let value else { return "null" }
        let text = String(decoding: try JSONSerialization.data(withJSONObject: [value], options: [.fragmentsAllowed, .withoutEscapingSlashes]), as: UTF8.self)
        return String(text.dropFirst().dropLast())
    }

    /// Waits until `expression` evaluates to `true` in the page of `session`; whether it did within `timeout`.
    func waitUntil(_ expression: String, session: String, timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await evaluate("Boolean(\(expression))", session: session)) == "true" { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// The events received so far, each `(method, params, sessionId)` as JSON objects.
    func events() -> [(method: String, session: String?, text: String)] {
        shared.eventLog.withLock { $0 }.compactMap { text in
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], let method = object["method"] as? String else {
                return nil
            }
            return (method, object["sessionId"] as? String, text)
        }
    }

    /// Closes the connection and stops the browser.
    func close() async {
        if let current = writer.withLock({ $0 }) { try? await current.close(.normalClosure, reason: nil) }
        task.cancel()
        let process = browser.withLock { process in
            if process.isRunning { process.terminate() }
            return process
        }
        // Chromium may take a while to exit: its wait blocks a thread of its own, not one the other tests share.
        try? await Fixtures.offThePool { process.waitUntilExit() }
    }
}
