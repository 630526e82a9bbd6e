import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MissiveTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The walls around an isolated plugin's worker and the host's own privacy, as a user meets them through the `missive`
/// command (docs/PROTECTION.md, "The worker's own world", "The host's own process", "What an isolated plugin can and
/// cannot do"), tried by the hostile fixture `BrokenSnoops`, which looks for the marker `MISSIVE-SECRET-` in other
/// processes and in files while it loads and reports what it found when it decodes `report.`. Each test has a control
/// run that differs only in what the test is about and must find what the first run must not, so that a pass shows
/// the walls at work rather than a plugin that failed to look.
// A guard against a hang, which allows for the wait for child slots behind the tests that asked first.
@Suite(SanitizerRun.timeLimit(minutes: 15))
struct ConfinementCLITests {
    /// A fresh secret, as a host keeps one in its environment or files: suffixed per place it is hidden.
    static func secret() -> String { "MISSIVE-SECRET-\(UUID().uuidString.prefix(8))" }

    /// The report BrokenSnoops gives when it found nothing at all.
    static let nothingFound = "snoops: pids=0 proc=0 passwd=0 files=0 secrets=[]"

    /// Two envelopes: BrokenSnoops' report, and a built-in text that must decode whatever happens to the plugin.
    static let messages = """
        {"objectName":"fixture:snoops","id":"snoop","conversationID":"c1","senderID":"bob","sentAt":1700000000000,"content":{"say":"report."}}
        {"objectName":"MS:Text","id":"text","conversationID":"c1","senderID":"bob","sentAt":1700000000000,"content":{"content":"hi"}}

        """

