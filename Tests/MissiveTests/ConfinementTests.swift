import Foundation
import Missive
import MissiveTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What an isolated plugin's worker can read, reach and write (docs/PROTECTION.md, "The worker's own world"), tried by
/// a hostile plugin of the tests' own (`BrokenSnoops`) in the real worker. Each test runs the same hostile plugin with
/// the walls and without them (``PluginIsolation/Confinement/none``): without them it must find what the walls hold
/// back, so that a test that passes shows the walls at work, not a plugin that failed to look.
// The limit guards against a hang. It counts from the start, and each test waits for one of the child slots first,
// behind the tests that asked earlier (Fixtures.blocking): minutes, when the command-line suites run beside it.
@Suite(SanitizerRun.timeLimit(minutes: 20))
struct ConfinementTests {
    /// A registry running BrokenSnoops, staged beside a file holding `secret`, isolated with `confinement`.
    static func snoops(
        confinement: PluginIsolation.Confinement, filter: Bool = true, secret: String, extra: [String] = []
    ) throws -> (registry: MessageRegistry, discovery: PluginDiscovery, folder: String) {
        let folder = try Fixtures.stage(["BrokenSnoops"] + extra)
        // What a host keeps beside its plugins or in its data folder: a store file, a token.
        try Data("tokens: \(secret)\n".utf8).write(to: URL(fileURLWithPath: folder + "/store.sqlite"))
        var protection = PluginProtection()
        protection.isolation = PluginIsolation(
            policy: .isolated, workerCommand: IsolationTests.workerCommand, callCPUSeconds: 5, callWallSeconds: 20, loadCPUSeconds: 20,
            systemCallFilter: filter)
        protection.isolation.confinement = confinement
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), protection: protection)
        return (result.registry, result.discovery, folder)
    }

    static func ask(_ registry: MessageRegistry, _ word: String) -> String {
        let envelope = Envelope(
            id: "s-\(word)", conversationID: "c1", senderID: "u1", sentAt: 1_700_000_000_000, objectName: "fixture:snoops",
            content: Array("{\"fixture\":true,\"say\":\"\(word)\"}".utf8))
        let message = registry.decode([envelope])[0]
        switch message.unknown?.reason {
        case .decodeFailed(let reason)?: return reason
        case let other: return "\(String(describing: other))"
        }
    }

    static func secret() -> String { "MISSIVE-SECRET-\(UUID().uuidString.prefix(8))" }

    @Test("behind the walls, a plugin that looks around while loading finds no other process, no file of the host, no secret")
    func aConfinedWorkerFindsNothing() async throws {
        try await Fixtures.blocking {
            let secret = Self.secret()
            let (registry, discovery, _) = try Self.snoops(confinement: .namespaces, secret: secret)
            #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
            let report = Self.ask(registry, "report")
            #expect(report.contains("snoops: pids=0 proc=0 passwd=0 files=0 secrets=[]"), "\(report)")
            #expect(!report.contains(secret))
            // The host goes on: the plugin's other messages decode.
            #expect(registry.decode([Envelope(id: "e", conversationID: "c", senderID: "u", sentAt: 1, objectName: "fixture:snoops", content: Array("{\"fixture\":true}".utf8))])[0].isKnown)
        }
    }

    @Test("without the walls, the same plugin finds the host, its files and the secret beside the plugin: what the walls hold back")
    func withoutTheWallsTheSamePluginFindsTheHost() async throws {
        try await Fixtures.blocking {
            let secret = Self.secret()
            let (registry, discovery, _) = try Self.snoops(confinement: .none, secret: secret)
            #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
            let report = Self.ask(registry, "report")
            #expect(report.contains(secret), "\(report)")
            #expect(report.contains("passwd=1"), "\(report)")
            #expect(!report.contains("pids=0 "), "\(report)")
            #expect(!report.contains("proc=0 "), "\(report)")
        }
    }

    @Test("without the seccomp filter, the walls alone hold: no connection to the host's loopback, no file written, no other worker seen")
    func theWallsHoldWithoutTheFilter() async throws {
        try await Fixtures.blocking {
            for confinement in [PluginIsolation.Confinement.namespaces, .none] {
                let walled = confinement == .namespaces
                let listener = try LoopbackListener()
                defer { listener.close() }
                let (registry, discovery, folder) = try Self.snoops(confinement: confinement, filter: false, secret: Self.secret(), extra: ["BrokenForbiddenCalls"])
                #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
                let connect = Self.ask(registry, "connect:\(listener.port)")
                let target = folder + "/written-by-the-plugin"
                let write = Self.ask(registry, "write:\(target)")
                // The other plugin's worker runs beside this one: a rescan looks for it now.
                _ = registry.decode([Envelope(id: "f", conversationID: "c", senderID: "u", sentAt: 1, objectName: "fixture:forbidden", content: Array("{\"fixture\":true}".utf8))])
                let rescan = Self.ask(registry, "rescan")
                let accepted = listener.acceptedBytes(waiting: .milliseconds(walled ? 300 : 3000))
                if walled {
                    #expect(connect.contains("connect=failed"), "\(connect)")
                    #expect(accepted == nil, "the listener received \(accepted ?? [])")
                    #expect(write.contains("write=failed"), "\(write)")
                    #expect(!FileManager.default.fileExists(atPath: target))
                    #expect(rescan.contains("pids=0 proc=0"), "\(rescan)")
                } else {
                    #expect(connect.contains("connect=ok"), "\(connect)")
                    #expect(accepted == Array("snoop".utf8))
                    #expect(write.contains("write=ok"), "\(write)")
                    #expect(FileManager.default.fileExists(atPath: target))
                    #expect(!rescan.contains("pids=0 "), "\(rescan)")
                }
            }
        }
    }

    @Test("a plugin reads the data file it declares in its view, and not an undeclared file beside it")
    func aDeclaredFileIsInTheViewAndNothingElseOfItsFolder() async throws {
        try await Fixtures.blocking {
            for confinement in [PluginIsolation.Confinement.namespaces, .none] {
                let folder = try Fixtures.stage(["DataFile"])
                try FileManager.default.createDirectory(atPath: folder + "/DataFile", withIntermediateDirectories: true)
                try Data("declared words\n".utf8).write(to: URL(fileURLWithPath: folder + "/DataFile/words.txt"))
                try Data("undeclared words\n".utf8).write(to: URL(fileURLWithPath: folder + "/DataFile/undeclared.txt"))
                var protection = PluginProtection()
                // Without the filter, which forbids opening any file once loaded: the view alone decides what opens.
                protection.isolation = PluginIsolation(
                    policy: .isolated, workerCommand: IsolationTests.workerCommand, callCPUSeconds: 5, callWallSeconds: 20, systemCallFilter: false)
                protection.isolation.confinement = confinement
                let registry = MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), protection: protection).registry
                func digest(_ word: String) -> String {
                    let message = registry.decode([
                        Envelope(id: word, conversationID: "c", senderID: "u", sentAt: 1, objectName: "fixture:datafile", content: Array("{\"file\":\"\(word)\",\"fixture\":true}".utf8))
                    ])[0]
                    return message.isKnown ? message.digest : "unknown: \(message.unknown?.reason.description ?? "")"
                }
                #expect(digest("read") == "declared words", "\(confinement)")
                let sibling = digest("sibling")
                if confinement == .namespaces {
                    #expect(sibling.hasPrefix("undeclared file not read"), "\(sibling)")
                } else {
                    #expect(sibling == "undeclared file read: undeclared words", "\(sibling)")
                }
            }
        }
    }

    @Test("a plugin that aborts in its confined worker, the first process of its PID namespace, is reported as SIGABRT")
    func abortIsReportedWithItsSignal() async throws {
        try await Fixtures.blocking {
            let (registry, _) = try IsolationTests.isolatedRegistry(["BrokenMisbehavesOnMessage"])
            let message = registry.decode([IsolationTests.moody(1, "abort")])[0]
            guard case .pluginCrashed(let reason)? = message.unknown?.reason else {
                Issue.record("\(String(describing: message.unknown?.reason))")
                return
            }
            #expect(reason.contains("SIGABRT"), "\(reason)")
        }
    }

    @Test("the worker's view holds the loader's files and the worker, and nothing of the plugin's folder but the plugin")
    func theViewIsMadeOfWhatTheWorkerNeeds() throws {
        let folder = try Fixtures.stage(["BrokenSnoops"])
        let plugin = folder + "/libBrokenSnoops.so"
        let libraries = SharedLibraries.needed(by: [IsolationTests.workerCommand[0], plugin])
        #expect(libraries.contains { $0.hasSuffix("/libc.so.6") }, "\(libraries)")
        #expect(libraries.contains { $0.contains("ld-linux") }, "\(libraries)")
        #expect(libraries.contains { $0.hasSuffix("/libswiftCore.so") }, "\(libraries)")
        #expect(!libraries.contains { $0.hasPrefix(folder) }, "\(libraries)")
    }
}

/// A TCP listener on 127.0.0.1 that takes at most one connection, for what a plugin may reach.
final class LoopbackListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, length) } }
        guard bound == 0, listen(listening, 4) == 0 else {
            Glibc.close(listening)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) } }
        descriptor = listening
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// What the first connection sent, waiting at most `waiting` for one; `nil` when none came.
    func acceptedBytes(waiting: Duration) -> [UInt8]? {
        let end = ContinuousClock.now + waiting
        while ContinuousClock.now < end {
            let connection = accept(descriptor, nil, nil)
            if connection >= 0 {
                defer { Glibc.close(connection) }
                var buffer = [UInt8](repeating: 0, count: 64)
                var timeout = timeval(tv_sec: 2, tv_usec: 0)
                _ = fcntl(connection, F_SETFL, 0)
                _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                let count = recv(connection, &buffer, buffer.count, 0)
                return count > 0 ? Array(buffer[0..<count]) : []
            }
            usleep(10_000)
        }
        return nil
    }

    func close() {
        Glibc.close(descriptor)
    }
}
