import Foundation
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// `missive store` on a shared store (many members), and `missive store follow` in a second process.
@Suite struct SharedStoreCLITests {
    static func json(_ text: String) throws -> [String: Any] {
        try StoreCLITests.json(text)
    }

    /// The sample conversation into a new shared store; returns its path or URL.
    static func sharedStore(_ backend: StoreBackend) async throws -> String {
        let db = try await backend.newLocation()
        let ingest = try await Fixtures.missive("store", "ingest", StoreCLITests.conversation, "--db", db, "--shared")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        return db
    }

    @Test(arguments: StoreBackend.allCases)
    func eachMemberHasItsOwnCountsMarksAndConversations(backend: StoreBackend) async throws {
        let db = try await Self.sharedStore(backend)
        // Without --member, a shared store cannot say whose counts to show.
        let anonymous = try await Fixtures.missive("store", "conversations", "--db", db)
        #expect(anonymous.status == 2 && anonymous.stderr.contains("--member"), "\(anonymous.stderr)")
        // Senders became members from their first message; a reader who never wrote joins by hand.
        let members = try Self.json(try await Fixtures.missive("store", "members", "team", "--db", db, "--format", "json").stdout)
        let names = try #require(members["members"] as? [String])
        #expect(names.contains("alice") && names.contains("bob"))
        let joined = try await Fixtures.missive("store", "join", "team", "--member", "zoe", "--db", db)
        #expect(joined.status == 0 && joined.stdout.contains("0 unread"), "\(joined.stdout)\(joined.stderr)")

        func unread(_ member: String) async throws -> Int? {
            let list = try Self.json(try await Fixtures.missive("store", "conversations", "--db", db, "--member", member, "--format", "json").stdout)
            return (list["conversations"] as? [[String: Any]])?.first?["unreadCount"] as? Int
        }
        // Each member's count leaves out its own messages and what was stored before it joined (its first message).
        let alice = try await #require(try unread("alice"))
        await #expect(try unread("bob") == 19)
        await #expect(try unread("carol") == 23)
        await #expect(try unread("zoe") == 0)
        await #expect(try unread("nobody") == nil)  // no conversations: never wrote, never joined
        let read = try Self.json(try await Fixtures.missive("store", "read", "team", "--up-to", "m33", "--member", "bob", "--db", db, "--format", "json").stdout)
        #expect(read["unreadCount"] as? Int == 0)
        await #expect(try unread("bob") == 0)
        await #expect(try unread("alice") == alice)
        // Search sees only the member's conversations.
        #expect(try await Fixtures.missive("store", "search", "sushi", "--db", db, "--member", "bob").stdout.contains("m05"))
        #expect(try await Fixtures.missive("store", "search", "sushi", "--db", db, "--member", "nobody").stdout.contains("No messages match"))
        let left = try await Fixtures.missive("store", "leave", "team", "--member", "zoe", "--db", db)
        #expect(left.status == 0)
        let again = try await Fixtures.missive("store", "leave", "team", "--member", "zoe", "--db", db, "--format", "json")
        let againError = try Self.json(again.stdout)["error"] as? [String: Any]
        #expect(again.status == 1 && againError?["code"] as? String == "not-a-member")
        // --me is an owner, which a shared store has not.
        let me = try await Fixtures.missive("store", "conversations", "--db", db, "--me", "alice")
        #expect(me.status == 2 && me.stderr.contains("--member"), "\(me.stderr)")
        #expect(try await Fixtures.missive("store", "check", "--db", db).stdout.hasPrefix("Consistent"))
    }

    /// Two mistakes a reader of the output could not see: a mistyped member, and a feed position from before the
    /// feed began again.
    @Test func aMistypedMemberAndAPositionPastTheFeedAreSaid() async throws {
        let db = try await Self.sharedStore(.sqlite)
        let typo = try await Fixtures.missive("store", "conversations", "--member", "alcie", "--db", db)
        #expect(typo.status == 0 && typo.stdout.hasPrefix("alcie is in no conversation in "), "\(typo.stdout)")
        let ahead = try await Fixtures.missive("store", "follow", "--after", "999999", "--once", "--db", db)
        #expect(ahead.status == 0 && ahead.stdout.isEmpty, "\(ahead.stdout)")
        #expect(ahead.stderr.contains("--after 999999 is past the last change of"), "\(ahead.stderr)")
        let negative = try await Fixtures.missive("store", "follow", "--after", "-1", "--once", "--db", db)
        #expect(negative.status == 2 && negative.stderr.contains("--after must be 0 or more, not -1"), "\(negative.stderr)")
        let inside = try await Fixtures.missive("store", "follow", "--after", "1", "--once", "--db", db)
        #expect(!inside.stderr.contains("past the last change"), "\(inside.stderr)")
    }

