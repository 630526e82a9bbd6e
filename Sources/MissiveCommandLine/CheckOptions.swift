import ArgumentParser
import Foundation
import Missive
import MissiveConformance

/// The options and the work of the conformance checker, shared by `missive check` and the `missive-check`
/// executable (the lighter tool that `swift package missive-check` runs, which builds no store or server).
package struct CheckOptions: ParsableArguments {
    /// What `--help` says about the checker, under either name.
    package static let abstract = "Validate plugin files with the conformance suite, each check isolated in a child process."

    /// What `--help` adds about exit codes and the list of checks.
    package static let discussion = """
        Exit codes: 0 when every check at or below the strictness passes (warnings and expected failures \
        allowed), 1 when any fails, crashes or times out, 2 for a usage error or an unreadable input. \
        `--list` shows every check with its level; docs/CHECK.md explains them.
        """

    package init() {}

    /// The report formats.
    package enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, junit
    }

    @Argument(help: "Plugin files (.so), or folders whose .so files to check.", transform: CommandLinePath.resolve)
    var files: [String] = []

    @Option(help: "Run checks up to this level, 1–10.")
    var strictness = 5

    @Option(help: "Report format: text, json or junit.")
    var format: Format = .text

    @Option(help: "Write the report to this file instead of standard output.", transform: CommandLinePath.resolve)
    var output: String?

    @Option(help: "Run only checks whose id matches this regular expression.")
    var include: String?

    @Option(help: "Skip checks whose id matches this regular expression.")
    var exclude: String?

    @Option(help: "Seconds a check may run before its process is killed.")
    var timeout: Double = 30

    @Option(help: "Seed for generated inputs (default: random, printed in the report).")
    var seed: UInt64?

    @Option(name: .customLong("expected-failures"), help: "A file of check ids (optionally with a plugin) known to fail.", transform: CommandLinePath.resolve)
    var expectedFailures: String?

    @Option(name: .customLong("against"), help: "A folder of other plugins to check for name clashes. Repeatable.", transform: CommandLinePath.resolve)
    var against: [String] = []

    @Flag(name: .customLong("in-process"), help: "Run every check in this process (for debugging; a crash ends the run).")
    var inProcess = false

    @Flag(help: "List every check with its id, level and description.")
    var list = false

    @Option(name: .customLong("child-check"), help: .hidden)
    var childCheck: String?

    @Option(name: .customLong("child-result"), help: .hidden)
    var childResult: String?

    package func validate() throws {
        guard (1...10).contains(strictness) else { throw ValidationError("--strictness must be from 1 to 10") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        guard list || !files.isEmpty else { throw ValidationError("give at least one plugin file or folder, or --list") }
    }

    /// Runs the checks, or the one check a child process was started for.
    ///
    /// - Parameters:
    ///   - command: How a child process runs this checker: this executable, and the arguments that name its check
    ///     command (`[missive, "check"]`, or only `[missive-check]`).
    ///   - reproducing: The command a report tells the reader to run to repeat one check.
    package func run(command: [String], reproducing: [String]) throws {
        if let childCheck, let childResult {
            try ConformanceRunner.runChild(checkID: childCheck, resultFile: childResult, path: files[0], seed: seed ?? 0, against: against)
            return
        }
        if list {
            if format == .json { Console.out(bytes: CheckListReport.json()) } else { Console.out(CheckListReport.text()) }
            return
        }
        var options = ConformanceOptions()
        options.strictness = strictness
        options.include = include
        options.exclude = exclude
        options.timeout = timeout
        options.seed = seed ?? UInt64.random(in: 0...UInt64.max)
        options.against = against
        options.isolation = inProcess ? .inProcess : .childProcess(command: command)
        options.reproducingCommand = reproducing
        do {
            if let expectedFailures { options.expectedFailures = try ExpectedFailures(parsing: try String(contentsOfFile: expectedFailures, encoding: .utf8)) }
        } catch {
            throw usage("\(expectedFailures ?? ""): \(error)")
        }
        let plugins = try expand(files)
        guard !plugins.isEmpty else { throw usage("no plugin files (.so) in \(files.joined(separator: ", "))") }

        let streaming = format == .text && output == nil
        if streaming { Console.out("Missive conformance: strictness \(strictness), seed \(options.seed)") }
        var current: String?
        let report: ConformanceReport
        do {
            report = try ConformanceRunner(options: options).run(files: plugins) { file, result in
                guard streaming else { return }
                if current != file {
                    current = file
                    Console.out("\n== \(file)")
                }
                Console.out(TextReport.line(result))
            }
        } catch {
            throw usage(error.description)
        }

        let rendered: [UInt8]
        switch format {
        case .text: rendered = Array((streaming ? TextReport.summaryLine(report) : TextReport.render(report)).utf8)
        case .json: rendered = JSONReport.render(report)
        case .junit: rendered = Array(JUnitReport.render(report).utf8)
        }
        if let output {
            if let problem = OutputFile.write(String(decoding: rendered + [0x0A], as: UTF8.self), to: output, notOver: []) {
                throw usage("\(output): cannot write: \(problem)")
            }
            Console.error(TextReport.summaryLine(report) + " (report written to \(output))")
        } else {
            if streaming { Console.out("") }
            // JSON keeps its bytes (unsafe code points escaped); text and XML are cleaned as text.
            if format == .json { Console.out(bytes: rendered) } else { Console.out(String(decoding: rendered, as: UTF8.self)) }
        }
        if !report.passed { throw ExitCode(1) }
    }

    /// Files as given, and the `.so` files of folders, sorted.
    private func expand(_ paths: [String]) throws -> [String] {
        var plugins: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw usage("\(path): no such file") }
            guard FileManager.default.isReadableFile(atPath: path) else { throw usage("\(path): not readable") }
            // Absolute paths: dlopen searches its library path for a name without a slash, which could
            // load a different file from the one whose metadata was read.
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            if isFolder.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: absolute)) ?? []
                plugins += names.filter { $0.hasSuffix(".so") }.sorted().map { absolute + "/" + $0 }
            } else {
                plugins.append(absolute)
            }
        }
        return plugins
    }

    private func usage(_ message: String) -> any Error {
        Console.error(message)
        return ExitCode(2)
    }
}
