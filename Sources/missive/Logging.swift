import ArgumentParser
import Foundation
import MissiveCommandLine
import Logging

/// `-v`/`--verbose` and `-q`/`--quiet`, offered by the subcommands that discover or install plugins.
struct LoggingOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log what the loader decides (-v), and each metadata cache lookup too (-vv), on standard error.")
    var verbose: Int

    @Flag(name: .shortAndLong, help: "Log only errors: no warnings about refused plugins.")
    var quiet = false

    func validate() throws {
        if quiet && verbose > 0 { throw ValidationError("--quiet and --verbose exclude each other") }
    }

    /// The logger to hand the library: `missive: LEVEL: message (key=value ...)` lines on standard error, at
    /// `defaultLevel` unless `-v`, `-vv` or `-q` say otherwise.
    func logger(defaultLevel: Logger.Level = .warning) -> Logger {
        let level: Logger.Level = quiet ? .error : verbose >= 2 ? .trace : verbose == 1 ? .debug : defaultLevel
        var logger = Logger(label: "missive") { _ in ConsoleLogHandler() }
        logger.logLevel = level
        return logger
    }
}

/// Writes log records as short lines on standard error: `missive: warning: refused plugin: reason (file=...)`.
struct ConsoleLogHandler: LogHandler {
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let details = all.sorted { $0.key < $1.key }.map { key, value in
            "\(key.hasPrefix("missive.") ? String(key.dropFirst("missive.".count)) : key)=\(value)"
        }
        let suffix = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
        Console.error("\(event.level): \(event.message)\(suffix)")
    }
}
