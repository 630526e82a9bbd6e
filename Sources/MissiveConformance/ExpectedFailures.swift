/// Checks that are known to fail, so that they are reported but do not fail the run.
///
/// The file has one entry per line: a check id, optionally followed by a plugin (its metadata name or its
/// file name), e.g. `decode.large` or `speed.decode libAcme.so`. `#` starts a comment. A listed check that
/// fails, crashes or times out is an expected failure. A listed check that **passes** fails the run, so
/// the list cannot go stale.
package struct ExpectedFailures: Sendable, Hashable {
    /// One line of the list.
    package struct Entry: Sendable, Hashable {
        /// The check's id.
        package var checkID: String
        /// The plugin it applies to, or `nil` for every plugin.
        package var plugin: String?
    }

    /// The entries, in file order.
    package var entries: [Entry]

    /// No expected failures.
    package init() { entries = [] }

    /// Parses a list, refusing unknown check ids so that a typo cannot hide a failure.
    package init(parsing text: String) throws(ConformanceError) {
        entries = []
        // isNewline: "\r\n" is one Character in Swift, so a CRLF file must split on it too.
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let id = words.first else { continue }
            guard ConformanceCatalog.check(id) != nil else {
                throw ConformanceError("line \(number + 1): no check has the id '\(id)' (see `missive check --list`)")
            }
            guard words.count <= 2 else { throw ConformanceError("line \(number + 1): expected 'CHECK-ID [PLUGIN]'") }
            entries.append(Entry(checkID: id, plugin: words.count == 2 ? words[1] : nil))
        }
    }

    /// Whether a check is listed for a plugin, known by its metadata name and file name.
    package func lists(_ checkID: String, pluginName: String?, fileName: String) -> Bool {
        entries.contains { $0.checkID == checkID && ($0.plugin == nil || $0.plugin == pluginName || $0.plugin == fileName) }
    }
}

/// A problem with how the suite was asked to run: a bad option, list or file.
package struct ConformanceError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    package let description: String
    init(_ description: String) { self.description = description }
}
