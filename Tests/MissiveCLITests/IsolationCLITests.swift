import Foundation
import Missive
import MissiveStore
import MissiveTestSupport
import Testing

/// `missive` with isolated plugins, as a user runs it: `--isolation` and `MISSIVE_ISOLATION`, a message that crashes
/// its plugin's worker, and a worker whose host is killed while the plugin hangs.
struct IsolationCLITests {
    static func moody(_ id: String, _ word: String) -> String {
        #"{"objectName":"fixture:moody","id":"\#(id)","conversationID":"c1","senderID":"bob","sentAt":1700000000000,"content":{"say":"\#(word)"}}"#
    }

    static func input(_ lines: [String]) throws -> String {
        let path = try Fixtures.temporaryDirectory() + "/messages.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func decodeTakesThePolicyAndAMessageThatCrashesItsWorkerCostsThatMessage() async throws {
        let folder = try Fixtures.stage(["BrokenMisbehavesOnMessage"])
        let file = try Self.input([Self.moody("a", "fine"), Self.moody("b", "abort"), Self.moody("c", "fine")])
        let run = try await Fixtures.missive(["decode", file, "--format", "json", "--plugin-path", folder, "--isolation", "isolated"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try run.stdout.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(lines.map { $0["known"] as? Bool } == [true, false, true])
        #expect((lines[1]["reason"] as? String)?.hasPrefix("the plugin crashed on this message: its worker crashed with SIGABRT") == true, "\(lines[1])")
        // The same through the environment; a policy that does not exist is a usage error that names the choices.
        let environment = try await Fixtures.missive(["decode", file, "--plugin-path", folder], environment: ["MISSIVE_ISOLATION": "isolated"])
        #expect(environment.status == 0 && environment.stdout.contains("the plugin crashed on this message"), "\(environment.stderr)")
        let wrong = try await Fixtures.missive(["decode", file, "--plugin-path", folder], environment: ["MISSIVE_ISOLATION": "sandbox"])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("MISSIVE_ISOLATION is 'sandbox'; it must be one of in-process, isolated, untrusted-isolated"), "\(wrong.stderr)")
        let option = try await Fixtures.missive(["decode", file, "--plugin-path", folder, "--isolation", "sandbox"])
        #expect(option.status == 2, "\(option.stderr)")
        // `list` says which plugins run in a worker, in its table and in its JSON.
        let listed = try await Fixtures.missive(["list", "--format", "json", "--plugin-path", folder, "--isolation", "isolated"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any], "\(listed.stderr)")
        let moody = try #require((list["types"] as? [[String: Any]])?.first { $0["objectName"] as? String == "fixture:moody" })
        #expect(moody["isolated"] as? Bool == true)
        let isolated = (list["isolatedPlugins"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        #expect(isolated.contains("BrokenMisbehavesOnMessage") && (list["plugins"] as? [Any])?.isEmpty == true, "\(list)")
        let text = try await Fixtures.missive(["list", "--plugin-path", folder, "--isolation", "isolated"])
        #expect(text.stdout.split(separator: "\n").contains { $0.contains("fixture:moody") && $0.contains(", isolated") }, "\(text.stdout)")
        let inProcess = try await Fixtures.missive(["list", "--plugin-path", folder])
        #expect(!inProcess.stdout.contains(", isolated"), "\(inProcess.stdout)")
    }

    @Test func aMessageThatCrashedItsWorkerIsRememberedInTheStoreAndRedecodeRetriesIt() async throws {
        let folder = try Fixtures.stage(["BrokenMisbehavesOnMessage"])
        let db = try Fixtures.temporaryDirectory() + "/store.sqlite"
        let isolated = ["--db", db, "--plugin-path", folder, "--isolation", "isolated"]
        func ingest(_ id: String) async throws {
            let run = try await Fixtures.missive(["store", "ingest", try Self.input([Self.moody(id, "crash")]), "--me", "alice"] + isolated)
            #expect(run.status == 0, "\(run.stderr)")
        }
        func reason(_ id: String) async throws -> String {
            try await SQLiteMessageStore(path: db).message(id: id)?.reason ?? "no reason"
        }
        let remembered = "the plugin crashed on this message: " + PluginFailure.rememberedPhrase
        let crashed = "the plugin crashed on this message: its worker crashed with SIGSEGV"
        try await ingest("a")
        let first = try await reason("a")
        #expect(first.hasPrefix(crashed), "\(first)")
        // Another command, the same bytes under another id: answered from the store's memory.
        try await ingest("b")
        let second = try await reason("b")
        #expect(second.hasPrefix(remembered), "\(second)")
        let kept = try await Fixtures.missive(["store", "redecode", "--keep-failures", "--format", "json"] + isolated)
        #expect(kept.status == 0, "\(kept.stderr)")
        let keptReason = try await reason("a")
        #expect(keptReason.hasPrefix(remembered), "\(keptReason)")
        // Redecode forgets and retries: the first of the two crashes again, and the second is answered from that.
        let retried = try await Fixtures.missive(["store", "redecode", "--format", "json"] + isolated)
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stderr.contains("forgot 1 remembered plugin failure"), "\(retried.stderr)")
        let (retriedA, retriedB) = (try await reason("a"), try await reason("b"))
        #expect(retriedA.hasPrefix(crashed), "\(retriedA)")
        #expect(retriedB.hasPrefix(remembered), "\(retriedB)")
        // Remembered again for the commands after it.
        try await ingest("c")
        let third = try await reason("c")
        #expect(third.hasPrefix(remembered), "\(third)")
        let help = try await Fixtures.missive(["store", "redecode", "--help"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("--keep-failures") && words.contains("Redecode first forgets every remembered failure"), "\(help.stdout)")
    }

    @Test func aWorkerNeverOutlivesItsHostEvenWhileItsPluginHangs() async throws {
        let folder = try Fixtures.stage(["BrokenMisbehavesOnMessage"])
        let file = try Self.input([Self.moody("a", "sleep")])
        let worker = try await Fixtures.offThePool { () throws -> Int32 in
            let host = Process()
            host.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
            host.arguments = ["decode", file, "--plugin-path", folder, "--isolation", "isolated"]
            host.environment = Fixtures.missiveEnvironment(journal: Fixtures.scratchPath("crashes"))
            host.standardOutput = FileHandle.nullDevice
            host.standardError = FileHandle.nullDevice
            try host.run()
            defer { kill(host.processIdentifier, SIGKILL) }
            // The worker: a child of the host whose command line names the staged plugin.
            var found: Int32?
            for _ in 0..<200 where found == nil {
                usleep(50_000)
                found = Self.processes(naming: folder).first { Self.parent(of: $0) == host.processIdentifier }
            }
            guard let found else { return -1 }
            // The plugin sleeps in decode; the host is killed while it waits.
            usleep(300_000)
            kill(host.processIdentifier, SIGKILL)
            host.waitUntilExit()
            return found
        }
        #expect(worker > 0, "no worker started")
        guard worker > 0 else { return }
        // Orphaned, it sees its parent change within a second and ends; whether init reaps it or not, it runs no more.
        var alive = true
        for _ in 0..<60 where alive {
            try await Task.sleep(for: .milliseconds(100))
            alive = Self.isRunning(worker)
        }
        #expect(!alive, "the worker \(worker) outlived its host")
        if alive { kill(worker, SIGKILL) }
    }

    /// The processes whose command line holds `text`.
    static func processes(naming text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(text)
        }
    }

    /// The fields of `/proc/PID/stat` after the command name.
    static func stat(_ pid: Int32) -> [Substring]? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    static func parent(of pid: Int32) -> Int32? { stat(pid).flatMap { $0.count > 1 ? Int32($0[1]) : nil } }

    /// Whether the process exists and is not a zombie.
    static func isRunning(_ pid: Int32) -> Bool {
        guard let fields = stat(pid), let state = fields.first else { return false }
        return state != "Z" && state != "X"
    }
}