    /// The lines `missive decode --format json` printed, by message id.
    static func decoded(_ run: Fixtures.Run) -> [String: [String: Any]] {
        var lines: [String: [String: Any]] = [:]
        for line in run.stdout.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let id = object["id"] as? String else { continue }
            lines[id] = object
        }
        return lines
    }

    /// The reason `missive decode --format json` gave for the message `id`.
    static func reason(_ run: Fixtures.Run, _ id: String = "snoop") -> String {
        decoded(run)[id]?["reason"] as? String ?? "no reason for \(id) in: \(run.stdout)\n\(run.stderr)"
    }

    // MARK: - missive decode

    @Test("missive decode: an isolated plugin finds nothing of its host, its folder or the home folder; without the walls, dumpable, it finds every secret")
    func decodeBehindTheWallsFindsNoSecret() async throws {
        let secret = Self.secret()
        let view = try await PrivateView.make(secret: secret)
        // Beside the plugin, what a careless host keeps there: a store file holding a token.
        try Data("tokens: \(secret)-beside\n".utf8).write(to: URL(fileURLWithPath: view.folder + "/plugins/store.sqlite"))
        try Data(Self.messages.utf8).write(to: URL(fileURLWithPath: view.folder + "/messages.jsonl"))
        let decode = [view.missive, "decode", "/tmp/messages.jsonl", "--plugin-path", "/tmp/plugins", "--isolation", "isolated", "--format", "json"]
        async let walled = view.run(decode, environment: ["MISSIVE_TEST_SECRET": secret + "-env"])
        async let open = view.run(decode + ["--worker-confinement", "none"], environment: ["MISSIVE_TEST_SECRET": secret + "-env", "MISSIVE_DUMPABLE": "1"])
        let (confined, control) = try await (walled, open)

        #expect(confined.status == 0, "\(confined.stderr)")
        let report = Self.reason(confined)
        #expect(report.contains(Self.nothingFound), "\(report)")
        #expect(!confined.stdout.contains(secret) && !confined.stderr.contains(secret), "\(confined.stdout)\n\(confined.stderr)")
        #expect(Self.decoded(confined)["text"]?["known"] as? Bool == true, "\(confined.stdout)")

        // The control: the same plugin, host and files, without the walls and with the host dumpable.
        #expect(control.status == 0, "\(control.stderr)")
        let found = Self.reason(control)
        for place in ["env", "beside", "home"] {
            #expect(found.contains("\(secret)-\(place)"), "the secret in the \(place) was not found: \(found)")
        }
        #expect(!found.contains("pids=0 ") && found.contains("passwd=1"), "\(found)")
    }

    // MARK: - A kernel that refuses namespaces

    @Test("a kernel that refuses namespaces: the isolated plugin is refused with the reason and the way out; namespaces-when-available runs it without them and says so")
    func aKernelThatRefusesNamespacesRefusesThePluginUnlessTheOperatorAccepts() async throws {
        let view = try await PrivateView.make(secret: Self.secret())
        try Data(Self.messages.utf8).write(to: URL(fileURLWithPath: view.folder + "/messages.jsonl"))
        let decode = [view.missive, "decode", "/tmp/messages.jsonl", "--plugin-path", "/tmp/plugins", "--isolation", "isolated", "--format", "json"]
        let list = [view.missive, "list", "--plugin-path", "/tmp/plugins", "--isolation", "isolated"]
        let accepting = ["MISSIVE_WORKER_CONFINEMENT": "namespaces-when-available"]
        // In a user namespace whose count of nested user namespaces is 0: clone(CLONE_NEWUSER) fails with ENOSPC.
        async let refusedRun = view.run(decode, refuseNamespaces: true)
        async let acceptedRun = view.run(decode + ["--worker-confinement", "namespaces-when-available"], refuseNamespaces: true)
        async let listedRun = view.run(list, environment: accepting, refuseNamespaces: true)
        async let listedJSONRun = view.run(list + ["--format", "json"], environment: accepting, refuseNamespaces: true)
        // The controls: the same runs in the same view, where the kernel allows namespaces.
        async let allowedRun = view.run(decode)
        async let allowedListRun = view.run(list, environment: accepting)
        async let allowedJSONRun = view.run(list + ["--format", "json"], environment: accepting)
        // And as a user runs it, without any wrapper.
        async let plainJSONRun = Fixtures.run(
            view.binaries + "/missive", ["list", "--format", "json", "--plugin-path", view.folder + "/plugins", "--isolation", "isolated"],
            environment: PrivateView.environment(home: view.folder + "/home"), inherit: false, timeout: .seconds(120))
        let (refused, accepted, listed, listedJSON) = try await (refusedRun, acceptedRun, listedRun, listedJSONRun)
        let (allowed, allowedList, allowedJSON, plainJSON) = try await (allowedRun, allowedListRun, allowedJSONRun, plainJSONRun)

        // Refused, with the reason and what to change; the decode goes on, and exits 0 as it does for any refused plugin.
        #expect(refused.status == 0, "\(refused.stderr)")
        let refusal = Self.reason(refused)
        #expect(refusal.contains("the kernel refuses new user, mount, PID and network namespaces"), "\(refusal)")
        #expect(refusal.contains("--worker-confinement namespaces-when-available"), "\(refusal)")
        #expect(!refusal.contains("snoops:"), "the plugin ran: \(refusal)")
        #expect(Self.decoded(refused)["text"]?["known"] as? Bool == true, "\(refused.stdout)")
        #expect(refused.stderr.contains("isolated plugins will not start"), "\(refused.stderr)")
        // Accepted by the operator: the plugin runs, without namespaces (it sees the host's processes), and each start says so.
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let unwalled = Self.reason(accepted)
        #expect(unwalled.hasPrefix("decoding failed: snoops: pids=") && !unwalled.contains("pids=0 "), "\(unwalled)")
        #expect(accepted.stderr.contains("WITHOUT namespaces"), "\(accepted.stderr)")
        #expect(Self.decoded(accepted)["text"]?["known"] as? Bool == true, "\(accepted.stdout)")
        let row = listed.stdout.split(separator: "\n").first { $0.contains("fixture:snoops") } ?? "no row: \(listed.stdout) \(listed.stderr)"
        #expect(row.contains("BrokenSnoops 0.0.1, isolated WITHOUT namespaces"), "\(row)")
        #expect(try Self.workerConfinement(listedJSON) == "none")

        // The controls: where the kernel allows them, the same settings give the walls, and nothing says otherwise.
        #expect(Self.reason(allowed).contains(Self.nothingFound), "\(Self.reason(allowed))")
        #expect(!allowed.stderr.contains("will not start"), "\(allowed.stderr)")
        let allowedRow = allowedList.stdout.split(separator: "\n").first { $0.contains("fixture:snoops") } ?? "no row: \(allowedList.stdout)"
        #expect(allowedRow.contains("BrokenSnoops 0.0.1, isolated") && !allowedList.stdout.contains("WITHOUT"), "\(allowedList.stdout)")
        #expect(try Self.workerConfinement(allowedJSON) == "namespaces")
        #expect(try Self.workerConfinement(plainJSON) == "namespaces")

        // A mode that does not exist is a usage error that names the choices, from the environment and as an option.
        let plain = [view.folder + "/messages.jsonl", "--plugin-path", view.folder + "/plugins"]
        let wrongSetting = try await Fixtures.run(
            view.binaries + "/missive", ["decode"] + plain,
            environment: PrivateView.environment(home: view.folder + "/home").merging(["MISSIVE_WORKER_CONFINEMENT": "walls"]) { $1 }, inherit: false)
        #expect(wrongSetting.status == 2, "\(wrongSetting.stderr)")
        #expect(
            wrongSetting.stderr.contains("MISSIVE_WORKER_CONFINEMENT is 'walls'; it must be one of namespaces, namespaces-when-available, none"),
            "\(wrongSetting.stderr)")
        let wrongOption = try await Fixtures.run(
            view.binaries + "/missive", ["decode"] + plain + ["--worker-confinement", "walls"],
            environment: PrivateView.environment(home: view.folder + "/home"), inherit: false)
        #expect(wrongOption.status == 2, "\(wrongOption.stderr)")
        #expect(wrongOption.stderr.contains("'namespaces', 'namespaces-when-available' or 'none'"), "\(wrongOption.stderr)")
    }

    /// `workerConfinement` in the output of `missive list --format json`.
    static func workerConfinement(_ run: Fixtures.Run) throws -> String? {
        let list = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)\n\(run.stderr)")
        let isolated = (list["isolatedPlugins"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(isolated == ["BrokenSnoops"], "\(list)")
        return list["workerConfinement"] as? String
    }

    // MARK: - missive serve as an unprivileged user

    @Test(
        "missive serve as an unprivileged user: a member's message to the hostile plugin finds nothing, and the user's other programs cannot read the server; without the walls, dumpable, both find the secrets",
        .enabled(if: geteuid() == 0, "needs root to run the server as another user"))
    func serveAsAnUnprivilegedUserKeepsItsSecrets() async throws {
        async let walledRun = Self.serveAndSnoop(walls: true)
        async let openRun = Self.serveAndSnoop(walls: false)
        let (walled, open) = try await (walledRun, openRun)

        // Behind the walls: the sender is told the plugin's reason, and it holds nothing.
        #expect(walled.refusal.status == 422, "\(walled.refusal)")
        #expect(walled.refusal.text.contains("fixture:snoops refused the content: \(Self.nothingFound)"), "\(walled.refusal.text)")
        #expect(!walled.refusal.text.contains(walled.secret), "\(walled.refusal.text)")
        // The user's other programs cannot read the server's environment or memory.
        #expect(walled.environ.status != 0 && walled.environ.stderr.contains("Permission denied"), "\(walled.environ)")
        #expect(!walled.environ.stdout.contains(walled.secret))
        #expect(walled.memory.status != 0 && walled.memory.stderr.contains("Permission denied"), "\(walled.memory.stderr)")
        #expect(!walled.memory.stdout.contains(walled.secret))

        // The control: the same server, dumpable and without the walls.
        #expect(open.refusal.status == 422, "\(open.refusal)")
        for place in ["env", "data", "home"] {
            #expect(open.refusal.text.contains("\(open.secret)-\(place)"), "the secret in the \(place) was not found: \(open.refusal.text)")
        }
        #expect(open.environ.status == 0 && open.environ.stdout.contains("MISSIVE_TEST_SECRET=\(open.secret)-env"), "\(open.environ)")
        #expect(open.memory.status == 0 && open.memory.stdout.contains("MISSIVE_TEST_SECRET=\(open.secret)-env"), "\(open.memory.stderr)")

        for run in [walled, open] {
            // The refused message is not kept: the conversation's list is empty, so no page draws it.
            #expect(run.listed.status == 200 && run.listed.text.contains(#""messages":[]"#), "\(run.listed)")
            // The server goes on, and so does the plugin's worker.
            #expect(run.after.status == 201 && run.after.text.contains(#""objectName":"fixture:snoops""#), "\(run.after)")
            #expect(run.me.status == 200, "\(run.me)")
            #expect(run.stopped, "the server did not stop on SIGTERM: \(run.log)")
        }
    }

    /// What a member and another program of the server's user saw of one server.
    struct ServerObservations: Sendable {
        var secret: String
        /// The answer to the message that asks BrokenSnoops for its report.
        var refusal: HTTPAnswer
        /// The conversation's messages after it.
        var listed: HTTPAnswer
        /// The answer to a message of the same type after it, which the plugin decodes.
        var after: HTTPAnswer
        /// `GET /api/v1/me` at the end.
        var me: HTTPAnswer
        /// `cat /proc/<server>/environ` as the server's user.
        var environ: Fixtures.Run
        /// The server's stack, where its environment is, read from `/proc/<server>/mem` as the server's user.
        var memory: Fixtures.Run
        var stopped: Bool
        var log: [String]
    }

    struct HTTPAnswer: Sendable, CustomStringConvertible {
        var status: Int
        var text: String
        var description: String { "\(status) \(text)" }
    }

    /// The user the servers run as.
    static let nobody = "65534"

    /// Runs `missive serve` as user 65534 in a view of its own, with a secret in its environment, its data folder and
    /// its home folder; alice sends BrokenSnoops' report request over the HTTP API; another program of the same user
    /// reads the server's `/proc` files. `walls: false` is the control: `--worker-confinement none` and
    /// `MISSIVE_DUMPABLE=1`.
    static func serveAndSnoop(walls: Bool) async throws -> ServerObservations {
        let secret = Self.secret()
        let view = try await PrivateView.make(secret: secret, owner: 65534)
        let data = view.folder + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try Data("token: \(secret)-data\n".utf8).write(to: URL(fileURLWithPath: data + "/notes.txt"))
        chown(data + "/notes.txt", 65534, 65534)
        chown(data, 65534, 65534)
        let asNobody = ["setpriv", "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups"]

        // No user namespace: in one that maps only root, user 65534 does not exist.
        let added = try await view.run(asNobody + [view.missive, "serve", "users", "add", "alice", "--data", "/tmp/data"], user: false, processes: false)
        #expect(added.status == 0, "\(added.stderr)")
        let token = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        var environment = ["MISSIVE_TEST_SECRET": secret + "-env"]
        var options = ["--port", "0", "--data", "/tmp/data", "--plugin-path", "/tmp/plugins"]
        if !walls {
            environment["MISSIVE_DUMPABLE"] = "1"
            options += ["--worker-confinement", "none"]
        }
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Every step of the wrapper replaces itself, so the process is the server.
        server.arguments = view.unshareArguments(asNobody + [view.missive, "serve"] + options, user: false, processes: false, refuseNamespaces: false)
        server.environment = PrivateView.environment(home: "/tmp/home").merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        server.standardOutput = output
        server.standardError = errors
        try server.run()
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        let lines = LineCollector(output.fileHandleForReading)
        let log = LineCollector(errors.fileHandleForReading)
        let prefix = "listening on http://127.0.0.1:"
        let listening = try await lines.waitFor { $0.contains { $0.hasPrefix(prefix) } }
        try #require(listening, "\(lines.lines) \(log.lines)")
        let line = try #require(lines.lines.first { $0.hasPrefix(prefix) })
        let port = try #require(Int(line.dropFirst(prefix.count).prefix { $0.isNumber }))
        let pid = server.processIdentifier

        let base = "http://127.0.0.1:\(port)/api/v1"
        let made = try await request("POST", base + "/conversations", token: token, body: #"{"id":"team"}"#)
        #expect(made.status == 201, "\(made)")
        let messages = base + "/conversations/team/messages"
        let refusal = try await request("POST", messages, token: token, body: #"{"objectName":"fixture:snoops","content":{"say":"report."}}"#)
        let listed = try await request("GET", messages, token: token)
        let after = try await request("POST", messages, token: token, body: #"{"objectName":"fixture:snoops","content":{"fixture":true}}"#)
        let me = try await request("GET", base + "/me", token: token)

        // Another program of the same user.
        #expect(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8).hasPrefix("missive"))
        let stack = try #require(try stackRange(of: pid), "no [stack] in /proc/\(pid)/maps")
        let environ = try await Fixtures.run("/usr/bin/env", asNobody + ["cat", "/proc/\(pid)/environ"], environment: PrivateView.environment(home: "/"), inherit: false, timeout: .seconds(60))
        let memory = try await Fixtures.run(
            "/usr/bin/env",
            asNobody + ["dd", "if=/proc/\(pid)/mem", "iflag=skip_bytes,count_bytes", "skip=\(stack.start)", "count=\(stack.length)", "bs=65536", "status=none"],
            environment: PrivateView.environment(home: "/"), inherit: false, timeout: .seconds(60))

        server.terminate()
        let stopped = try await Fixtures.offThePool { () -> Bool in
            server.waitUntilExit()
            return server.terminationReason == .exit && server.terminationStatus == 0
        }
        return ServerObservations(
            secret: secret, refusal: refusal, listed: listed, after: after, me: me, environ: environ, memory: memory, stopped: stopped, log: log.lines)
    }

    /// The start and length of the `[stack]` mapping of the process `pid`, which holds its environment, read as root.
    static func stackRange(of pid: Int32) throws -> (start: UInt64, length: UInt64)? {
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        guard let line = maps.split(separator: "\n").first(where: { $0.hasSuffix("[stack]") }),
            let range = line.split(separator: " ").first
        else { return nil }
        let bounds = range.split(separator: "-").compactMap { UInt64($0, radix: 16) }
        guard bounds.count == 2, bounds[1] > bounds[0] else { return nil }
        return (bounds[0], bounds[1] - bounds[0])
    }

    /// One request with alice's token.
    static func request(_ method: String, _ url: String, token: String, body: String? = nil) async throws -> HTTPAnswer {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Fixtures.load(request)
        return HTTPAnswer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, text: String(decoding: data, as: UTF8.self))
    }
}

/// A run's own view of the machine, made with `unshare`: a folder of the test's seen as `/tmp`, copies of `missive` and
/// its worker seen in a folder BrokenSnoops does not search (`/media`), and `/root` and `/home` empty (unless the
/// Swift runtime is there).
///
/// BrokenSnoops searches `/tmp`, `/root`, `/home` and `/var/tmp`, 20,000 entries at most. On the machine's own `/tmp`,
/// which a full test run fills with the examples' builds, that budget can run out before it reaches the test's files,
/// and the control runs would miss them by chance; copies of the executables in `/tmp` would be in the worker's view,
/// and count as files it read. In a view of its own, every run searches the same few files, in a second. Both runs of
/// each test, the walled one and the control, run in the same kind of view.
struct PrivateView: Sendable {
    /// The folder runs see as `/tmp`.
    let folder: String
    /// The folder of the copies of `missive` and `missive-plugin-worker`.
    let binaries: String

    /// Where the copies of the executables are seen in the view.
    static let binariesMount: String? = ["/media", "/srv", "/mnt"].first { path in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The folders made empty in the view: those BrokenSnoops searches, but not one that holds the Swift runtime.
    static let hidden: [String] = {
        let runtime = (try? Fixtures.mappedFiles())?.first { $0.hasSuffix("/libswiftCore.so") } ?? "/"
        return ["/root", "/home"].filter { FileManager.default.fileExists(atPath: $0) && !runtime.hasPrefix($0 + "/") }
    }()

    /// `missive`, in the view.
    var missive: String { (Self.binariesMount ?? "/media") + "/missive" }

    /// Copies of `missive` and `missive-plugin-worker` that every user may read and run, made once per test process:
    /// the build folder may be in a folder another user cannot enter. They find the Swift runtime through their
    /// `RUNPATH`, which names the toolchain's folder.
    static let copies = Task<String, any Error> {
        try await Fixtures.offThePool {
            let folder = Fixtures.scratchPath("confinement-bin")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            chmod(folder, 0o755)
            for name in ["missive", "missive-plugin-worker"] {
                try FileManager.default.copyItem(atPath: Fixtures.buildDirectory + "/" + name, toPath: folder + "/" + name)
                chmod(folder + "/" + name, 0o755)
            }
            return folder
        }
    }

    /// A new view holding BrokenSnoops in `plugins` and a home folder `home` with a file that holds `secret-home`,
    /// both owned by `owner` when given.
    static func make(secret: String, owner: uid_t? = nil) async throws -> PrivateView {
        try #require(binariesMount != nil, "none of /media, /srv, /mnt exists to show the executables in")
        let binaries = try await copies.value
        let folder = try Fixtures.temporaryDirectory()
        // As the machine's own /tmp: anyone may write, and the sticky bit keeps the plugin's folder safe to load from.
        chmod(folder, 0o1777)
        let plugins = folder + "/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: false)
        chmod(plugins, 0o755)
        try FileManager.default.copyItem(atPath: try Fixtures.fixtureLibrary("BrokenSnoops"), toPath: plugins + "/libBrokenSnoops.so")
        chmod(plugins + "/libBrokenSnoops.so", 0o755)
        let home = folder + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        chmod(home, 0o700)
        try Data("machine example.com password \(secret)-home\n".utf8).write(to: URL(fileURLWithPath: home + "/.netrc"))
        if let owner {
            chown(home + "/.netrc", owner, owner)
            chown(home, owner, owner)
        }
        return PrivateView(folder: folder, binaries: binaries)
    }

    /// The environment of every run: a `PATH`, the home folder, the crash journal and the metadata cache off (a run's
    /// user may not write the tests' own), and a CPU budget that reading a whole debug host's memory fits in.
    static func environment(home: String) -> [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": home,
            "MISSIVE_METADATA_CACHE": "off", "MISSIVE_QUARANTINE": "off", "MISSIVE_WORKER_CPU_SECONDS": "10",
        ]
    }

    /// The arguments of `/usr/bin/env` that run `command` in the view: in a mount namespace of its own (and a user
    /// namespace with `user`, which a user other than root needs), in a PID namespace of its own with `processes`
    /// (so that the control's plugin reads only its own host, not every process of the machine), and with
    /// `refuseNamespaces` in a user namespace that may make no other (`user.max_user_namespaces` 0: `clone` with
    /// `CLONE_NEWUSER` fails with `ENOSPC`). Without `processes`, every step replaces itself and the command keeps the
    /// process id.
    func unshareArguments(_ command: [String], user: Bool, processes: Bool, refuseNamespaces: Bool) -> [String] {
        var flags = ["unshare", "--mount", "--propagation", "private"]
        if user || refuseNamespaces { flags += ["--user", "--map-root-user"] }
        if processes { flags += ["--pid", "--fork", "--kill-child", "--mount-proc"] }
        var script = #"set -e; mount --bind "$1" "$2"; mount --bind "$3" /tmp; "#
        for folder in Self.hidden { script += "mount -t tmpfs -o mode=0755 none \(folder); " }
        if refuseNamespaces { script += "echo 0 > /proc/sys/user/max_user_namespaces; " }
        // With a PID namespace, the shell is its first process and `missive` the second, as a host usually is.
        script += "shift 3; " + (processes ? #""$@""# : #"exec "$@""#)
        return flags + ["--", "/bin/sh", "-c", script, "sh", binaries, Self.binariesMount ?? "/media", folder] + command
    }

    /// Runs `command` in the view, with ``environment(home:)`` (the home folder `/tmp/home`) and `extra`. A user
    /// namespace by default, so that the view needs no privilege (root in a container may lack `CAP_SYS_ADMIN`).
    func run(
        _ command: [String], environment extra: [String: String] = [:], user: Bool = true, processes: Bool = true,
        refuseNamespaces: Bool = false
    ) async throws -> Fixtures.Run {
        try await Fixtures.run(
            "/usr/bin/env", unshareArguments(command, user: user, processes: processes, refuseNamespaces: refuseNamespaces),
            environment: Self.environment(home: "/tmp/home").merging(extra) { $1 }, inherit: false, timeout: .seconds(120))
    }
}
