import Foundation
import MissiveTestSupport
import Testing

/// What the CLI does when it cannot write its output: a clear status and reason, never a crash, and a quiet
/// end when the reader of a pipe goes away.
@Suite struct OutputFailureTests {
    /// Runs `missive` with `arguments` through `sh -c`, so that `redirections` (shell syntax) apply to it.
    static func shell(_ arguments: String, redirections: String) async throws -> Fixtures.Run {
        let journal = Fixtures.scratchPath("crashes")
        defer { try? FileManager.default.removeItem(atPath: journal) }
        return try await Fixtures.run(
            "/bin/sh", ["-c", "\"$0\" \(arguments) \(redirections)", Fixtures.buildDirectory + "/missive"],
            environment: ["MISSIVE_METADATA_CACHE": Fixtures.cliMetadataCache, "MISSIVE_QUARANTINE": journal], timeout: .seconds(120))
    }

    @Test func aFullDiskEndsTheCommandWithStatus74AndTheReason() async throws {
        for command in ["list", "list --format json", "decode \(try Self.bigInput())", "actions"] {
            let run = try await Self.shell(command, redirections: "> /dev/full")
            #expect(run.status == 74, "\(command): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("missive: cannot write standard output: No space left on device"), "\(command): \(run.stderr)")
        }
    }

    @Test func aClosedStandardOutputEndsTheCommandWithStatus74AndNoFileGetsItsNumber() async throws {
        for command in ["list", "--help", "decode --help", "--version"] {
            let run = try await Self.shell(command, redirections: ">&-")
            #expect(run.status == 74, "\(command): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("cannot write standard output: Bad file descriptor"), "\(command): \(run.stderr)")
        }
    }

    @Test func aCheckReportThatCannotBeWrittenIsReportedAsRenderReportsIt() async throws {
        let run = try await Self.shell("check \(Fixtures.library("CRating")) --strictness 1 --output /dev/full", redirections: "")
        #expect(run.status == 2, "\(run.status) \(run.stderr)")
        #expect(run.stderr.contains("/dev/full: cannot write: No space left on device"), "\(run.stderr)")
    }

    @Test func helpWrittenToAFullDiskIsAFailureToo() async throws {
        let run = try await Self.shell("--help", redirections: "> /dev/full")
        #expect(run.status == 74, "\(run.status) \(run.stderr)")
    }

    @Test func aClosedStandardInputIsReportedNotReadAsEmpty() async throws {
        let run = try await Self.shell("decode -", redirections: "<&-")
        #expect(run.status == 2, "\(run.status)")
        #expect(run.stderr.contains("<stdin>: cannot read: standard input is closed"), "\(run.stderr)")
    }

    /// `missive decode big.jsonl | head -1`: head reads one line and leaves; the decode ends at its next
    /// write, quietly, with the status a shell gives a program that SIGPIPE ended.
    @Test func aReaderThatGoesAwayEndsTheCommandQuietly() async throws {
        let status = Fixtures.scratchPath("status")
        defer { try? FileManager.default.removeItem(atPath: status) }
        // PIPESTATUS[0] is the decode's status, not head's.
        let pipeline = try await Fixtures.run(
            "/bin/bash", ["-c", "set -o pipefail; \"$0\" decode \"$1\" 2>\"$2\" | head -1 >/dev/null; echo ${PIPESTATUS[0]}",
                          Fixtures.buildDirectory + "/missive", try Self.bigInput(), status + ".err"],
            environment: ["MISSIVE_METADATA_CACHE": Fixtures.cliMetadataCache], timeout: .seconds(120))
        #expect(pipeline.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "141", "\(pipeline.stdout) \(pipeline.stderr)")
        // Nothing about the write: no error, no crash report (a warning about the build folder's other
        // libraries may be there, and is not what this is about).
        let errors = (try? String(contentsOfFile: status + ".err", encoding: .utf8)) ?? "missing"
        #expect(!errors.contains("cannot write") && !errors.contains("crashed") && !errors.contains("Fatal error"), "\(errors)")
    }

    /// A file of envelopes much bigger than a pipe's buffer, made once.
    static func bigInput() throws -> String {
        let path = Fixtures.scratchRoot + "/big.jsonl"
        if FileManager.default.fileExists(atPath: path) { return path }
        let lines = try Fixtures.conversationLines()
        var bytes: [UInt8] = []
        for _ in 0..<200 {
            for line in lines { bytes += line + [0x0A] }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path + ".part"))
        try? FileManager.default.moveItem(atPath: path + ".part", toPath: path)
        return path
    }
}
