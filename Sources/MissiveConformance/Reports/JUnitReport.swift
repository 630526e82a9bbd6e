import Foundation

/// JUnit XML, as CI systems read it: one `<testsuite>` per plugin, one `<testcase>` per check.
///
/// `failed` becomes `<failure>`; `crashed` and `timed-out` become `<error>`; `skipped` becomes `<skipped>`;
/// a warning passes with the message in `<system-out>`; an expected failure passes with the detail in
/// `<system-out>`.
package enum JUnitReport {
    /// The report as an XML document.
    package static func render(_ report: ConformanceReport) -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let all = report.plugins.flatMap(\.results)
        xml += "<testsuites name=\"missive-check\" tests=\"\(all.count)\" failures=\"\(count(all, "failure"))\" "
        xml += "errors=\"\(count(all, "error"))\" skipped=\"\(count(all, "skipped"))\" time=\(attribute(seconds(all)))>\n"
        let names = report.plugins.map { $0.name ?? URL(fileURLWithPath: $0.path).lastPathComponent }
        for (plugin, base) in zip(report.plugins, names) {
            // Suite names must be unique; two files of one plugin are told apart by their file.
            let name = names.filter { $0 == base }.count > 1 ? "\(base) (\(plugin.path))" : base
            xml += "  <testsuite name=\(attribute(name)) tests=\"\(plugin.results.count)\" failures=\"\(count(plugin.results, "failure"))\" "
            xml += "errors=\"\(count(plugin.results, "error"))\" skipped=\"\(count(plugin.results, "skipped"))\" time=\(attribute(seconds(plugin.results)))>\n"
            xml += "    <properties><property name=\"file\" value=\(attribute(plugin.path))/><property name=\"seed\" value=\"\(report.seed)\"/>"
            xml += "<property name=\"strictness\" value=\"\(report.strictness)\"/></properties>\n"
            for result in plugin.results {
                xml += "    <testcase classname=\(attribute("missive.check." + name)) name=\(attribute(result.id)) time=\(attribute(String(format: "%.6f", result.duration)))"
                switch (kind(result), result.outcome.detail) {
                case (nil, ""): xml += "/>\n"
                case (nil, let detail):
                    let prefix = result.isExpectedFailure ? "expected failure: " : { if case .warning = result.outcome { "warning: " } else { "" } }()
                    xml += "><system-out>\(escape(prefix + detail))</system-out></testcase>\n"
                case ("skipped"?, let detail): xml += "><skipped message=\(attribute(detail))/></testcase>\n"
                case (let element?, let detail):
                    let body = ([detail] + (result.crash.map { TextReport.crashLines($0, indent: "") } ?? [])).joined(separator: "\n")
                    xml += "><\(element) type=\(attribute(result.outcome.name)) message=\(attribute(detail))>\(escape(body))</\(element)></testcase>\n"
                }
            }
            xml += "  </testsuite>\n"
        }
        xml += "</testsuites>\n"
        return xml
    }

    /// The JUnit element a result becomes, or `nil` for a pass.
    private static func kind(_ result: CheckResult) -> String? {
        if result.isExpectedFailure { return nil }
        switch result.outcome {
        case .passed, .noted, .warning: return nil
        case .failed: return "failure"
        case .crashed, .timedOut: return "error"
        case .skipped: return "skipped"
        }
    }

    private static func count(_ results: [CheckResult], _ element: String) -> Int {
        results.filter { kind($0) == element }.count
    }

    private static func seconds(_ results: [CheckResult]) -> String {
        String(format: "%.6f", results.reduce(0) { $0 + $1.duration })
    }

    private static func attribute(_ text: String) -> String { "\"" + escape(text) + "\"" }

    /// Escapes text for XML 1.0, replacing characters XML cannot carry at all.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            case "\t", "\r": out += "&#\(scalar.value);"
            case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value): out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
