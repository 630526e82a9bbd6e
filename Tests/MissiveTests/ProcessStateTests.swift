import Foundation
import Missive
import MissiveTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A host survives what a plugin does to its process: a plugin that changes the standard streams, the
/// working directory, a fatal-signal handler, the locale or the umask is refused and the state put back; a
/// crash on a thread the plugin started, and `exit` inside a call, are recorded and quarantine the plugin at
/// the next start. Every test uses real plugins from the fixture package, through the real loader.
///
/// Serialized: the fixtures change this process's state for a moment, and the state is compared around them.
@Suite(.serialized) struct ProcessStateTests {
    /// What the tests compare, read with the C library directly (not through the guard under test).
    struct Observed: Equatable, CustomStringConvertible {
        var descriptors: [String] = []
        var directory = ""
        var locale = ""
        var umask = ""
        var handlers: [[UInt8]] = []

        var description: String { "fds \(descriptors), cwd \(directory), locale \(locale), umask \(umask), handlers \(handlers)" }
    }

    static func observe() -> Observed {
        var observed = Observed()
        for fd: Int32 in 0...2 {
            var status = stat()
            observed.descriptors.append(fstat(fd, &status) == 0 ? "\(status.st_dev):\(status.st_ino):\(fcntl(fd, F_GETFL))" : "closed")
        }
        observed.directory = FileManager.default.currentDirectoryPath
        observed.locale = setlocale(LC_ALL, nil).map { String(cString: $0) } ?? ""
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        observed.umask = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }.map(String.init) ?? "?"
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS] {
            var action = sigaction()
            sigaction(signal, nil, &action)
            observed.handlers.append(withUnsafeBytes(of: action.__sigaction_handler) { Array($0) })
        }
        return observed
    }

    // The plugin that closes a standard stream is tried in a process of its own (below): closed in this one, its
    // descriptor's number would go to a file another test opens in that moment, and putting the stream back would
    // take that file from it.
    @Test(arguments: [
        ("BrokenChangesDirectory", "changed the working directory"),
        ("BrokenChangesLocaleOrUmask", "changed the locale (LC_ALL) and changed the umask"),
        ("BrokenOwnSignalHandler", "replaced the handler of SIGSEGV, SIGABRT"),
    ])
    func aPluginThatChangesTheProcessWhileLoadingIsRefusedAndTheStatePutBack(fixture: String, change: String) throws {
        let path = try Fixtures.fixtureLibrary(fixture)
        let before = Self.observe()
        let error = #expect(throws: MissiveError.self) { try PluginLoader.load(path) }
        #expect(error?.code == .changedProcessState)
        #expect(error?.code.description == "changed-process-state")
        #expect(error?.message == "while loading (its initialisers and entry), the plugin \(change); the host put it back and refuses the plugin",
                "\(String(describing: error))")
        #expect(Self.observe() == before)

        // Loading it again gives the same answer; its entry does not run again.
        #expect(throws: MissiveError.self) { try PluginLoader.load(path) }
        #expect(Self.observe() == before)

        // Other plugins load and work.
        _ = try PluginLoader.load(Fixtures.library("CRating"))
        let type = try PluginLoader.probe(Fixtures.library("CRating")).types[0].get()
        let decoded = type.examples[0].withUnsafeBufferPointer { type.decode($0) }
        #expect((try? decoded.get()) != nil)
        #expect(Self.observe() == before)
    }

    /// A plugin that closes standard output while loading is refused with the reason, and the command still writes
    /// its answer there: the host put the stream back.
    @Test func aPluginThatClosesStandardOutputIsRefusedAndTheCommandStillWrites() async throws {
        let folder = try Fixtures.stage(["BrokenClosesStandardStream"])
        let list = try await Fixtures.missive(["list", "--format", "json", "--plugin-path", folder])
        #expect(list.status == 0, "\(list.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any], "\(list.stdout)")
        let refusals = (json["rejected"] as? [[String: Any]] ?? []).filter { (($0["file"] as? String) ?? "").hasSuffix("libBrokenClosesStandardStream.so") }
        #expect(refusals.count == 1, "\(json)")
        let reason = (refusals.first?["reason"] as? String) ?? ""
        #expect(reason.contains("closed standard output (fd 1)"), "\(refusals)")
    }

    @Test func aFirstCallThatChangesTheProcessRefusesTheTypesLaterDecodes() throws {
        let path = try Fixtures.fixtureLibrary("BrokenChangesLocaleOrUmask")
        let before = Self.observe()
        // The probe (what the loader judges) keeps its types callable, as the checker uses them.
        let probe = try PluginLoader.probe(path)
        #expect(probe.processStateChange?.description == "changed the locale (LC_ALL) and changed the umask")
        let type = try probe.types[0].get()
        func decode(_ text: String) -> Result<PluginContent, MissiveError> {
            Array(text.utf8).withUnsafeBufferPointer { type.decode($0) }
        }
        #expect(type.processStateRefusal == nil)
        // The first decode sets the umask to 0: it is put back at once, and the call's answer still stands.
        #expect((try? decode(#"{"say":"umask","fixture":true}"#).get()) != nil)
        #expect(Self.observe() == before)
        let refusal = try #require(type.processStateRefusal)
        #expect(refusal.code == .changedProcessState)
        #expect(refusal.message.hasPrefix("the plugin's first decode of fixture:changes-locale changed the umask;"), "\(refusal.message)")
        // Every later decode is refused with the reason, whatever the content.
        guard case .failure(let error) = decode(#"{"fixture":true}"#) else {
            Issue.record("a decode after the change was not refused")
            return
        }
        #expect(error.code == .changedProcessState)
        #expect(error.message == refusal.message)
    }

    @Test func aRelativeQuarantineJournalIsMadeAbsoluteBeforeAnyPluginRuns() {
        let quarantine = PluginQuarantine(file: "state/crashes")
        #expect(quarantine.file == FileManager.default.currentDirectoryPath + "/state/crashes")
        #expect(PluginQuarantine(file: "/var/crashes").file == "/var/crashes")
    }

    @Test func theSignalHandlerAttributesAnAddressToThePluginWhoseSegmentsHoldIt() throws {
        let path = try Fixtures.fixtureLibrary("BrokenCrashOnOwnThread")
        _ = try PluginLoader.probe(path)
        let library = try #require(dlopen(path, RTLD_NOW | RTLD_NOLOAD))
        let entry = try #require(dlsym(library, "missive_plugin_entry_v1"))
        #expect(CrashGuard.attributes(entry, toPluginAt: path))
        // An address of the host's libraries is no plugin's.
        let malloc = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc"))
        #expect(!CrashGuard.attributes(malloc, toPluginAt: path))
        #expect(!CrashGuard.attributesToAPlugin(malloc))
    }

    /// A child process (the `missive` command) decodes a message that wakes `CrashOnOwnThread`'s thread, which
    /// crashes outside any call; the next start quarantines the plugin.
    @Test func aCrashOnAPluginsOwnThreadQuarantinesItAtTheNextStart() async throws {
        let host = try QuarantineTests.Host()
        let plugins = try Fixtures.stage(["BrokenCrashOnOwnThread", "CRating"])
        // The scanner would find it first, through its second example; the journal is what is tested here.
        let noScanner = ["MISSIVE_PLUGIN_SCANNER": "off"]
        let line = QuarantineTests.envelope("fixture:thread-crash", id: "m1", content: #"{"say":"crash","fixture":true}"#)
        let first = try await host.missive("decode", "-", "--plugin-path", plugins, "--format", "json", input: line + "\n", extra: noScanner)
        #expect(first.status != 0)
        let journal = try String(contentsOfFile: host.journal, encoding: .utf8)
        #expect(journal.contains("libBrokenCrashOnOwnThread.so\t"), "\(journal)")
        #expect(journal.contains("\t-\tthread\t11\t"), "\(journal)")

        let second = try await host.missive("list", "--plugin-path", plugins, "--format", "json", extra: noScanner)
        #expect(second.status == 0, "\(second.stderr)")
        let rejected = try #require(try QuarantineTests.rejections(second)["libBrokenCrashOnOwnThread.so"])
        #expect(rejected["code"] as? String == "quarantined")
        #expect((rejected["reason"] as? String)?.contains("SIGSEGV (signal 11) during thread") == true, "\(rejected)")
    }

    /// A plugin's own fatal-signal handler does not blind the quarantine, nor make the host lie:
    /// `OwnSignalHandler` is refused and the handlers are put back as they were, without the plugin's (which
    /// would `_exit(0)`); when another plugin then aborts in a call, the crash is in the journal, the process
    /// ends by the signal, not with status 0, and the next start quarantines that plugin.
    @Test func aPluginsOwnSignalHandlerDoesNotBlindTheQuarantine() async throws {
        let host = try QuarantineTests.Host()
        let plugins = try Fixtures.stage(["BrokenOwnSignalHandler", "BrokenAbortOnMessage"])
        let noScanner = ["MISSIVE_PLUGIN_SCANNER": "off"]
        let boom = QuarantineTests.envelope("fixture:boom", id: "m1", content: #"{"say":"boom","fixture":true}"#)
        let crashed = try await host.missive("decode", "-", "--plugin-path", plugins, "--format", "json", input: boom + "\n", extra: noScanner)
        #expect(crashed.signaled && crashed.status == SIGABRT, "status \(crashed.status), signaled \(crashed.signaled)")
        let journal = try String(contentsOfFile: host.journal, encoding: .utf8)
        #expect(journal.contains("libBrokenAbortOnMessage.so\t"), "\(journal)")
        #expect(journal.contains("\tfixture:boom\tdecode\t6\t"), "\(journal)")

        let second = try await host.missive("list", "--plugin-path", plugins, "--format", "json", extra: noScanner)
        let rejected = try QuarantineTests.rejections(second)
        #expect(rejected["libBrokenAbortOnMessage.so"]?["code"] as? String == "quarantined", "\(rejected)")
        #expect(rejected["libBrokenOwnSignalHandler.so"]?["code"] as? String == "changed-process-state", "\(rejected)")
    }

    /// A child process decodes a message on which `ExitOnInput` calls `exit(0)`: the process ends with status
    /// 70, not 0, and the next start quarantines the plugin.
    @Test func exitInsideACallEndsWithAFailureStatusAndQuarantinesThePlugin() async throws {
        let host = try QuarantineTests.Host()
        let plugins = try Fixtures.stage(["BrokenExitOnInput", "CRating"])
        let noScanner = ["MISSIVE_PLUGIN_SCANNER": "off"]
        let good = QuarantineTests.envelope("fixture:bye", id: "m1", content: #"{"say":"hello","fixture":true}"#)
        let bye = QuarantineTests.envelope("fixture:bye", id: "m2", content: #"{"say":"bye","fixture":true}"#)
        let first = try await host.missive("decode", "-", "--plugin-path", plugins, "--format", "json", input: good + "\n" + bye + "\n", extra: noScanner)
        #expect(first.status == 70, "\(first.stderr)")
        #expect(first.stderr.contains("missive: the plugin \(plugins)/libBrokenExitOnInput.so called exit() during decode of fixture:bye; the process ends with status 70"), "\(first.stderr)")
        let journal = try String(contentsOfFile: host.journal, encoding: .utf8)
        #expect(journal.contains("\tfixture:bye\tdecode\texit\t"), "\(journal)")

        let second = try await host.missive("decode", "-", "--plugin-path", plugins, "--format", "json", input: bye + "\n", extra: noScanner)
        #expect(second.status == 0, "\(second.stderr)")
        let message = try #require(try QuarantineTests.messages(second).first)
        #expect(message["known"] as? Bool == false)
        #expect((message["reason"] as? String)?.contains("exit() during decode of fixture:bye") == true, "\(message)")
    }

    /// A plugin that loads cleanly and changes the umask in its first decode: the host puts it back, the
    /// message decoded in that call stays, the later ones decode as unknown with the reason, and the command
    /// names the plugin file in a warning when it ends (discovery could not, since it happened later).
    @Test func aChangeInAFirstCallIsReportedWhenTheCommandEnds() async throws {
        let host = try QuarantineTests.Host()
        let plugins = try Fixtures.stage(["BrokenChangesUmaskInDecode", "CRating"])
        let lines = (1...3).map { QuarantineTests.envelope("fixture:umask", id: "m\($0)", content: #"{"fixture":true}"#) }
        let run = try await host.missive("decode", "-", "--plugin-path", plugins, "--format", "json", input: lines.joined(separator: "\n") + "\n")
        #expect(run.status == 0, "\(run.stderr)")
        let messages = try QuarantineTests.messages(run)
        #expect(messages.map { $0["known"] as? Bool } == [true, false, false], "\(messages)")
        #expect((messages.last?["reason"] as? String)?.contains("the plugin's first decode of fixture:umask changed the umask") == true, "\(messages)")
        #expect(run.stderr.contains("warning: refused plugin: the plugin's first decode of fixture:umask changed the umask"), "\(run.stderr)")
        #expect(run.stderr.contains("file=\(plugins)/libBrokenChangesUmaskInDecode.so"), "\(run.stderr)")
    }
}