    /// `missive store follow | head -1`: the follower ends when its reader does, although no change comes after.
    @Test func aFollowerEndsWhenTheReaderOfItsOutputGoesAway() async throws {
        let db = try await Self.sharedStore(.sqlite)
        let once = try await Fixtures.missive("store", "follow", "--db", db, "--once")
        let last = try #require(once.stdout.split(separator: "\n").last?.split(separator: " ").first.map(String.init))
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
        follower.arguments = ["store", "follow", "--db", db]
        follower.environment = ProcessInfo.processInfo.environment.merging(["MISSIVE_METADATA_CACHE": Fixtures.cliMetadataCache]) { $1 }
        let output = Pipe()
        follower.standardOutput = output
        follower.standardError = FileHandle.nullDevice
        try follower.run()
        try? output.fileHandleForWriting.close()
        // Every change so far is read, so the follower has nothing left to write when the reader goes away.
        let reader = output.fileHandleForReading
        let printed = try await Fixtures.offThePool {
            var text = ""
            while !text.hasPrefix(last + " ") && !text.contains("\n" + last + " ") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        #expect(printed.contains("\n" + last + " "), "the changes so far are printed first:\n\(printed)")
        try await Task.sleep(for: .milliseconds(300))
        try reader.close()
        // Nothing is written to the store any more: only noticing the closed pipe ends the follower.
        let deadline = ContinuousClock.now + .seconds(30)
        while follower.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!follower.isRunning, "the follower kept waiting after its reader went away")
        if follower.isRunning { follower.terminate() }
        try await Fixtures.offThePool { follower.waitUntilExit() }
        #expect(follower.terminationStatus == 141, "128 + SIGPIPE, as a shell reports for `| head`")
    }

    @Test(arguments: StoreBackend.allCases)
    func aFollowerInAnotherProcessSeesEveryChangeOnceAcrossARestart(backend: StoreBackend) async throws {
        let db = try await Self.sharedStore(backend)
        // The first follower, a process of its own, prints the changes so far and then the new ones as they come.
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
        follower.arguments = ["store", "follow", "--db", db, "--format", "json"]
        let output = Pipe()
        follower.standardOutput = output
        follower.standardError = FileHandle.nullDevice
        try follower.run()
        let lines = LineCollector(output.fileHandleForReading)
        // 31 stored messages and the senders' joins so far; a read mark and a delete while it follows.
        let initial = try Self.json(try await Fixtures.missive("store", "follow", "--db", db, "--once", "--format", "json").stdout.split(separator: "\n").last.map(String.init) ?? "")
        let lastInitial = try #require(initial["position"] as? Int)
        #expect(try await lines.waitFor { $0.count >= lastInitial })
        #expect(try await Fixtures.missive("store", "read", "team", "--up-to", "m10", "--member", "bob", "--db", db).status == 0)
        #expect(try await Fixtures.missive("store", "delete", "m27", "--db", db).status == 0)
        #expect(try await lines.waitFor { $0.contains { $0.contains(#""kind":"deleted""#) } })
        follower.terminate()
        follower.waitUntilExit()
        var seen = try lines.lines.map { try Self.json($0) }
        let stoppedAt = try #require(seen.last?["position"] as? Int)
        // Away: more changes. A new follower from the last position prints only those.
        #expect(try await Fixtures.missive("store", "read", "team", "--up-to", "m20", "--member", "bob", "--db", db).status == 0)
        #expect(try await Fixtures.missive("store", "join", "team", "--member", "zoe", "--db", db).status == 0)
        let resumed = try await Fixtures.missive("store", "follow", "--db", db, "--after", "\(stoppedAt)", "--once", "--format", "json")
        seen += try resumed.stdout.split(separator: "\n").map { try Self.json(String($0)) }
        let positions = seen.compactMap { $0["position"] as? Int }
        #expect(positions == positions.sorted() && Set(positions).count == positions.count)
        let all = try await Fixtures.missive("store", "follow", "--db", db, "--once", "--format", "json").stdout.split(separator: "\n")
        #expect(positions.count == all.count)
        let kinds = seen.compactMap { $0["kind"] as? String }
        #expect(kinds.filter { $0 == "stored" }.count == 31)
        #expect(kinds.suffix(4) == ["read", "deleted", "read", "joined"])
    }
}

extension SharedStoreCLITests {
    /// `postgres:` without its `//` is a malformed URL, never a file of that name.
    @Test func aPostgresURLWithoutItsSlashesIsRefusedNotTakenForAFile() async throws {
        let folder = try Fixtures.temporaryDirectory()
        for db in ["postgres:x", "postgresql:/x", "postgres:u:secret@host/db"] {
            let run = try await Fixtures.missive(["store", "ingest", "-", "--db", db, "--shared"], input: "", directory: folder)
            #expect(run.status == 2 && run.stderr.contains("is not a PostgreSQL URL"), "\(db): \(run.stderr)")
            #expect(!run.stderr.contains("secret"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }
}

/// Collects the lines a process prints, as it prints them.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = Data()
    private var collected: [String] = []

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock {
                self.buffer.append(data)
                while let newline = self.buffer.firstIndex(of: 0x0A) {
                    self.collected.append(String(decoding: self.buffer[..<newline], as: UTF8.self))
                    self.buffer.removeSubrange(...newline)
                }
            }
        }
    }

    var lines: [String] { lock.withLock { collected } }

    /// Waits up to 20 s for the lines to satisfy `condition`.
    func waitFor(_ condition: ([String]) -> Bool) async throws -> Bool {
        for _ in 0..<400 {
            if condition(lines) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition(lines)
    }
}
