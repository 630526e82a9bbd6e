import Foundation
import Missive
import MissiveTestSupport
import Testing

/// Plugins run isolated, each in a worker process of its own (docs/PROTECTION.md, "Isolated plugins"): the real
/// `missive-plugin-worker` executable, the real fixture and sample `.so` files, and the real seccomp filter. The test
/// process itself is the host that must never die.
// A guard against a hang, which allows for the wait for child slots behind the tests that asked first.
@Suite(SanitizerRun.timeLimit(minutes: 20))
struct IsolationTests {
    /// The worker executable beside the test bundle.
    static let workerCommand = [Fixtures.buildDirectory + "/" + PluginIsolation.workerExecutableName]

    /// A registry that runs every plugin of `products` isolated, with short deadlines so that a hang costs little.
    static func isolatedRegistry(
        _ products: [String], quarantine: PluginQuarantine? = nil, crashLimit: Int = 5, filter: Bool = true, memoryLimit: UInt64 = 1 << 30,
        wallSeconds: Double = 3
    ) throws -> (registry: MessageRegistry, discovery: PluginDiscovery) {
        var protection = PluginProtection(quarantine: quarantine)
        protection.isolation = PluginIsolation(
            policy: .isolated, workerCommand: workerCommand, callCPUSeconds: 0.5, callWallSeconds: wallSeconds, loadCPUSeconds: 2,
            memoryLimitBytes: memoryLimit,
            systemCallFilter: filter, crashLimit: crashLimit)
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(products)), protection: protection)
        return (result.registry, result.discovery)
    }

    static func moody(_ index: Int, _ word: String) -> Envelope {
        Envelope(
            id: "m\(index)", conversationID: "c1", senderID: "u1", sentAt: 1_700_000_000_000 + Int64(index), objectName: "fixture:moody",
            content: Array("{\"fixture\":true,\"n\":\(index),\"say\":\"\(word)\"}".utf8))
    }

    @Test("a batch of 1,000 where one message crashes the plugin and one hangs it: 998 decode, two are unknown with their reasons")
    func crashAndHangCostOneMessageEach() async throws {
        try await Fixtures.blocking {
            let (registry, discovery) = try Self.isolatedRegistry(["BrokenMisbehavesOnMessage"])
            #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
            #expect(discovery.isolatedPlugins.map(\.name) == ["BrokenMisbehavesOnMessage"])
            #expect(discovery.plugins.isEmpty, "an isolated plugin is not loaded into the host")
            var envelopes = (0..<1000).map { Self.moody($0, "fine") }
            envelopes[137] = Self.moody(137, "crash")
            envelopes[802] = Self.moody(802, "hang")
            let messages = registry.decode(envelopes)
            #expect(messages.count == 1000)
            #expect(messages.filter(\.isKnown).count == 998)
            for (index, message) in messages.enumerated() where index != 137 && index != 802 {
                #expect(message.isKnown, "message \(index): \(message.unknown?.reason.description ?? "")")
                #expect(message.envelope.id == "m\(index)")
                #expect(message.digest == "[fixture]")
            }
            guard case .pluginCrashed(let crash)? = messages[137].unknown?.reason else {
                Issue.record("message 137: \(String(describing: messages[137].unknown?.reason))")
                return
            }
            #expect(crash.contains("SIGSEGV"), "\(crash)")
            guard case .pluginCrashed(let hang)? = messages[802].unknown?.reason else {
                Issue.record("message 802: \(String(describing: messages[802].unknown?.reason))")
                return
            }
            #expect(hang.contains("hung"), "\(hang)")
            // Nothing of the two is lost: the bytes are kept, and the type's persistence applies.
            #expect(messages[137].unknown?.rawContent == envelopes[137].content)
            #expect(messages[137].persistence == .counted)
            // The plugin stays in service: the next batch decodes, on a new worker.
            let again = registry.decode([Self.moody(1000, "fine"), Self.moody(1001, "also fine")])
            #expect(again.allSatisfy { $0.isKnown })
        }
    }

    @Test("each way a worker can fail costs the one message, with the reason", arguments: [
        ("crash", "SIGSEGV"), ("abort", "SIGABRT"), ("overflow", "SIGSEGV"), ("exit", "(the plugin called exit() during a call)"),
        ("sleep", "no answer in"), ("garbage", "broke the protocol"), ("impostor", "it answered request 999 during request"),
        ("disconnect", "exited with status 0"), ("trickle", "no answer in"),
        ("bloat", "it began an answer of 104857600 bytes, where one may have at most"),
    ])
    func eachFailure(word: String, reason: String) async throws {
        try await Fixtures.blocking {
            let (registry, _) = try Self.isolatedRegistry(["BrokenMisbehavesOnMessage"])
            let messages = registry.decode([Self.moody(0, "fine"), Self.moody(1, word), Self.moody(2, "fine")])
            #expect(messages[0].isKnown && messages[2].isKnown)
            guard case .pluginCrashed(let text)? = messages[1].unknown?.reason else {
                Issue.record("\(word): \(String(describing: messages[1].unknown?.reason))")
                return
            }
            #expect(text.contains(reason), "\(word): \(text)")
            // Decoding one message alone takes the same path.
            guard case .pluginCrashed(let alone)? = registry.decode(Self.moody(3, word)).unknown?.reason else {
                Issue.record("\(word) alone was not answered as a crash")
                return
            }
            #expect(alone.contains(reason), "\(word) alone: \(alone)")
        }
    }

    @Test("the seccomp filter stops each forbidden call, names it, and the host goes on", arguments: [
        ("open", "openat"), ("socket", "socket"), ("exec", "execve"), ("ptrace", "ptrace"), ("fork", "clone"),
    ])
    func forbiddenCalls(word: String, call: String) async throws {
        try await Fixtures.blocking {
            let (registry, discovery) = try Self.isolatedRegistry(["BrokenForbiddenCalls"])
            #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
            let envelope = Fixtures.envelope("fixture:forbidden", "{\"fixture\":true,\"try\":\"\(word)\"}")
            let message = registry.decode(envelope)
            guard case .pluginCrashed(let text)? = message.unknown?.reason else {
                Issue.record("\(word): \(String(describing: message.unknown?.reason))")
                return
            }
            #expect(text.contains("the seccomp filter stopped it calling \(call)"), "\(word): \(text)")
            #expect(registry.decode(Fixtures.envelope("fixture:forbidden", "{\"fixture\":true}")).isKnown)
        }
    }

    @Test("calls that libraries make on their own (threads, timers, getcpu, select, reading ids and limits) pass the filter")
    func harmlessCallsPass() async throws {
        try await Fixtures.blocking {
            let (registry, _) = try Self.isolatedRegistry(["BrokenForbiddenCalls"])
            let message = registry.decode(Fixtures.envelope("fixture:forbidden", "{\"fixture\":true,\"try\":\"harmless\"}"))
            #expect(message.unknown?.reason == .decodeFailed("harmless calls were allowed"), "\(String(describing: message.unknown?.reason))")
        }
    }

    @Test("untrusted-isolated: a plugin signed by a trusted key runs in process, an unsigned one in its worker")
    func untrustedIsolated() async throws {
        try await Fixtures.blocking {
            let folder = try Fixtures.stage(["CRating", "BrokenMisbehavesOnMessage"])
            let key = PluginSigningKey.generate(comment: "test")
            let rating = folder + "/libCRating.so"
            try PluginSignature.sign(file: rating, metadata: try PluginMetadata.read(fromFile: rating), with: key).write(to: PluginSignature.path(for: rating))
            // Signatures are not required (mode off): the policy only decides where each plugin runs.
            var protection = PluginProtection(trust: PluginTrustPolicy(mode: .off, trustedKeys: [TrustedKey(key: key.publicKey, source: "test")]))
            protection.isolation = PluginIsolation(policy: .untrustedIsolated, workerCommand: Self.workerCommand, callCPUSeconds: 0.5, callWallSeconds: 3)
            let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), protection: protection)
            #expect(result.rejections.isEmpty, "\(result.rejections)")
            #expect(result.plugins.map(\.info.name) == ["CRating"])
            #expect(result.discovery.isolatedPlugins.map(\.name) == ["BrokenMisbehavesOnMessage"])
            #expect(result.registry.decode(Self.moody(0, "crash")).unknown?.reason.description.hasPrefix("the plugin crashed on this message") == true)
            #expect(result.registry.decode(Fixtures.envelope("demo:rating", #"{"score":4,"comment":"ok"}"#)).content is PluginContent)
        }
    }

    @Test("a call that spins is stopped by its processor-time budget, measured on the worker, not by the clock")
    func cpuBudget() async throws {
        try await Fixtures.blocking {
            // The clock's limit is far: only the budget of 0.5 s of processor time can stop the call.
            let (registry, _) = try Self.isolatedRegistry(["BrokenMisbehavesOnMessage"], wallSeconds: 60)
            let start = ContinuousClock.now
            guard case .pluginCrashed(let reason)? = registry.decode(Self.moody(0, "hang")).unknown?.reason else {
                Issue.record("the spinning message was not answered as a crash")
                return
            }
            #expect(reason.contains("of processor time on one call, past the limit of 0.50 s"), "\(reason)")
            // Tried in its batch, then alone: twice the budget, and far less than the clock's limit even on a busy machine.
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }

    @Test("without a worker executable an isolated plugin is refused, never loaded into the host, and its messages say why")
    func noWorker() async throws {
        try await Fixtures.blocking {
            var protection = PluginProtection()
            protection.isolation = PluginIsolation(policy: .isolated, workerCommand: [Fixtures.scratchPath("no-such-worker")])
            let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(["BrokenMisbehavesOnMessage"])), protection: protection)
            #expect(result.plugins.isEmpty && result.discovery.isolatedPlugins.isEmpty)
            #expect(result.rejections.count == 1 && result.rejections.first?.message.contains("cannot start the plugin worker") == true, "\(result.rejections)")
            let reason = result.registry.decode(Self.moody(0, "fine")).unknown?.reason.description ?? "known"
            #expect(reason.contains("cannot start the plugin worker"), "\(reason)")
        }
    }

    @Test("a worker inherits no descriptor of the host and no environment variable")
    func nothingInherited() async throws {
        try await Fixtures.blocking {
            // Not close-on-exec: a plain fork and exec would hand it on.
            let opened = open("/dev/null", O_RDONLY)
            let leaked = dup2(opened, 900)
            close(opened)
            defer { close(leaked) }
            #expect(leaked == 900)
            let (registry, _) = try Self.isolatedRegistry(["BrokenForbiddenCalls"])
            guard case .decodeFailed(let listed)? = registry.decode(Fixtures.envelope("fixture:forbidden", #"{"try":"descriptors","fixture":true}"#)).unknown?.reason
            else {
                Issue.record("the fixture did not list its descriptors")
                return
            }
            let descriptors = listed.split(separator: " ").dropFirst().compactMap { Int($0) }
            #expect(Array(descriptors.prefix(4)) == [0, 1, 2, 3], "\(listed)")
            #expect(!descriptors.contains(900), "\(listed)")
            // Beyond 0-3, only what the worker opens itself (the process-state guard's copies of 0-2 and its directory).
            #expect(descriptors.count <= 8, "\(listed)")
            let environment = registry.decode(Fixtures.envelope("fixture:forbidden", #"{"try":"environment","fixture":true}"#))
            #expect(environment.unknown?.reason == .decodeFailed("environment: 0 variables"))
        }
    }

    @Test("without the filter the same calls go through, which is what the filter is for")
    func withoutTheFilter() async throws {
        try await Fixtures.blocking {
            let (registry, _) = try Self.isolatedRegistry(["BrokenForbiddenCalls"], filter: false)
            let message = registry.decode(Fixtures.envelope("fixture:forbidden", "{\"fixture\":true,\"try\":\"socket\"}"))
            #expect(message.unknown?.reason == .decodeFailed("socket was allowed"))
        }
    }

    @Test("a plugin that keeps crashing is taken out of service and quarantined for the next start")
    func crashLimit() async throws {
        try await Fixtures.blocking {
            let journal = Fixtures.scratchPath("crashes")
            let quarantine = PluginQuarantine(file: journal)
            let (registry, _) = try Self.isolatedRegistry(["BrokenMisbehavesOnMessage"], quarantine: quarantine, crashLimit: 2)
            let first = registry.decode([Self.moody(0, "fine"), Self.moody(1, "crash"), Self.moody(2, "fine"), Self.moody(3, "crash")])
            #expect(first.map(\.isKnown) == [true, false, true, false])
            let after = registry.decode(Self.moody(4, "fine"))
            guard case .pluginUnavailable(let reason)? = after.unknown?.reason else {
                Issue.record("\(String(describing: after.unknown?.reason))")
                return
            }
            #expect(reason.contains("failed 2 times"), "\(reason)")
            #expect(quarantine.crashes().count == 1)
            // The next start withholds it, saying what happened: its worker failed, the host never crashed.
            var protection = PluginProtection(quarantine: quarantine)
            protection.isolation = PluginIsolation(policy: .isolated, workerCommand: Self.workerCommand)
            let folder = URL(fileURLWithPath: try #require(registry.type(objectName: "fixture:moody").flatMap { type -> String? in
                if case .plugin(let info) = type.origin { return info.path }
                return nil
            })).deletingLastPathComponent().path
            let next = MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), protection: protection)
            let withheld = try #require(next.rejections.first, "\(next.rejections)")
            #expect(withheld.code == .quarantined)
            #expect(withheld.message.hasPrefix("quarantined: its worker failed too often when it ran isolated (the last: SIGSEGV"), "\(withheld.message)")
            #expect(!withheld.message.contains("crashed a host"))
        }
    }

    @Test("the sample plugins isolated: the same digests, words, views and actions as in process")
    func samplesAgree() async throws {
        try await Fixtures.blocking {
            let inProcess = try Fixtures.sampleRegistry()
            let (isolated, discovery) = try Self.isolatedRegistry(Fixtures.samplePlugins)
            #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
            #expect(discovery.isolatedPlugins.count == Fixtures.samplePlugins.count)
            let envelopes = try Fixtures.conversationLines().map { try Envelope(parsing: $0) }
            let expected = envelopes.map(inProcess.decode)
            for views in [false, true] {
                let got = isolated.decode(envelopes, views: views)
                for (want, have) in zip(expected, got) {
                    #expect(want.isKnown == have.isKnown, "\(want.envelope.id)")
                    #expect(want.digest == have.digest, "\(want.envelope.id)")
                    #expect(want.content.pushContent == have.content.pushContent, "\(want.envelope.id)")
                    #expect(want.content.searchableWords == have.content.searchableWords, "\(want.envelope.id)")
                    #expect(want.content.media == have.content.media, "\(want.envelope.id)")
                    #expect(want.content.view == have.content.view, "\(want.envelope.id)")
                    #expect((try? want.content.typeEncodedContent()) == (try? have.content.typeEncodedContent()), "\(want.envelope.id)")
                }
            }
            // A vote in a poll runs in the worker and gives the same edit.
            let poll = try #require(envelopes.first { $0.objectName == "demo:poll" && inProcess.decode($0).isKnown })
            let wantEdit = try inProcess.perform("vote", on: inProcess.decode(poll), arguments: [0, "zoe"])
            let haveEdit = try isolated.perform("vote", on: isolated.decode(poll), arguments: [0, "zoe"])
            guard case .edited(let want) = wantEdit, case .edited(let have) = haveEdit else {
                Issue.record("\(wantEdit) \(haveEdit)")
                return
            }
            #expect(want.envelope.content == have.envelope.content)
            #expect(want.digest == have.digest)
            // Arguments the host refuses are never sent.
            #expect(throws: MissiveError.self) { try isolated.perform("vote", on: isolated.decode(poll), arguments: ["not a number", "zoe"]) }
        }
    }

    /// What a crash fixture does under isolation.
    enum Outcome: Sendable, CustomTestStringConvertible {
        /// The worker fails while loading the plugin (its initialisers, entry, or examples): refused, with the reason.
        case refusedAtLoad(String)
        /// The loader in the worker refuses the plugin for what it did to the process.
        case refusedForProcessState
        /// One message of the type fails the worker: it alone is unknown, with the reason.
        case messageCrashes(objectName: String, content: String, reason: String)
        /// Every decode is refused with the reason (a first call changed the worker's process).
        case decodesRefused(objectName: String, reason: String)
        /// The plugin loads and decodes under the worker's limits.
        case decodes(objectName: String)

        var testDescription: String {
            switch self {
            case .refusedAtLoad(let reason): "refused at load (\(reason))"
            case .refusedForProcessState: "refused for changing the process"
            case .messageCrashes(_, _, let reason): "one message crashes (\(reason))"
            case .decodesRefused(_, let reason): "decodes refused (\(reason))"
            case .decodes: "decodes"
            }
        }
    }

    static let deepContent = "{\"deep\":" + String(repeating: "[", count: 2_000_000) + String(repeating: "]", count: 2_000_000) + ",\"fixture\":true}"

    @Test("every crash fixture isolated: the host lives, the others decode, and the report names the reason", arguments: [
        ("BrokenCrashInDecode", Outcome.refusedAtLoad("crashed with SIGSEGV")),
        ("BrokenHangInDecode", .refusedAtLoad("hung")),
        ("BrokenAbortOnLoad", .refusedAtLoad("crashed with SIGABRT")),
        ("BrokenExitInDecode", .refusedAtLoad("called exit()")),
        ("BrokenFloodInDecode", .refusedAtLoad("hung")),
        ("BrokenForkInDecode", .refusedAtLoad("the seccomp filter stopped it calling clone")),
        ("BrokenCrashInEntry", .refusedAtLoad("crashed with SIGSEGV")),
        ("BrokenAbortInInitializer", .refusedAtLoad("crashed with SIGABRT")),
        ("BrokenCrashOnOwnThread", .refusedAtLoad("crashed with SIGSEGV")),
        ("BrokenExitOnInput", .refusedAtLoad("called exit()")),
        ("BrokenClosesStandardStream", .refusedForProcessState),
        ("BrokenChangesDirectory", .refusedForProcessState),
        ("BrokenOwnSignalHandler", .refusedForProcessState),
        ("BrokenChangesLocaleOrUmask", .refusedForProcessState),
        ("BrokenAbortOnMessage", .messageCrashes(objectName: "fixture:boom", content: "{\"say\":\"boom\",\"fixture\":true}", reason: "SIGABRT")),
        ("BrokenAbortsOnMutation", .messageCrashes(objectName: "fixture:aborts", content: "{\"fixture\":x}", reason: "SIGABRT")),
        ("BrokenDeepRecursion", .messageCrashes(objectName: "fixture:deep", content: deepContent, reason: "SIGSEGV")),
        ("BrokenMisbehavesOnMessage", .messageCrashes(objectName: "fixture:moody", content: "{\"say\":\"allocate\"}", reason: "SIGABRT")),
        ("BrokenChangesUmaskInDecode", .decodesRefused(objectName: "fixture:umask", reason: "umask")),
        ("BrokenHugeAllocation", .decodes(objectName: "fixture:huge")),
    ])
    func crashFixture(product: String, outcome: Outcome) async throws {
        try await Fixtures.blocking {
            // The other plugin beside it: it must go on decoding whatever the fixture does.
            let (registry, discovery) = try Self.isolatedRegistry([product, "CRating"], memoryLimit: 512 << 20)
            let rating = Fixtures.envelope("demo:rating", "{\"score\":4,\"comment\":\"ok\"}")
            #expect(registry.decode(rating).isKnown, "\(product): the C sample beside it")
            let refusals = discovery.rejections.filter { $0.file?.hasSuffix("lib\(product).so") == true }
            switch outcome {
            case .refusedAtLoad(let reason):
                #expect(refusals.count == 1, "\(product): \(discovery.rejections)")
                #expect(refusals.first?.message.contains(reason) == true, "\(product): \(refusals.first?.message ?? "not refused")")
            case .refusedForProcessState:
                #expect(refusals.map(\.code) == [.changedProcessState], "\(product): \(discovery.rejections)")
            case .messageCrashes(let objectName, let content, let reason):
                #expect(refusals.isEmpty, "\(product): \(refusals)")
                let fine = Envelope(id: "fine", conversationID: "c1", senderID: "u1", sentAt: 1, objectName: objectName, content: Array("{\"fixture\":true}".utf8))
                let bad = Envelope(id: "bad", conversationID: "c1", senderID: "u1", sentAt: 2, objectName: objectName, content: Array(content.utf8))
                let messages = registry.decode([fine, bad, fine, rating])
                #expect(messages[0].isKnown && messages[2].isKnown && messages[3].isKnown, "\(product)")
                guard case .pluginCrashed(let text)? = messages[1].unknown?.reason else {
                    Issue.record("\(product): \(String(describing: messages[1].unknown?.reason))")
                    return
                }
                #expect(text.contains(reason), "\(product): \(text)")
                // What the worker wrote is for the host's log, not for the message, which a server shows its members.
                #expect(!text.contains("it wrote"), "\(product): \(text)")
                #expect(messages[1].unknown?.rawContent == bad.content)
            case .decodesRefused(let objectName, let reason):
                #expect(refusals.isEmpty, "\(product): \(refusals)")
                let message = registry.decode(Fixtures.envelope(objectName, "{\"fixture\":true}"))
                guard case .decodeFailed(let text)? = message.unknown?.reason else {
                    Issue.record("\(product): \(String(describing: message.unknown?.reason))")
                    return
                }
                #expect(text.contains(reason), "\(product): \(text)")
            case .decodes(let objectName):
                #expect(refusals.isEmpty, "\(product): \(refusals)")
                #expect(registry.decode(Fixtures.envelope(objectName, "{\"fixture\":true}")).isKnown, "\(product)")
            }
            #expect(registry.decode(rating).isKnown, "\(product): the C sample after it")
        }
    }

    @Test("an action after its worker died between calls runs on a new worker, and the death is not counted against the plugin")
    func actionAfterTheWorkerDiedBetweenCalls() async throws {
        try await Fixtures.blocking {
            // A limit of one failure: had the death counted, the plugin would be out of service after it.
            let (registry, _) = try Self.isolatedRegistry(Fixtures.samplePlugins, crashLimit: 1)
            let envelopes = try Fixtures.conversationLines().map { try Envelope(parsing: $0) }
            let poll = try #require(envelopes.first { $0.objectName == "demo:poll" && registry.decode($0).isKnown })
            let message = registry.decode(poll)
            guard case .plugin(let info)? = registry.type(objectName: "demo:poll")?.origin else {
                Issue.record("demo:poll is not a plugin's type")
                return
            }
            let workers = Self.workerProcesses(running: info.path)
            try #require(workers.count == 1, "workers of \(info.path): \(workers)")
            // Killed from outside while idle, as the kernel's out-of-memory killer or a plugin's own thread would end it.
            // Its death is complete once it is a zombie with no thread left but its first: only then can it be reaped
            // (a worker killed during the host's check is still being killed, and the action fails as a crash).
            kill(workers[0], SIGKILL)
            let deadline = ContinuousClock.now + .seconds(60)
            while !(Self.processState(workers[0]) == "Z" && Self.threadCount(workers[0]) == 1) && ContinuousClock.now < deadline { usleep(5_000) }
            let edit = try registry.perform("vote", on: message, arguments: [0, "zoe"])
            guard case .edited(let edited) = edit else {
                Issue.record("\(edit)")
                return
            }
            #expect(edited.isKnown)
            // The dead worker was reaped, a new one runs, and the plugin is still in service.
            #expect(Self.processState(workers[0]) == nil)
            #expect(Self.workerProcesses(running: info.path).count == 1)
            #expect(registry.decode(poll).isKnown)
        }
    }

    /// The child processes of this one whose command line names `plugin`.
    static func workerProcesses(running plugin: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = FileBytes.readToEnd("/proc/\(pid)/stat", limit: 4096),
                let command = FileBytes.readToEnd("/proc/\(pid)/cmdline", limit: 1 << 16)
            else { return nil }
            // The fields after the command's name, which ends with the last ")": state, then the parent's pid.
            let text = String(decoding: stat, as: UTF8.self)
            guard let close = text.lastIndex(of: ")") else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            guard fields.count > 1, pid_t(fields[1]) == getpid(), fields[0] != "Z" else { return nil }
            let arguments = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains(plugin) ? pid : nil
        }
    }

    /// How many threads process `pid` has left.
    static func threadCount(_ pid: pid_t) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).count
    }

    /// The state letter of process `pid` (`Z` for a zombie), or `nil` when there is no such process.
    static func processState(_ pid: pid_t) -> String? {
        guard let stat = FileBytes.readToEnd("/proc/\(pid)/stat", limit: 4096) else { return nil }
        let text = String(decoding: stat, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ").first.map(String.init)
    }

    @Test("a view that crashes its worker costs the view, not the message; a composer action that crashes costs the action")
    func viewAndActionCrashes() async throws {
        try await Fixtures.blocking {
            let (registry, _) = try Self.isolatedRegistry(["BrokenViewCrashesOnMutation", "BrokenActionCrashesOnOddString"])
            let withoutLabel = Fixtures.envelope("fixture:view-label", "{\"fixture\":true}")
            for views in [false, true] {
                let message = try #require(registry.decode([withoutLabel], views: views).first)
                #expect(message.isKnown)
                #expect(throws: MissiveError.self) { try message.content.describedView() }
                // A host draws the default view instead.
                #expect(message.content.view == .defaultView(digest: message.digest, media: nil))
            }
            let labelled = registry.decode(Fixtures.envelope("fixture:view-label", "{\"label\":\"Fixture\",\"fixture\":true}"))
            #expect(try labelled.content.describedView()?.element != nil)
            do {
                _ = try registry.compose(action: "fixture.note", arguments: [""], conversationID: "c1", senderID: "u1")
                Issue.record("the crashing composer action gave a message")
            } catch let error as MissiveError {
                #expect(error.code == .pluginCrashed, "\(error)")
            }
            let note = try registry.compose(action: "fixture.note", arguments: ["hello"], conversationID: "c1", senderID: "u1")
            #expect(note.isKnown)
        }
    }
}

