import Foundation
@testable import MissiveConformance
@testable import MissiveCore
import Testing

/// Replays the committed fuzz corpora, the sample data and the JSON literals of the tests through the readers
/// as they were (JSONReplayLegacy.swift) and through the JSON layer, and counts where they differ: accept or
/// refuse, and the bytes and values read.
@Suite struct JSONReplayTests {
    /// Every input: corpus files whole, each of their prefixes and each with one byte dropped, sample data
    /// lines, and raw string literals from the test sources.
    static func inputs() throws -> [[UInt8]] {
        let root = Fixtures.repositoryRoot
        let files = FileManager.default
        var inputs: [[UInt8]] = []
        for folder in ["Fuzz/Corpus/envelope", "Fuzz/Corpus/decoders", "Fuzz/Corpus/metadata"] {
            for name in try files.contentsOfDirectory(atPath: "\(root)/\(folder)").sorted() {
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(root)/\(folder)/\(name)")))
                inputs.append(bytes)
                for line in bytes.split(separator: 0x0A) { inputs.append(Array(line)) }
                guard bytes.count <= 4096 else { continue }
                for end in 0..<bytes.count { inputs.append(Array(bytes[..<end])) }
                for drop in 0..<bytes.count { inputs.append(Array(bytes[..<drop] + bytes[(drop + 1)...])) }
            }
        }
        if let sample = files.enumerator(atPath: "\(root)/SampleData") {
            for case let name as String in sample where name.hasSuffix(".jsonl") || name.hasSuffix(".json") {
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(root)/SampleData/\(name)")))
                inputs.append(bytes)
                for line in bytes.split(separator: 0x0A) { inputs.append(Array(line)) }
            }
        }
        let literal = try NSRegularExpression(pattern: "#\"(.*?)\"#")
        for name in try files.contentsOfDirectory(atPath: "\(root)/Tests/MissiveTests").sorted() where name.hasSuffix(".swift") && !name.hasPrefix("JSONReplay") {
            let text = try String(contentsOfFile: "\(root)/Tests/MissiveTests/\(name)", encoding: .utf8)
            for match in literal.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                inputs.append(Array((text as NSString).substring(with: match.range(at: 1)).utf8))
            }
        }
        // Hand-made edge cases: surrogates, depth, numbers, UTF-8.
        var extra: [String] = [#""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud83d\ude00""#, #""\ud800\ud800\udc00""#,
                               #"{"id":"\ud800"}"#, #"{"\udfff":1}"#, "-0", "0.0e+00", "1E400", "-1e-400", "01", "1.", ".5", "-", "1e", "1e+", "9223372036854775808",
                               "-9223372036854775808", "-9223372036854775809", "[1,]", "{\"a\":1,}", "\u{FEFF}{}", "[\"\u{7F}\u{85}\u{2028}\"]"]
        for depth in [15, 16, 17, 39, 40, 41, 63, 64, 65, 255, 256, 257, 511, 512, 513] {
            extra.append(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
            extra.append("{\"c\":" + String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth) + "}")
        }
        inputs += extra.map { Array($0.utf8) }
        for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xC3, 0xA9]] {
            inputs.append([0x22] + bad + [0x22])
            inputs.append(Array(#"{"id":""#.utf8) + bad + Array(#"","content":{"x":""#.utf8) + bad + Array(#""}}"#.utf8))
            inputs.append(Array(#"{"a":"\u0041"#.utf8) + bad + Array(#""}"#.utf8))
        }
        return inputs
    }

    struct Tally: CustomStringConvertible {
        var inputs = 0
        var compared: [String: Int] = [:]
        var accepted: [String: Int] = [:]
        var differences: [String: [String]] = [:]

        mutating func check(_ what: String, _ old: String?, _ new: String?, _ input: [UInt8]) {
            compared[what, default: 0] += 1
            if old != nil && new != nil { accepted[what, default: 0] += 1 }
            if old != new {
                differences[what, default: []].append("\(String(decoding: input.prefix(120), as: UTF8.self).debugDescription): old \(old ?? "refused") new \(new ?? "refused")")
            }
        }

        var description: String {
            var lines = ["\(inputs) inputs"]
            for what in compared.keys.sorted() {
                lines.append("\(what): \(compared[what]!) compared, \(accepted[what] ?? 0) accepted by both, \(differences[what]?.count ?? 0) differ")
                for example in (differences[what] ?? []).prefix(5) { lines.append("    \(example)") }
            }
            return lines.joined(separator: "\n")
        }
    }

    @Test func theLayerDecidesAndReadsAsTheOldReadersDid() throws {
        var tally = Tally()
        let inputs = try Self.inputs()
        tally.inputs = inputs.count
        for input in inputs {
            Self.compare(input, &tally, nested: true)
        }
        print("JSON replay:\n\(tally)")
        let expected: Set<String> = ["checker value (lone surrogate or 256+ deep)"]
        for (what, list) in tally.differences where !expected.contains(what) {
            Issue.record("\(what): \(list.count) differences, first: \(list.first ?? "")")
        }
    }

    static func compare(_ input: [UInt8], _ tally: inout Tally, nested: Bool) {
        input.withUnsafeBufferPointer { buffer in
            // The envelope's scan: keys as ranges and shapes, values as ranges; the fields read from them.
            for validating in [true, false] {
                var old = LegacyJSONScanner(buffer, validatingUTF8: validating)
                let oldReader = LegacyJSONValueReader(buffer)
                var oldOut = ""
                var oldOK = true
                do {
                    try old.scanMemberRanges { key, shape, value in
                        oldOut += "\(key) \(shape.isPlainASCII) \(value) \(oldReader.decodeString(key).debugDescription) \(oldReader.stringValue(value)?.debugDescription ?? "-") \(oldReader.decodeInt64(value).map(String.init) ?? "-");"
                    }
                } catch { oldOK = false }
                var new = JSONScanner(buffer, validatingUTF8: validating)
                let newReader = JSONValueReader(buffer)
                var newOut = ""
                var newOK = true
                do {
                    try new.scanMemberRanges { key, shape, value in
                        newOut += "\(key) \(shape.isPlainASCII) \(value) \(newReader.decodeString(key).debugDescription) \(newReader.stringValue(value)?.debugDescription ?? "-") \(newReader.decodeInt64(value).map(String.init) ?? "-");"
                    }
                } catch { newOK = false }
                tally.check(validating ? "envelope scan (UTF-8 checked)" : "member scan (syntax only)", oldOK ? oldOut : nil, newOK ? newOut : nil, input)
                if validating, oldOK, newOK, nested {
                    // Each member's value (the content) as a document of its own.
                    var ranges: [Range<Int>] = []
                    var scanner = JSONScanner(buffer)
                    try? scanner.scanMemberRanges { _, _, value in ranges.append(value) }
                    for range in ranges where range.count > 1 { compare(Array(input[range]), &tally, nested: false) }
                }
            }
            // Validating a whole document.
            tally.check("document check", LegacyJSONScanner.problem(in: input) == nil ? "" : nil, JSONScanner.problem(in: input) == nil ? "" : nil, input)
            // The pull reader: skipping the whole document, and reading it as a string.
            let raw = UnsafeRawBufferPointer(buffer)
            var oldPull = LegacyPullReader(raw)
            var newPull = MissiveJSONReader(raw)
            let oldSkip = (try? oldPull.skipValue()).flatMap { try? oldPull.finish() }.map { "\(oldPull.offset)" }
            let newSkip = (try? newPull.skipValue()).flatMap { try? newPull.finish() }.map { "\(newPull.offset)" }
            tally.check("pull reader skip", oldSkip, newSkip, input)
            var oldString = LegacyPullReader(raw)
            var newString = MissiveJSONReader(raw)
            tally.check("pull reader string", try? oldString.readString(), try? newString.readString(), input)
            var oldInt = LegacyPullReader(raw)
            var newInt = MissiveJSONReader(raw)
            tally.check("pull reader integer", (try? oldInt.readInteger(Int64.self)).map(String.init), (try? newInt.readInteger(Int64.self)).map(String.init), input)
            var oldDouble = LegacyPullReader(raw)
            var newDouble = MissiveJSONReader(raw)
            tally.check("pull reader double", (try? oldDouble.readDouble()).map { "\($0)" }, (try? newDouble.readDouble()).map { "\($0)" }, input)
        }
        // The value tree, as views (repairing), actions (refusing, 16 deep) and action lists (64 deep) read it.
        for (depth, surrogates) in [(40, JSONLoneSurrogates.replace), (16, .refuse), (64, .refuse), (16, .replace)] {
            let old = try? LegacyJSONValueParser.parse(input, maxDepth: depth, loneSurrogates: surrogates == .refuse ? .refuse : .replace)
            let new = try? JSONValue.parse(input, maxDepth: depth, loneSurrogates: surrogates)
            tally.check("value tree \(depth) \(surrogates)", old.map(describe), new.map(describe), input)
        }
        // The checker's exact values.
        let oldChecked = LegacyCheckerJSONValue(input)
        let newChecked = JSONValue(input)
        // By design the checker now refuses a lone surrogate (it compared UTF-16 code units) and reads up to the
        // layer's one depth limit (it stopped at 256): those inputs are counted apart.
        let text = String(decoding: input, as: UTF8.self).lowercased()
        let surrogate = ["\\ud8", "\\ud9", "\\uda", "\\udb", "\\udc", "\\udd", "\\ude", "\\udf"].contains { text.contains($0) }
        let deep = input.filter { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }.count >= 256
        let checkerDecision = surrogate || deep ? "checker value (lone surrogate or 256+ deep)" : "checker value"
        tally.check(checkerDecision, oldChecked.map(describe), newChecked.map(describeChecked), input)
    }

    static func describe(_ value: LegacyViewJSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .number(_, let spelling): "n:" + spelling
        case .string(let text): "s:" + Array(text.unicodeScalars.map(\.value)).description
        case .array(let values): "[" + values.map(describe).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { "s:\(Array($0.key.unicodeScalars.map(\.value))):" + describe($0.value) }.joined(separator: ",") + "}"
        }
    }

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .number(_, let spelling): "n:" + spelling
        case .string(let text): "s:" + Array(text.unicodeScalars.map(\.value)).description
        case .array(let values): "[" + values.map(describe).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { "s:\(Array($0.key.unicodeScalars.map(\.value))):" + describe($0.value) }.joined(separator: ",") + "}"
        }
    }

    /// The checker's values in a form both trees share: numbers as decimals, strings as UTF-16, members sorted.
    static func describe(_ value: LegacyCheckerJSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .number(let number): "d:" + number.description
        case .string(let units): "u:" + units.description
        case .array(let values): "[" + values.map(describe).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { "u:\($0):" + members[$0]!.map(describe).joined(separator: "|") }.joined(separator: ",") + "}"
        }
    }

    static func describeChecked(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .number(_, let spelling): "d:" + JSONDecimal(spelling).description
        case .string(let text): "u:" + Array(text.utf16).description
        case .array(let values): "[" + values.map(describeChecked).joined(separator: ",") + "]"
        case .object:
            "{" + value.membersByKey.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { "u:\($0):" + value.membersByKey[$0]!.map(describeChecked).joined(separator: "|") }.joined(separator: ",") + "}"
        }
    }
}
