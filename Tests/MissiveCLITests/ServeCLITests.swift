import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MissiveTestSupport
import Testing

/// `missive serve` and `missive serve users` as an operator runs them.
@Suite struct ServeCLITests {
    @Test func usersAreMadeListedAndRevokedAndMistakesAreRefusedWithTheReason() async throws {
        let data = try Fixtures.temporaryDirectory() + "/server"
        let add = try await Fixtures.missive("serve", "users", "add", "alice", "--data", data)
        #expect(add.status == 0, "\(add.stderr)")
        let token = add.stdout.trimmingCharacters(in: .newlines)
        #expect(token.hasPrefix("msv_") && token.count == 47, "\(add.stdout)")
        #expect(add.stderr.contains("shown once"))
        // Only the hash is kept: the token is nowhere in the accounts file.
        let file = try Data(contentsOf: URL(fileURLWithPath: data + "/accounts.sqlite"))
        #expect(file.range(of: Data(token.utf8)) == nil)
        #expect(try FileManager.default.attributesOfItem(atPath: data + "/accounts.sqlite")[.posixPermissions] as? Int == 0o600)

        let again = try await Fixtures.missive("serve", "users", "add", "alice", "--data", data)
        #expect(again.status == 1 && again.stderr.contains("alice has an account already"), "\(again.stderr)")
        let invalid = try await Fixtures.missive("serve", "users", "add", "al ice", "--data", data)
        #expect(invalid.status == 1 && invalid.stderr.contains("cannot be a member's name"), "\(invalid.stderr)")
        let second = try await Fixtures.missive("serve", "users", "token", "alice", "--data", data)
        #expect(second.status == 0 && second.stdout.hasPrefix("msv_") && second.stdout != add.stdout)
        let list = try await Fixtures.missive("serve", "users", "list", "--data", data)
        #expect(list.stdout == "alice: 2 valid tokens\n", "\(list.stdout)")
        let revoke = try await Fixtures.missive("serve", "users", "revoke", "alice", "--data", data)
        #expect(revoke.stdout == "revoked 2 tokens of alice\n", "\(revoke.stdout)")
        let nobody = try await Fixtures.missive("serve", "users", "revoke", "nobody", "--data", data)
        #expect(nobody.status == 1 && nobody.stderr.contains("no member named nobody"), "\(nobody.stderr)")
        let unreadable = try await Fixtures.missive("serve", "users", "list", "--data", "/proc/missive-none")
        #expect(unreadable.status == 2 && unreadable.stderr.contains("/proc/missive-none/accounts.sqlite"), "\(unreadable.stderr)")
    }

    /// The server starts with no setup, says where it listens, answers a member, refuses a revoked token at once,
    /// and stops cleanly on SIGTERM.
    @Test func theServerStartsAnswersAMemberAndStopsOnSIGTERM() async throws {
        // No setup: the data folder does not exist yet; the member is made while the server runs.
        let data = try Fixtures.temporaryDirectory() + "/server"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: Fixtures.buildDirectory + "/missive")
        server.arguments = ["serve", "--port", "0", "--data", data]
        server.environment = Fixtures.missiveEnvironment(journal: Fixtures.scratchPath("crashes"))
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { if server.isRunning { server.terminate() } }
        let lines = LineCollector(output.fileHandleForReading)
        #expect(try await lines.waitFor { $0.contains { $0.hasPrefix("listening on http://127.0.0.1:") } }, "\(lines.lines)")
        let line = try #require(lines.lines.first { $0.hasPrefix("listening on") })
        #expect(line.contains("(store \(data)/store.sqlite, "), "\(line)")
        let port = try #require(Int(line.dropFirst("listening on http://127.0.0.1:".count).prefix { $0.isNumber }))
        #expect(try FileManager.default.attributesOfItem(atPath: data)[.posixPermissions] as? Int == 0o700)
        let token = try await Fixtures.missive("serve", "users", "add", "alice", "--data", data).stdout.trimmingCharacters(in: .newlines)

        func me() async throws -> Int {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/api/v1/me")!)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (_, response) = try await Fixtures.load(request)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        #expect(try await me() == 200)
        // Revoked from another process: the server's next answer refuses it.
        #expect(try await Fixtures.missive("serve", "users", "revoke", "alice", "--data", data).status == 0)
        #expect(try await me() == 401)

        // A second server on the same port says so, and the first goes on.
        let second = try await Fixtures.missive("serve", "--port", String(port), "--data", try Fixtures.temporaryDirectory())
        #expect(second.status == 2 && second.stderr.contains("cannot serve on 127.0.0.1:\(port): the port is in use"), "\(second.stderr)")
        #expect(second.stderr.contains("--port") && !second.stderr.contains("change feed"), "only the reason, and what to do: \(second.stderr)")
        #expect(try await me() == 401)

        server.terminate()
        try await Fixtures.offThePool { server.waitUntilExit() }
        #expect(server.terminationReason == .exit && server.terminationStatus == 0, "\(server.terminationReason) \(server.terminationStatus)")
    }

    @Test func aStoreThatCannotBeTheServersOrABadPortIsAClearErrorWithExitCode2() async throws {
        let data = try Fixtures.temporaryDirectory() + "/server"
        let personal = try Fixtures.temporaryDirectory() + "/personal.sqlite"
        #expect(try await Fixtures.missive("store", "ingest", Fixtures.repositoryRoot + "/SampleData/conversation.jsonl", "--db", personal, "--me", "alice").status == 0)
        let refused = try await Fixtures.missive("serve", "--port", "0", "--data", data, "--db", personal)
        #expect(refused.status == 2 && refused.stderr.contains(personal), "\(refused.stderr)")
        let badPort = try await Fixtures.missive("serve", "--port", "70000", "--data", data)
        #expect(badPort.status == 2 && badPort.stderr.contains("--port must be from 0 to 65535"), "\(badPort.stderr)")
        // A limit it does not have, or a value it cannot take, names the limit and what it takes.
        for (setting, says) in [
            ("nope=1", "no limit named 'nope'; the limits: maxRequestBytes"), ("burst=0", "burst takes a whole number above 0, not '0'"),
            ("requestHeadTimeout=soon", "requestHeadTimeout takes seconds"), ("burst", "--limit takes NAME=VALUE"),
        ] {
            let answer = try await Fixtures.missive("serve", "--port", "0", "--data", data, "--limit", setting)
            #expect(answer.status == 2 && answer.stderr.contains(says), "\(setting): \(answer.stderr)")
        }
        // A push credential others can read, or one of no known kind, is refused naming the file and the reason.
        let credential = try Fixtures.temporaryDirectory() + "/push-credential"
        for (text, mode, says) in [
            ("bearer:gateway-token-0123456789\n", 0o644, "can be read by others than its owner"),
            ("basic:user:password\n", 0o600, "holds neither 'bearer:TOKEN' nor 'hmac-sha256:SECRET'"),
            ("hmac-sha256:short\n", 0o600, "at least 32 bytes"),
        ] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: credential))
            chmod(credential, mode_t(mode))
            let answer = try await Fixtures.missive(
                "serve", "--port", "0", "--data", data, "--push-gateway", "http://127.0.0.1:9/push", "--push-credential-file", credential)
            #expect(answer.status == 2 && answer.stderr.contains(credential) && answer.stderr.contains(says), "\(answer.stderr)")
        }
    }
}
