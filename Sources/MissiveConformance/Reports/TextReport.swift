/// A readable report, one section per plugin.
package enum TextReport {
    /// The label of an outcome in the text report.
    static func label(_ result: CheckResult) -> String {
        if result.isExpectedFailure { return "XFAIL" }
        switch result.outcome {
        case .passed, .noted: return "PASS"
        case .failed: return "FAIL"
        case .crashed: return "CRASH"
        case .timedOut: return "TIMEOUT"
        case .skipped: return "SKIP"
        case .warning: return "WARN"
        }
    }

    /// One line for a result, as printed while the run goes; after a crash or timeout, more lines follow it:
    /// the input, the command that reproduces it, and the end of the plugin's output.
    package static func line(_ result: CheckResult) -> String {
        let head = "  \(label(result).padded(to: 8))\(result.id.padded(to: 28))"
        let detail = result.outcome.detail
        let line = detail.isEmpty ? head.trimmedRight : head + detail
        guard let crash = result.crash else { return line }
        return ([line] + crashLines(crash)).joined(separator: "\n")
    }

    /// The lines that follow a crashed or timed-out result, indented under its detail.
    static func crashLines(_ crash: CrashContext, indent: String = String(repeating: " ", count: 10)) -> [String] {
        var lines = ["input: " + (crash.input ?? "none noted"), "reproduce: " + crash.reproduce]
        if crash.output.isEmpty {
            lines.append("output: none")
        } else {
            lines.append("output (last \(crash.output.count) line\(crash.output.count == 1 ? "" : "s")):")
            lines += crash.output.map { "| " + $0 }
        }
        return lines.map { indent + $0 }
    }

    /// The heading of a plugin's section.
    package static func heading(_ plugin: PluginReport) -> String {
        let identity = plugin.name.map { " (\($0) \(plugin.version ?? "?") by \(plugin.vendor ?? "?"))" } ?? ""
        return "== \(plugin.path)\(identity)"
    }

    /// The whole report.
    package static func render(_ report: ConformanceReport) -> String {
        var lines = ["Missive conformance: strictness \(report.strictness), seed \(report.seed)"]
        for plugin in report.plugins {
            lines.append("")
            lines.append(heading(plugin))
            lines += plugin.results.map(line)
            lines.append("  " + summary(plugin.results) + (plugin.passed ? "" : "  -> FAILED"))
        }
        lines.append("")
        lines.append(summaryLine(report))
        return lines.joined(separator: "\n")
    }

    /// `N passed, N failed` over every plugin, as CI log readers expect.
    package static func summaryLine(_ report: ConformanceReport) -> String {
        let verdict = report.passed ? "PASSED" : "FAILED"
        return "\(verdict): \(report.plugins.count) plugin(s); " + summary(report.plugins.flatMap(\.results))
    }

    private static func summary(_ results: [CheckResult]) -> String {
        let order = ["passed", "failed", "crashed", "timed-out", "skipped", "warning", "expected-failure"]
        let counts = ConformanceReport.counts(results)
        return order.map { "\(counts[$0, default: 0]) \($0)" }.joined(separator: ", ")
    }
}

extension String {
    fileprivate func padded(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }

    fileprivate var trimmedRight: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
