import Foundation
import Missive
import MissiveCommandLine

/// Where `missive chat` writes: on a terminal, each output above a prompt that is drawn again after it; piped,
/// plain lines and no prompt, so that a script reads one output per line.
package struct ChatOutput: Sendable {
    /// Whether standard input and output are a terminal.
    package let terminal: Bool
    /// Takes each output's bytes: standard output, or a test's recorder.
    private let sink: @Sendable ([UInt8]) -> Void

    /// The prompt on a terminal.
    package static let prompt = "> "

    /// Output to standard output; `terminal` when standard input and output are a terminal.
    package init(terminal: Bool) {
        self.init(terminal: terminal) { Console.write($0, to: STDOUT_FILENO) }
    }

    /// Output handed to `sink`, each write's bytes at once.
    package init(terminal: Bool, sink: @escaping @Sendable ([UInt8]) -> Void) {
        self.terminal = terminal
        self.sink = sink
    }

    /// Writes lines of text from the program (cleaned of anything a terminal would act on).
    package func say(_ text: String) {
        write(TextHygiene.block(text))
    }

    /// Writes what the renderer drew, as it drew it.
    package func drawn(_ text: String) {
        write(text.hasSuffix("\n") ? String(text.dropLast()) : text)
    }

    /// Draws the prompt (on a terminal only).
    package func showPrompt() {
        guard terminal else { return }
        sink(Array(Self.prompt.utf8))
    }

    private func write(_ text: String) {
        // On a terminal the line the prompt is on is cleared first, and the prompt drawn again after.
        let bytes = terminal ? "\r\u{1B}[2K" + text + "\n" + Self.prompt : text + "\n"
        sink(Array(bytes.utf8))
    }
}
