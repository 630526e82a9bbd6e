import Foundation
import Missive
import MissiveTestSupport
import Testing

/// Every broken fixture plugin in one plugin folder, and every command that loads plugins run over it as a
/// user would: each one finishes with its documented status and names every file it refused.
///
/// Plugins run in the host's process, so a plugin that crashes it on a thread of its own, or calls `exit`
/// inside a call, ends that run (by the signal, or with status 70); what the host owes then is to have
/// recorded the culprit, so that the next start withholds it. A command is therefore run again after each
/// such end, at most once per plugin file, and each end must have added the culprit to the crash journal.
@Suite(.serialized) struct BrokenPluginsFolderTests {
    /// Content that triggers the fixtures' faults: their examples' form, the words some of them react to,
    /// and content that is not what any of them expects.
    static let contents = [#"{"fixture":true}"#, #"{"fixture":"boom"}"#, #"{"fixture":"bye"}"#, #"{"fixture":"x","extra":[1,{"a":null}]}"#, "[]"]

    struct Setup {
        let folder: String
        let files: [String]
        let input: String
        let lineCount: Int
        let environment: [String: String]
        let journal: String
        let database: String
    }

    static func setUp() async throws -> Setup {
        let fixtures = URL(fileURLWithPath: try Fixtures.fixtureLibrary("BrokenNoEntry")).deletingLastPathComponent().path
        let names = try FileManager.default.contentsOfDirectory(atPath: fixtures)
            .filter { $0.hasPrefix("libBroken") && $0.hasSuffix(".so") }.sorted()
        #expect(names.count >= 50, "\(names.count) broken fixtures")
        let work = try Fixtures.temporaryDirectory()
        let folder = work + "/plugins"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in names { try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: folder + "/" + name) }

        // One message of every type each file declares (read from its metadata, as `missive inspect` reads it, without
        // loading it), with each of the contents above.
        var lines: [String] = []
        for name in names {
            guard let metadata = try? PluginMetadata.read(fromFile: folder + "/" + name) else { continue }
            for objectName in metadata.types.map(\.objectName) {
                for (index, content) in contents.enumerated() {
                    lines.append(
                        #"{"objectName":"\#(objectName)","id":"\#(name)-\#(index)","conversationID":"c1","senderID":"bob","sentAt":1700000000000,"content":\#(content)}"#)
                }
            }
        }
        let input = work + "/messages.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: input))
        let journal = work + "/crashes"
        let environment = [
            "MISSIVE_METADATA_CACHE": work + "/cache", "MISSIVE_QUARANTINE": journal, "MISSIVE_SCAN_TIMEOUT": "10",
            "XDG_DATA_HOME": work + "/data",
        ]
        return Setup(folder: folder, files: names, input: input, lineCount: lines.count, environment: environment, journal: journal,
                     database: work + "/store.sqlite")
    }

    /// The journal's lines.
    static func journalLines(_ path: String) -> [Substring] {
        (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n") ?? []
    }

    /// Runs `arguments` until a run finishes: one that a plugin ended must have recorded a plugin of the folder
    /// in the journal. Returns the finished run.
    static func runToTheEnd(_ arguments: [String], _ setup: Setup) async throws -> Fixtures.Run {
        var ends = 0
        while true {
            let before = journalLines(setup.journal).count
            let run = try await Fixtures.run(
                Fixtures.buildDirectory + "/missive", arguments + ["--plugin-path", setup.folder], environment: setup.environment,
                timeout: .seconds(600))
            #expect(!run.timedOut, "\(arguments) hung")
            let endedByPlugin = run.signaled || run.status == 70
            guard endedByPlugin else { return run }
            let added = journalLines(setup.journal).dropFirst(before)
            #expect(added.count == 1, "\(arguments) ended (status \(run.status), signaled \(run.signaled)) without recording a culprit: \(run.stderr.suffix(2000))")
            #expect(added.allSatisfy { $0.contains(setup.folder + "/libBroken") }, "\(added)")
            ends += 1
            guard ends <= setup.files.count, !added.isEmpty else {
                Issue.record("\(arguments) never finished")
                return run
            }
        }
    }

    @Test(.timeLimit(.minutes(30))) func everyCommandFinishesOverEveryBrokenPluginAndNamesEveryFileItRefused() async throws {
        let setup = try await Self.setUp()

        // list: exit 0, and every file is either registered or refused with a reason: none goes missing.
        let list = try await Self.runToTheEnd(["list", "--format", "json"], setup)
        #expect(list.status == 0, "\(list.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let loaded = Set((json["types"] as? [[String: Any]] ?? []).compactMap { ($0["plugin"] as? [String: Any])?["file"] as? String })
        let rejected = (json["rejected"] as? [[String: Any]] ?? [])
        let refusedFiles = Set(rejected.compactMap { $0["file"] as? String })
        for name in setup.files {
            let path = setup.folder + "/" + name
            #expect(loaded.contains(path) || refusedFiles.contains(path), "\(name) is neither registered nor refused")
        }
        for refusal in rejected {
            #expect(!((refusal["reason"] as? String) ?? "").isEmpty, "\(refusal)")
        }
        // Files refused as a whole (no type of theirs registered): each later command names them.
        let wholeFiles = refusedFiles.subtracting(loaded).filter { $0.hasPrefix(setup.folder) }
        #expect(!wholeFiles.isEmpty)

        // decode: every line comes out (known or as an UnknownMessage with a reason), exit 0 or 1 (1 only for
        // malformed lines, of which there are none).
        let decode = try await Self.runToTheEnd(["decode", setup.input, "--format", "json"], setup)
        #expect(decode.status == 0, "\(decode.stderr.suffix(3000))")
        let messages = decode.stdout.split(separator: "\n")
        #expect(messages.count == setup.lineCount, "\(messages.count) of \(setup.lineCount): \(decode.stderr.suffix(3000))")
        for message in messages {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any])
            if object["known"] as? Bool == false { #expect(!((object["reason"] as? String) ?? "").isEmpty, "\(message)") }
        }

        // render: every message drawn, exit 0.
        let render = try await Self.runToTheEnd(["render", setup.input, "--width", "100"], setup)
        #expect(render.status == 0, "\(render.stderr.suffix(3000))")
        #expect(!render.stdout.isEmpty)

        // actions: exit 0.
        let actions = try await Self.runToTheEnd(["actions", "--format", "json"], setup)
        #expect(actions.status == 0, "\(actions.stderr.suffix(3000))")

        // store ingest: every line stored or refused by its flags, exit 0.
        let ingest = try await Self.runToTheEnd(["store", "ingest", setup.input, "--db", setup.database, "--me", "alice", "--format", "json"], setup)
        #expect(ingest.status == 0, "\(ingest.stderr.suffix(3000))")

        // Every command that loads plugins names every file refused as a whole: on standard error, or for
        // `actions` in its listing of what was refused.
        let actionRefusals = try #require(try JSONSerialization.jsonObject(with: Data(actions.stdout.utf8)) as? [String: Any])["rejected"]
        let refusedInActions = Set((actionRefusals as? [[String: Any]] ?? []).compactMap { $0["file"] as? String })
        for file in wholeFiles {
            #expect(refusedInActions.contains(file), "actions does not name \(file)")
            for (command, run) in [("decode", decode), ("render", render), ("store ingest", ingest)] {
                #expect(run.stderr.contains(URL(fileURLWithPath: file).lastPathComponent), "\(command) does not name \(file)")
            }
        }
    }

    @Test(.timeLimit(.minutes(15))) func isolatedEveryCommandFinishesTheFirstTime() async throws {
        let setup = try await Self.setUp()
        func run(_ arguments: [String]) async throws -> Fixtures.Run {
            // The two fixtures that spin while they load (a hang, a flood) are stopped after 1 s of processor time, not the
            // default 10, so that this test does not starve the others of the machine.
            let run = try await Fixtures.run(
                Fixtures.buildDirectory + "/missive", arguments + ["--plugin-path", setup.folder, "--isolation", "isolated"],
                environment: setup.environment.merging(["MISSIVE_WORKER_LOAD_SECONDS": "1", "MISSIVE_WORKER_CPU_SECONDS": "0.5"]) { $1 },
                timeout: .seconds(600))
            #expect(!run.timedOut, "\(arguments) hung")
            #expect(!run.signaled && run.status != 70, "\(arguments) was ended by a plugin: \(run.stderr.suffix(2000))")
            return run
        }
        let decode = try await run(["decode", setup.input, "--format", "json"])
        #expect(decode.status == 0, "\(decode.stderr.suffix(3000))")
        let messages = decode.stdout.split(separator: "\n")
        #expect(messages.count == setup.lineCount, "\(messages.count) of \(setup.lineCount)")
        var crashed = 0
        for message in messages {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any])
            if object["known"] as? Bool == false { #expect(!((object["reason"] as? String) ?? "").isEmpty, "\(message)") }
            if ((object["reason"] as? String) ?? "").hasPrefix("the plugin crashed on this message") { crashed += 1 }
        }
        // AbortOnMessage's "boom" (and any other fixture that fails on one of the contents) costs its message alone.
        #expect(crashed >= 1, "no message was answered as a crash")
        let render = try await run(["render", setup.input, "--width", "100"])
        #expect(render.status == 0, "\(render.stderr.suffix(3000))")
        let ingest = try await run(["store", "ingest", setup.input, "--db", setup.database, "--me", "alice", "--format", "json"])
        #expect(ingest.status == 0, "\(ingest.stderr.suffix(3000))")
        // Nothing crashed the host, so the journal names nothing (no plugin failed often enough to be quarantined).
        #expect(Self.journalLines(setup.journal).isEmpty, "\(Self.journalLines(setup.journal))")
    }
}

