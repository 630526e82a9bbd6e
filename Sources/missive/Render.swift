import ArgumentParser
import Foundation
import MissiveCommandLine
import Logging
import Missive
import MissiveRendering

extension MissiveCommand {
    struct Render: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Render a conversation (JSON Lines of envelopes) for a terminal or as an HTML page.",
            discussion: """
                Decodes every envelope through the registered types, lays the conversation out (groups, date \
                separators, quote replies, thread counters, unsupported cards) and draws it. Status messages, \
                such as typing indicators, are not drawn. A malformed line is reported on standard error with \
                its line number, the others are still drawn, and the exit code is 1.

                Terminal output has ANSI colours only when standard output is a terminal and NO_COLOR is not set. \
                HTML output is one self-contained page: inline CSS, no script, no external resources, and a \
                strict Content-Security-Policy.
                """)

        /// The output formats of `render`.
        enum Format: String, ExpressibleByArgument, CaseIterable {
            case terminal
            case html
        }

        @Argument(help: "A file of envelopes, one per line, or - for standard input.", transform: CommandLinePath.resolve)
        var input: String = "-"

        @Option(help: "terminal or html.")
        var format: Format = .terminal

        @Option(help: "The current user's id: their messages are drawn on the right.")
        var me: String?

        @OptionGroup var drawing: DrawingOptions

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var logging: LoggingOptions

        func run() throws {
            let data = try InputFile.read(input)
            let logger = logging.logger()
            let result = try plugins.discover(logger: logger)
            var envelopes: [(envelope: Envelope, line: Int)] = []
            var failed = false
            var lineNumber = 0
            // A big conversation takes a while to decode: a count on standard error when it is a terminal.
            let progress = Progress(label: "rendering \(input == "-" ? "standard input" : (input as NSString).lastPathComponent)", unit: "lines read")
            for var line in Array(data).split(separator: 0x0A, omittingEmptySubsequences: false) {
                lineNumber += 1
                progress.count(lineNumber, every: 5_000)
                if line.last == 0x0D { line = line.dropLast() }
                guard line.contains(where: { ![0x20, 0x09].contains($0) }) else { continue }
                do {
                    envelopes.append((try Envelope(parsing: line), lineNumber))
                } catch {
                    failed = true
                    Console.error("\(input == "-" ? "<stdin>" : input): line \(lineNumber): [\(error.code)] \(error.message)")
                }
            }
            // In one call, views included: an isolated plugin's messages cross to its worker once.
            let messages = result.registry.decode(envelopes.map(\.envelope), views: true)
            for (message, entry) in zip(messages, envelopes) { Self.reportView(of: message, line: entry.line, logger: logger) }
            progress.finish()
            let transcript = Transcript(messages: messages, currentUserID: me, clock: drawing.clock, actions: result.registry.actions(for:))
            let title = "Missive: " + (input == "-" ? "standard input" : (input as NSString).lastPathComponent)
            try drawing.draw(transcript, format: format, title: title, notOver: input == "-" ? [] : [(input, "the input file")])
            if failed { throw ExitCode(1) }
        }

        /// Tells the author why a plugin's view was not drawn as written: a view that fails or cannot be
        /// read (the default view is drawn instead) is a warning; repairs the host made are told with `-v`.
        static func reportView(of message: Message, line: Int, logger: Logger) {
            let content = message.content
            guard content is PluginContent || content is IsolatedContent, message.persistence != .status else { return }
            let what = "line \(line), \(message.envelope.id): \(content.objectName)'s view"
            do {
                guard let reading = try content.describedView() else { return }
                if reading.element == nil {
                    let reason = reading.violations.first?.description ?? "nothing is left once it is cleaned"
                    logger.warning("\(what) cannot be used, so the default view is drawn: \(reason)")
                } else if !reading.violations.isEmpty {
                    logger.info("\(what) was repaired: \(reading.violations.map(\.description).joined(separator: "; "))")
                }
            } catch {
                logger.warning("\(what) failed, so the default view is drawn: \(error.message)")
            }
        }
    }
}

/// How `render` and `store show` draw: the width, the time zone and where the drawing goes.
struct DrawingOptions: ParsableArguments {
    @Option(help: "The width in columns (terminal), from 20 to 1000. Default: the terminal's width, else 80.")
    var width: Int?

    @Option(name: .customLong("time-zone"), help: "The time zone of dates and times, such as Europe/Paris (default UTC).")
    var timeZone: String = "UTC"

    @Option(help: "Write to this file instead of standard output.", transform: CommandLinePath.resolve)
    var output: String?

    func validate() throws {
        if let width, width < 20 || width > 1000 { throw ValidationError("--width must be from 20 to 1000, not \(width)") }
        guard TimeZone(identifier: timeZone) != nil else {
            throw ValidationError("--time-zone: '\(TextHygiene.line(timeZone))' is not a time zone; use an identifier such as UTC or Europe/Paris")
        }
    }

    /// Days and times in the chosen time zone.
    var clock: TranscriptClock {
        TranscriptClock(timeZone: TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")!)
    }

    /// Draws a transcript on standard output, or into `output` (never over one of the files `notOver`).
    func draw(_ transcript: Transcript, format: MissiveCommand.Render.Format, title: String, notOver: [(path: String, what: String)]) throws {
        let toTerminal = output == nil
        let text: String
        switch format {
        case .terminal:
            let columns = width ?? (toTerminal ? Console.terminalColumns.map { min(max($0, 20), 1000) } : nil) ?? 80
            let colors = toTerminal && TerminalRenderer.colorsSuitStandardOutput()
            text = TerminalRenderer(width: columns, colors: colors).render(transcript)
        case .html:
            text = HTMLRenderer(title: title).render(transcript)
        }
        try write(text, notOver: notOver)
    }

    /// Writes text to standard output, or into `output` (never over one of the files `notOver`).
    func write(_ text: String, notOver: [(path: String, what: String)]) throws {
        guard let output else { return Console.drawn(text) }
        if let problem = OutputFile.write(text, to: output, notOver: notOver) {
            Console.error("\(output): cannot write: \(problem)")
            throw ExitCode(2)
        }
    }
}
