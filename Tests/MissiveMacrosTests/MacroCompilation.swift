import Foundation
import MissiveTestSupport
import Testing

/// The plugin kit's macros as a plugin author meets them: a snippet that uses them is type-checked by the Swift
/// compiler with the macro plugin this build made (`MissiveMacros-tool`), against the built `MissivePluginKit`
/// module, and the test reads the errors the compiler reports and the expansions it prints.
///
/// The macros' expansions are compiled into the compiler plugin only, for the host; testing them through the
/// compiler rather than by calling them keeps swift-syntax out of the test bundle, whose build would otherwise
/// compile it a second time, for the target (docs/TESTING.md).
enum MacroCompilation {
    /// What the compiler said about a snippet.
    struct Outcome {
        /// Each error, as `LINE: MESSAGE` for one in the snippet (its `(from macro …)` tail left out), or the
        /// message alone for one inside an expansion.
        var errors: [String]
        /// The expansions, as the compiler printed them.
        var expansions: String
        /// The metadata records the expansions write into the plugin's `missive_meta` section, in order.
        var records: [String]

        /// The errors reported on the snippet's lines `lines`, without their line numbers.
        func errors(on lines: ClosedRange<Int>) -> [String] {
            errors.compactMap { error in
                guard let colon = error.firstIndex(of: ":"), let line = Int(error[..<colon]), lines.contains(line) else { return nil }
                return String(error[error.index(colon, offsetBy: 2)...])
            }
        }
    }

    /// Type-checks `source`, preceded by `import MissivePluginKit` on line 1 (so its own first line is line 2).
    static func typecheck(_ source: String) async throws -> Outcome {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/Snippet.swift"
        try Data(("import MissivePluginKit\n" + source).utf8).write(to: URL(fileURLWithPath: file))
        let build = Fixtures.buildDirectory
        let run = try await Fixtures.run(
            "/usr/bin/env",
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-I", build + "/Modules",
                "-Xcc", "-fmodule-map-file=" + build + "/CMissivePlugin.build/module.modulemap",
                "-load-plugin-executable", build + "/MissiveMacros-tool#MissiveMacros",
                "-Xfrontend", "-dump-macro-expansions", file,
            ],
            directory: folder, timeout: .seconds(300))
        #expect(!run.timedOut && !run.signaled, "swiftc did not finish: \(run.stderr.suffix(2000))")
        let output = run.stdout + run.stderr
        var errors: [String] = []
        for line in output.split(separator: "\n") {
            guard let range = line.range(of: ": error: ") else { continue }
            var message = String(line[range.upperBound...])
            if let tail = message.range(of: " (from macro '", options: .backwards) { message = String(message[..<tail.lowerBound]) }
            let location = line[..<range.lowerBound]
            if location.hasPrefix(file + ":"), let number = location.dropFirst(file.count + 1).split(separator: ":").first {
                errors.append("\(number): \(message)")
            } else {
                errors.append(message)
            }
        }
        return Outcome(errors: errors, expansions: output, records: records(in: output))
    }

    /// The records of every `missive_meta` constant printed in `expansions`: each is a tuple of bytes holding
    /// NUL-terminated JSON records.
    static func records(in expansions: String) -> [String] {
        var records: [String] = []
        var rest = expansions[...]
        while let declaration = rest.range(of: "@section(\"missive_meta\")") {
            rest = rest[declaration.upperBound...]
            guard let equals = rest.range(of: ") = ("), let end = rest[equals.upperBound...].firstIndex(of: ")") else { break }
            let bytes = rest[equals.upperBound..<end].split(separator: ",").compactMap { UInt8($0.trimmingCharacters(in: .whitespaces)) }
            records += bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            rest = rest[end...]
        }
        return records
    }

    /// A message type named `name` with `attribute`, and what `MessageCoding` and `MessageTextContent` need besides
    /// the macro; `members` go into its body.
    static func messageType(_ attribute: String, name: String = "A", members: String = "") -> String {
        """
        \(attribute)
        struct \(name): Codable, MessageTextContent {
            var text: String
            static var examples: [\(name)] { [\(name)(text: "x")] }
            var digest: String { text }
            \(members)
        }

        """
    }

    /// Type-checks each snippet of `cases` in one file, and answers, for each, the errors reported on its lines.
    static func errorsOfEach(_ cases: [String], prelude: String = "") async throws -> (errors: [[String]], outcome: Outcome) {
        precondition(prelude.isEmpty || prelude.hasSuffix("\n"), "the prelude ends its last line")
        var source = prelude
        var ranges: [ClosedRange<Int>] = []
        for snippet in cases {
            let first = source.split(separator: "\n", omittingEmptySubsequences: false).count + 1
            source += snippet.hasSuffix("\n") ? snippet : snippet + "\n"
            let last = source.split(separator: "\n", omittingEmptySubsequences: false).count
            ranges.append(first...last)
        }
        let outcome = try await typecheck(source)
        return (ranges.map { outcome.errors(on: $0) }, outcome)
    }
}
