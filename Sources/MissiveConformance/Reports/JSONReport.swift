import Foundation
import Missive

/// The JSON report; its fields are documented in docs/CHECK.md and stable within a `schemaVersion`.
package enum JSONReport {
    /// The report as one JSON object.
    package static func render(_ report: ConformanceReport) -> [UInt8] {
        var json = MissiveJSONWriter()
        json.beginObject()
        json.field("schemaVersion", 1)
        json.field("strictness", report.strictness)
        json.field("seed", String(report.seed))
        json.field("passed", report.passed)
        json.key("counts")
        json.beginObject()
        for (name, count) in report.counts.sorted(by: { $0.key < $1.key }) { json.field(name, count) }
        json.endObject()
        json.key("plugins")
        json.beginArray()
        for plugin in report.plugins {
            json.beginObject()
            json.field("file", plugin.path)
            json.field("name", plugin.name)
            json.field("version", plugin.version)
            json.field("vendor", plugin.vendor)
            json.field("passed", plugin.passed)
            json.key("results")
            json.beginArray()
            for result in plugin.results { write(result, to: &json) }
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.bytes
    }

    private static func write(_ result: CheckResult, to json: inout MissiveJSONWriter) {
        json.beginObject()
        json.field("id", result.id)
        json.field("level", result.level)
        json.field("outcome", result.outcome.name)
        json.field("expectedFailure", result.isExpectedFailure)
        if case .failed(let expected, let seen) = result.outcome {
            json.field("expected", expected)
            json.field("seen", seen)
        } else {
            json.field("expected", nil as String?)
            json.field("seen", nil as String?)
        }
        json.field("detail", result.outcome.detail)
        json.field("input", result.crash?.input)
        json.field("reproduce", result.crash?.reproduce)
        json.key("output")
        if let output = result.crash?.output { json.strings(output) } else { json.raw(Array("null".utf8)) }
        json.key("seconds")
        json.raw(Array(String(format: "%.6f", result.duration).utf8))
        json.endObject()
    }
}

/// The check list, as `missive check --list --format json` prints it.
package enum CheckListReport {
    /// Every check: id, level, summary and requirements.
    package static func json() -> [UInt8] {
        var json = MissiveJSONWriter()
        json.beginObject()
        json.field("schemaVersion", 1)
        json.key("checks")
        json.beginArray()
        for check in ConformanceCatalog.checks {
            json.beginObject()
            json.field("id", check.id)
            json.field("level", check.level)
            json.field("summary", check.summary)
            json.key("requires")
            json.strings(check.requires)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.bytes
    }

    /// One line per check.
    package static func text() -> String {
        ConformanceCatalog.checks.map { check in
            "\(check.id.padding(toLength: 28, withPad: " ", startingAt: 0)) level \(String(check.level).padding(toLength: 3, withPad: " ", startingAt: 0)) \(check.summary)"
        }.joined(separator: "\n")
    }
}
