import ArgumentParser
import Foundation
import MissiveCommandLine
import Missive

extension MissiveCommand {
    struct Quarantine: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List or clear the plugins withheld because they crashed.",
            discussion: """
                A plugin that crashed a host while it ran (recorded in MISSIVE_QUARANTINE, by default \
                ~/.local/state/missive/plugin-crashes) is quarantined until its file changes; a file whose scan in a \
                child process crashed or hung (kept in the metadata cache) is blacklisted until its content changes. \
                Clearing lets them load, or be scanned, again.
                """,
            subcommands: [ListQuarantine.self, ClearQuarantine.self],
            defaultSubcommand: ListQuarantine.self)
    }

    struct ListQuarantine: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the quarantined and blacklisted plugin files, with the reasons.")

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        func run() throws {
            let crashes = PluginQuarantine.standard()?.crashes() ?? []
            let blacklisted = PluginMetadataCache.standard()?.blacklisted() ?? []
            switch format {
            case .json:
                try Console.out(json: QuarantineListJSON(crashes: crashes.map(CrashJSON.init), blacklisted: blacklisted.map(BlacklistedJSON.init)))
            case .text:
                let current = crashes.filter(\.isCurrent), released = crashes.filter { !$0.isCurrent }
                var lines: [String] = []
                if !current.isEmpty {
                    lines.append("Quarantined (crashed a host; not loaded until the file changes or the quarantine is cleared):")
                    lines += current.map { "  \($0.path): crashed with \($0)" }
                }
                if !blacklisted.isEmpty {
                    lines.append("Blacklisted by the plugin scanner (scanned again when the content changes or the quarantine is cleared):")
                    lines += blacklisted.map { "  \($0.path): \($0.reason)" }
                }
                if !released.isEmpty {
                    lines.append("Recorded crashes of files that have changed since (no longer quarantined):")
                    lines += released.map { "  \($0.path): crashed with \($0)" }
                }
                Console.out(lines.isEmpty ? "No plugin is quarantined or blacklisted." : lines.joined(separator: "\n"))
            }
        }
    }

    struct ClearQuarantine: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Release plugin files from the quarantine and the scanner's blacklist, so that they load or are scanned again.")

        @Argument(help: ArgumentHelp("The plugin files to release; every one when none is given.", valueName: "file"))
        var files: [String] = []

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        func run() throws {
            let paths = files.isEmpty ? nil : files.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            let crashes: [PluginQuarantine.Crash]
            do {
                crashes = try PluginQuarantine.standard()?.clear(paths) ?? []
            } catch {
                Console.error(error.description)
                throw ExitCode(1)
            }
            let blacklisted = PluginMetadataCache.standard()?.clearScans(paths) ?? []
            switch format {
            case .json:
                try Console.out(json: QuarantineClearJSON(clearedCrashes: crashes.map(CrashJSON.init), clearedBlacklisted: blacklisted.map(BlacklistedJSON.init)))
            case .text:
                let released = Set(crashes.map(\.path)).union(blacklisted.map(\.path)).sorted()
                Console.out(released.isEmpty ? "Nothing to clear." : (["Released:"] + released.map { "  \($0)" }).joined(separator: "\n"))
            }
            // A file named that no record names is likely a typo, or a link whose target was recorded.
            let released = Set(crashes.map(\.path)).union(blacklisted.map(\.path))
            let unknown = zip(files, paths ?? []).filter { !released.contains($0.1) && !released.contains(URL(fileURLWithPath: $0.1).resolvingSymlinksInPath().path) }
            for (file, _) in unknown {
                Console.error("\(file): no crash or blacklist record names this file (missive quarantine list shows the recorded paths)")
            }
            if !unknown.isEmpty { throw ExitCode(1) }
        }
    }

    /// The plugin scanner's child: `missive scan-plugin FILE RESULT-FILE` (see PluginScanner).
    struct ScanPlugin: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scan-plugin", abstract: "Scan one plugin file in this process (the plugin scanner's child).", shouldDisplay: false)

        @Argument var file: String
        @Argument var resultFile: String

        func run() throws {
            let status = PluginScanner.runScan(arguments: [file, resultFile])
            if status != 0 { throw ExitCode(status) }
        }
    }
}

/// `missive quarantine list --format json`.
struct QuarantineListJSON: CLIJSON {
    static let documentedAs = "quarantine-list"
    let schemaVersion = 1
    var crashes: [CrashJSON]
    var blacklisted: [BlacklistedJSON]
}

/// `missive quarantine clear --format json`: what it released.
struct QuarantineClearJSON: CLIJSON {
    static let documentedAs = "quarantine-clear"
    let schemaVersion = 1
    var clearedCrashes: [CrashJSON]
    var clearedBlacklisted: [BlacklistedJSON]
}

/// **crash**: a crash the journal records.
struct CrashJSON: CLIJSON {
    static let documentedAs = "crash"
    var file: String
    var objectName: String?
    var operation: String
    var signal: Int32
    /// ISO 8601, UTC.
    var date: String
    /// `false` once the file has changed since.
    var quarantined: Bool
    var reason: String
}

extension CrashJSON {
    init(_ crash: PluginQuarantine.Crash) {
        self.init(
            file: crash.path, objectName: crash.objectName, operation: crash.operation, signal: crash.signal, date: crash.date.formatted(.iso8601),
            quarantined: crash.isCurrent, reason: crash.description)
    }
}

/// **blacklisted**: a file whose scan crashed, exited early or hung.
struct BlacklistedJSON: CLIJSON {
    static let documentedAs = "blacklisted"
    var file: String
    var reason: String
}

extension BlacklistedJSON {
    init(_ file: PluginMetadataCache.BlacklistedFile) { self.init(file: file.path, reason: file.reason) }
}
