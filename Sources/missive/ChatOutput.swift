import Foundation
import Missive
import MissiveCommandLine

/// Where `missive chat` writes: on a terminal, each output above a prompt that is drawn again after it; piped,
/// plain lines and no prompt, so that a script reads one output per line.
struct ChatOutput: Sendable {
    /// Whether standard input and output are a terminal.
    let terminal: Bool

    /// The prompt on a terminal.
    static let prompt = "> "

    /// Writes lines of text from the program (cleaned of anything a terminal would act on).
    func say(_ text: String) {
        write(TextHygiene.block(text))
    }

    /// Writes what the renderer drew, as it drew it.
    func drawn(_ text: String) {
        write(text.hasSuffix("\n") ? String(text.dropLast()) : text)
    }

    /// Draws the prompt (on a terminal only).
    func showPrompt() {
        guard terminal else { return }
        Console.write(Array(Self.prompt.utf8), to: STDOUT_FILENO)
    }

    private func write(_ text: String) {
        // On a terminal the line the prompt is on is cleared first, and the prompt drawn again after.
        let bytes = terminal ? "\r\u{1B}[2K" + text + "\n" + Self.prompt : text + "\n"
        Console.write(Array(bytes.utf8), to: STDOUT_FILENO)
    }
}
