import CMissivePlugin
import Missive

/// Level 3: the `missive.text.v1` extension (missive_plugin.h, "The text extension").
///
/// A type that offers it answers its digest, push content and words in one call; the host then never calls
/// the separate functions, so the two must agree. A plugin none of whose types offers it skips the check:
/// the host asks the separate functions, which the other checks hold to their rules.
enum TextChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "texts.agree", level: 3,
                         summary: "Where a type offers \(MISSIVE_TEXT_EXTENSION), its struct is usable, and its texts function gives the digest, "
                            + "push content and words (statuses and bytes) that digest, push_content and searchable_words give, for every example, "
                            + "every variation of it, and \(GarbageChecks.mutationCount) seeded mutations that decode.",
                         requires: ["examples.decode"]) { context in
            context.withTypesOnSmallStack { (types) throws(CheckFailure) in
                let offering = types.filter { $0.answersTextsAtOnce || $0.textExtensionProblem != nil }
                guard !offering.isEmpty else { return .skipped("no type offers \(MISSIVE_TEXT_EXTENSION)") }
                var problems = offering.compactMap { type in type.textExtensionProblem.map { "\(type.objectName): \($0)" } }
                var generator = context.generator(for: "texts.agree")
                let deadline = RepetitionDeadline()
                let usable = offering.filter(\.answersTextsAtOnce)
                var tried = 0, total = 0
                for type in usable {
                    var inputs: [(name: String, bytes: [UInt8])] = []
                    for (index, example) in type.examples.enumerated() {
                        inputs.append(("example \(index)", example))
                        for (number, variation) in JSONVariations.make(example, using: &generator).enumerated() {
                            inputs.append(("variation \(number + 1) of example \(index)", variation))
                        }
                    }
                    for mutation in Mutation.make(type, count: GarbageChecks.mutationCount / max(usable.count, 1), using: &generator) {
                        inputs.append(("mutation \(mutation.number) of \(mutation.count) (of example \(mutation.example))", mutation.bytes))
                    }
                    total += inputs.count
                    for input in inputs where !deadline.isPast {
                        tried += 1
                        InputTrail.note("\(type.objectName), \(input.name): \(preview(input.bytes, limit: 64))")
                        guard case .success(let content) = type.decode(bytes: input.bytes) else { continue }
                        if let problem = disagreement(content) {
                            problems.append("\(type.objectName), \(input.name) \(preview(input.bytes, limit: 48)): \(problem)")
                        }
                    }
                }
                InputTrail.clear()
                return deadline.outcome(
                    expected: "texts to give what the separate functions give", problems: problems, tried: tried, of: total)
            }
        }
    ]

    /// Where one message's texts function and its separate functions disagree, or `nil`. A texts function
    /// that does not return `MISSIVE_OK` agrees with anything: the host then asks the separate functions.
    static func disagreement(_ content: PluginContent) -> String? {
        guard let texts = content.rawTexts(), texts.status == MISSIVE_OK else { return nil }
        var differences: [String] = []
        func compare(_ part: String, _ combined: (status: Int32, bytes: [UInt8])?, _ separate: (status: Int32, bytes: [UInt8])?) {
            switch (combined, separate) {
            case (nil, nil): return
            case (let combined?, let separate?):
                if combined.status != separate.status {
                    differences.append("\(part): texts gave \(PluginType.describe(combined.status)), the function \(PluginType.describe(separate.status))")
                } else if combined.status == MISSIVE_OK && combined.bytes != separate.bytes {
                    differences.append("\(part): texts wrote \(preview(combined.bytes, limit: 40)), the function \(preview(separate.bytes, limit: 40))")
                }
            default: differences.append("\(part): the host read it from only one of the two")
            }
        }
        compare("digest", texts.digest, content.rawDigest())
        compare("push content", texts.push, content.rawPushContent())
        let separateWords = content.rawSearchableWords()
        switch (texts.words, separateWords) {
        case (nil, nil): break
        case (let combined?, let separate?):
            if combined.status != separate.status {
                differences.append("words: texts gave \(PluginType.describe(combined.status)), the function \(PluginType.describe(separate.status))")
            } else if combined.status == MISSIVE_OK && combined.pieces != separate.pieces {
                differences.append("words: texts wrote \(combined.pieces.count) [\(combined.pieces.prefix(3).map { preview($0, limit: 20) }.joined(separator: ", "))], "
                    + "the function \(separate.pieces.count) [\(separate.pieces.prefix(3).map { preview($0, limit: 20) }.joined(separator: ", "))]")
            }
        default: differences.append("words: the host read them from only one of the two")
        }
        return differences.isEmpty ? nil : differences.joined(separator: "; ")
    }
}
