import Foundation
import Missive
import MissiveTestSupport
import Testing

/// A message that crashed, hung or was stopped in an isolated plugin costs its deadline once
/// (`PluginFailureMemory`): the real worker, the real fixtures, and short deadlines.
// The limit guards against a hang. It counts from the start, and each test waits for one of the child slots first,
// behind the tests that asked earlier (Fixtures.blocking): minutes, when the command-line suites run beside it.
@Suite(SanitizerRun.timeLimit(minutes: 20))
struct PluginFailureMemoryTests {
    /// A registry that runs `products` isolated with a clock limit of `wallSeconds` per call and a crash limit of
    /// `crashLimit`, remembering failures in `memory`; and the folder the plugins were staged in.
    static func isolated(
        _ products: [String], memory: PluginFailureMemory? = nil, crashLimit: Int, wallSeconds: Double = 2
    ) throws -> (registry: MessageRegistry, folder: String) {
        var protection = PluginProtection()
        protection.isolation = PluginIsolation(
            policy: .isolated, workerCommand: IsolationTests.workerCommand, callCPUSeconds: 0.5, callWallSeconds: wallSeconds, loadCPUSeconds: 2,
            crashLimit: crashLimit)
        protection.failureMemory = memory
        let folder = try Fixtures.stage(products)
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), protection: protection)
        #expect(result.rejections.isEmpty, "\(result.rejections)")
        return (result.registry, folder)
    }

    /// The reason of a message the plugin crashed on, or `nil`.
    static func crashReason(_ message: Message) -> String? {
        guard case .pluginCrashed(let reason)? = message.unknown?.reason else { return nil }
        return reason
    }

    @Test("a message that hung its plugin is answered at once the second time, with the remembered reason, and the worker is not called")
    func aHungMessageIsAnsweredAtOnce() async throws {
        try await Fixtures.blocking {
            // A crash limit of 2: had the worker been called again and hung again, the plugin would be out of service.
            let (registry, _) = try Self.isolated(["BrokenMisbehavesOnMessage"], crashLimit: 2, wallSeconds: 2)
            let sleeper = IsolationTests.moody(1, "sleep")
            let first = try #require(Self.crashReason(registry.decode(sleeper)), "the sleeping message was not answered as a crash")
            #expect(first.contains("no answer in"), "\(first)")
            #expect(!first.contains(PluginFailure.rememberedPhrase))
            let clock = ContinuousClock()
            let start = clock.now
            let again = registry.decode(sleeper)
            // In a batch too, beside messages that decode, with the same bytes under another id.
            let sameBytes = Envelope(id: "other", conversationID: "c9", senderID: "u9", sentAt: 5, objectName: sleeper.objectName, content: sleeper.content)
            let batch = registry.decode([IsolationTests.moody(2, "fine"), sameBytes, IsolationTests.moody(3, "fine")])
            let elapsed = clock.now - start
            #expect(elapsed < .seconds(1), "the remembered message took \(elapsed); the deadline is 2 s")
            let second = try #require(Self.crashReason(again), "\(String(describing: again.unknown?.reason))")
            #expect(second == "\(PluginFailure.rememberedPhrase): \(first)")
            #expect(again.unknown?.rawContent == sleeper.content)
            #expect(batch.map(\.isKnown) == [true, false, true])
            #expect(Self.crashReason(batch[1]) == second)
            // Still in service: the worker failed once.
            #expect(registry.decode(IsolationTests.moody(4, "fine")).isKnown)
            #expect(registry.pluginFailureMemories.count == 1)
            #expect(registry.pluginFailureMemories.first?.failures.map(\.key.operation) == [.decode])
        }
    }

    @Test("a view that crashed its worker fails at once the next time, and the message still decodes")
    func aCrashedViewIsRemembered() async throws {
        try await Fixtures.blocking {
            let (registry, _) = try Self.isolated(["BrokenViewCrashesOnMutation"], crashLimit: 2)
            let withoutLabel = Fixtures.envelope("fixture:view-label", "{\"fixture\":true}")
            let first = try #require(registry.decode([withoutLabel], views: true).first)
            #expect(first.isKnown)
            #expect(throws: MissiveError.self) { try first.content.describedView() }
            // Three more views, in a batch and one at a time: with a limit of 2, one more crash would take the plugin away.
            for views in [true, false, true] {
                let message = try #require(registry.decode([withoutLabel], views: views).first)
                #expect(message.isKnown)
                do throws(MissiveError) {
                    _ = try message.content.describedView()
                    Issue.record("the view that crashed gave a view")
                } catch {
                    #expect(error.code == .pluginCrashed)
                    #expect(error.message.hasPrefix(PluginFailure.rememberedPhrase), "\(error.message)")
                }
            }
            let labelled = registry.decode(Fixtures.envelope("fixture:view-label", "{\"label\":\"Fixture\",\"fixture\":true}"))
            #expect(try labelled.content.describedView()?.element != nil, "the plugin is still in service")
        }
    }

    @Test("a new build of the plugin tries the message again; a file that is only touched keeps its failures")
    func aChangedPluginFileTriesAgain() async throws {
        try await Fixtures.blocking {
            let (registry, folder) = try Self.isolated(["BrokenMisbehavesOnMessage"], crashLimit: 10)
            let file = folder + "/libBrokenMisbehavesOnMessage.so"
            let crasher = IsolationTests.moody(1, "crash")
            let first = try #require(Self.crashReason(registry.decode(crasher)))
            #expect(first.contains("SIGSEGV"), "\(first)")
            // Touched: another modification time, the same bytes.
            var times = [timespec(tv_sec: 1_600_000_000, tv_nsec: 0), timespec(tv_sec: 1_600_000_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, file, &times, 0) == 0)
            let touched = try #require(Self.crashReason(registry.decode(crasher)))
            #expect(touched.hasPrefix(PluginFailure.rememberedPhrase), "\(touched)")
            // Another build: the same library with a byte more at its end, which the loader does not read.
            let handle = try #require(FileHandle(forWritingAtPath: file))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([0]))
            try handle.close()
            let rebuilt = try #require(Self.crashReason(registry.decode(crasher)))
            #expect(!rebuilt.contains(PluginFailure.rememberedPhrase), "\(rebuilt)")
            #expect(rebuilt.contains("SIGSEGV"), "\(rebuilt)")
            // Remembered for the new build, now.
            #expect(Self.crashReason(registry.decode(crasher))?.hasPrefix(PluginFailure.rememberedPhrase) == true)
            let hashes = Set(try #require(registry.pluginFailureMemories.first).failures.map(\.key.pluginSHA256))
            #expect(hashes.count == 2)
        }
    }

    @Test("a memory given to discovery answers from the failures a store read, and forgetting them tries again")
    func aGivenMemoryIsUsedAndCanForget() async throws {
        try await Fixtures.blocking {
            let memory = PluginFailureMemory()
            // A crash limit of 1: one call to the worker that crashed would take the plugin away.
            let (registry, _) = try Self.isolated(["BrokenMisbehavesOnMessage"], memory: memory, crashLimit: 1)
            #expect(registry.pluginFailureMemories.map { ObjectIdentifier($0) } == [ObjectIdentifier(memory)])
            let crasher = IsolationTests.moody(1, "crash")
            // Kept elsewhere already: not unsaved.
            let other = PluginFailureMemory()
            let (first, _) = try Self.isolated(["BrokenMisbehavesOnMessage"], memory: other, crashLimit: 5)
            #expect(Self.crashReason(first.decode(crasher)) != nil)
            #expect(other.unsavedFailures.count == 1)
            memory.remember(other.unsavedFailures)
            #expect(memory.unsavedFailures.isEmpty && memory.count == 1)
            #expect(Self.crashReason(registry.decode(crasher))?.hasPrefix(PluginFailure.rememberedPhrase) == true)
            #expect(registry.decode(IsolationTests.moody(2, "fine")).isKnown, "the worker was not called")
            // Forgotten: tried again (and the plugin, with its limit of 1, goes out of service).
            #expect(memory.forget() == 1)
            #expect(Self.crashReason(registry.decode(crasher))?.contains("SIGSEGV") == true)
            #expect(memory.unsavedFailures.count == 1)
        }
    }
}
