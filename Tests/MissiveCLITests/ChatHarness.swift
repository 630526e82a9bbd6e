import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MissiveTestSupport
import Testing

/// A `missive` executable with a plugin set of its own: a hard link of the built `missive` in a folder of its own
/// (so that `/proc/self/exe` names that folder, the first default folder of the search path) beside copies of the
/// given plugins, with its own `XDG_DATA_HOME` (the per-user plugin folder `missive install` fills) and an empty
/// system folder.
struct ChatHost {
    /// The executable.
    let executable: String
    /// Its `XDG_DATA_HOME`.
    let dataHome: String
    /// Its environment.
    let environment: [String: String]

    /// A host with the sample plugins named (none for an empty set); `useBuiltExecutable` runs the build folder's
    /// `missive`, which has every sample plugin beside it.
    init(plugins: [String], useBuiltExecutable: Bool = false) throws {
        let dataHome = try Fixtures.temporaryDirectory()
        let system = try Fixtures.temporaryDirectory()
        if useBuiltExecutable {
            executable = Fixtures.buildDirectory + "/missive"
        } else {
            let folder = try Fixtures.stage(plugins)
            executable = folder + "/missive"
            do {
                try FileManager.default.linkItem(atPath: Fixtures.buildDirectory + "/missive", toPath: executable)
            } catch {
                try FileManager.default.copyItem(atPath: Fixtures.buildDirectory + "/missive", toPath: executable)
            }
        }
        self.dataHome = dataHome
        environment = Fixtures.missiveEnvironment(journal: Fixtures.scratchPath("crashes")).merging([
            "XDG_DATA_HOME": dataHome, "MISSIVE_SYSTEM_PLUGIN_DIR": system, "NO_COLOR": "1",
        ]) { _, new in new }.filter { $0.key != "MISSIVE_TOKEN" }
    }

    /// Runs this `missive` to its end, at once rather than after a child slot: the scenario's server and clients
    /// already run, and would wait with it behind every other test's children.
    func run(_ arguments: String...) async throws -> Fixtures.Run {
        try await Fixtures.run(executable, arguments, environment: environment, inherit: false, timeout: .seconds(120), priority: .immediate)
    }
}

/// A running `missive` child (a server or a chat client): its standard input to write to, and the lines it
/// printed.
final class ChatProcess: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let collector: LineCollector

    init(_ host: ChatHost, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: host.executable)
        process.arguments = arguments
        process.environment = host.environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        collector = LineCollector(output.fileHandleForReading)
        try process.run()
    }

    deinit { stop() }

    /// Every line printed so far.
    var lines: [String] { collector.lines }

    /// How many lines were printed so far: a mark to wait for what comes after.
    var mark: Int { lines.count }

    /// Writes one line to the child's standard input.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits (60 s at most: the machine may be busy with the rest of the suite) until a line printed after `mark` contains `text`; whether one did.
    @discardableResult
    func waitFor(_ text: String, after mark: Int = 0, timeout: Duration = .seconds(60)) async throws -> Bool {
        try await waitUntil(timeout: timeout) { $0.dropFirst(mark).contains { $0.contains(text) } }
    }

    /// Waits until the lines satisfy `condition`, for `timeout` at most; whether they did.
    func waitUntil(timeout: Duration = .seconds(60), _ condition: ([String]) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(lines) { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return condition(lines)
    }

    /// The lines printed after `mark`, joined, for a failure's message.
    func text(after mark: Int = 0) -> String {
        lines.dropFirst(mark).joined(separator: "\n")
    }

    /// Stops the child (SIGTERM) if it still runs.
    func stop() {
        if process.isRunning { process.terminate() }
    }
}

/// A `missive serve` on a loopback port chosen by the system, with its data in a folder of its own, and the
/// members' tokens.
struct ChatServer {
    let process: ChatProcess
    let port: Int
    let data: String
    var url: String { "http://127.0.0.1:\(port)" }

    /// Starts a server of `host`, with accounts for `members`.
    static func start(_ host: ChatHost, members: [String]) async throws -> (ChatServer, [String: String]) {
        let data = try Fixtures.temporaryDirectory() + "/server"
        var tokens: [String: String] = [:]
        for member in members {
            let add = try await host.run("serve", "users", "add", member, "--data", data)
            #expect(add.status == 0, "\(add.stderr)")
            tokens[member] = add.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let process = try ChatProcess(host, ["serve", "--port", "0", "--data", data])
        #expect(try await process.waitFor("listening on http://127.0.0.1:"), "\(process.text())")
        let line = try #require(process.lines.first { $0.contains("listening on http://127.0.0.1:") })
        let after = try #require(line.range(of: "listening on http://127.0.0.1:"))
        let port = try #require(Int(line[after.upperBound...].prefix { $0.isNumber }))
        return (ChatServer(process: process, port: port, data: data), tokens)
    }

    /// One request to the API as the member whose token this is: the status and the JSON answer.
    func api(_ method: String, _ path: String, token: String, body: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: url + "/api/v1/" + path)!)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body { request.httpBody = Data(body.utf8) }
        let (data, response) = try await Fixtures.load(request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    /// The messages of a conversation as the server keeps them, oldest first.
    func messages(_ conversation: String, token: String) async throws -> [[String: Any]] {
        try #require(try await api("GET", "conversations/\(conversation)/messages?limit=500", token: token).json["messages"] as? [[String: Any]])
    }

    /// Whether the server takes type reports (`GET /api/v1/me/types` is a route: a report or `no-report`).
    func takesTypeReports(token: String) async throws -> Bool {
        let answer = try await api("GET", "me/types", token: token)
        return answer.status == 200 || (answer.json["error"] as? [String: Any])?["code"] as? String == "no-report"
    }
}

/// A stored message's envelope and content, as JSON objects.
func envelopeOf(_ message: [String: Any]) -> [String: Any] {
    message["envelope"] as? [String: Any] ?? [:]
}
