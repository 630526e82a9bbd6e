import ArgumentParser
import Foundation
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
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.key("crashes")
                json.crashes(crashes)
                json.key("blacklisted")
                json.blacklisted(blacklisted)
                json.endObject()
                Console.out(bytes: json.bytes)
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
                var json = JSONWriter()
                json.beginObject()
                json.field("schemaVersion", 1)
                json.key("clearedCrashes")
                json.crashes(crashes)
                json.key("clearedBlacklisted")
                json.blacklisted(blacklisted)
                json.endObject()
                Console.out(bytes: json.bytes)
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

extension JSONWriter {
    /// `[{"file": ..., "objectName": ..., "operation": ..., "signal": 11, "date": ..., "quarantined": true}]`.
    mutating func crashes(_ crashes: [PluginQuarantine.Crash]) {
        beginArray()
        for crash in crashes {
            beginObject()
            field("file", crash.path)
            field("objectName", crash.objectName)
            field("operation", crash.operation)
            field("signal", crash.signal)
            field("date", crash.date.formatted(.iso8601))
            field("quarantined", crash.isCurrent)
            field("reason", crash.description)
            endObject()
        }
        endArray()
    }

    /// `[{"file": ..., "reason": ...}]`.
    mutating func blacklisted(_ files: [PluginMetadataCache.BlacklistedFile]) {
        beginArray()
        for file in files {
            beginObject()
            field("file", file.path)
            field("reason", file.reason)
            endObject()
        }
        endArray()
    }
}
