import CMissivePlugin
import Foundation
import Missive

/// Levels 2–3 and 7: what decoded messages answer.
enum BehaviourChecks {
    /// The longest digest allowed, in code points.
    static let maxDigestLength = DisplayText.maxCodePoints

    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "roundtrip.examples", level: 2,
                         summary: "decode → encode gives the example's JSON value (numbers compared as decimals, member order free), "
                            + "and decode → encode → decode → encode gives the same bytes twice, for every example.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in types {
                    for (example, content) in try type.decodedExamples() {
                        if let problem = roundTripProblem(type, content, original: example) {
                            problems.append("\(type.objectName) \(preview(example)): \(problem)")
                        }
                    }
                }
                return outcome(expected: "the example's value from the first encoding, and byte-identical encodings after it", problems: problems)
            }
        },
        ConformanceCheck(id: "encode.json", level: 2, summary: "encode gives one JSON object for every example.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in types {
                    for (_, content) in try type.decodedExamples() {
                        let (status, bytes) = content.rawEncode()
                        if status != MISSIVE_OK {
                            problems.append("\(type.objectName): \(content.failure(of: "encode", status: status))")
                        } else if bytes.first != UInt8(ascii: "{") || (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]) == nil {
                            problems.append("\(type.objectName): encode gave \(preview(bytes))")
                        }
                    }
                }
                return outcome(expected: "a JSON object", problems: problems)
            }
        },
        ConformanceCheck(id: "digest.valid", level: 3,
                         summary: "Digests are valid UTF-8, one line (no C0/C1 control, DEL, U+2028 or U+2029), not empty, at most \(maxDigestLength) code points.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in types {
                    for (example, content) in try type.decodedExamples() {
                        let (status, bytes) = content.rawDigest()
                        if status != MISSIVE_OK {
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): \(content.failure(of: "digest", status: status))")
                        } else if let problem = digestProblem(status: status, bytes: bytes) {
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): \(problem)")
                        }
                    }
                }
                return outcome(expected: "one-line UTF-8 digests", problems: problems)
            }
        },
        ConformanceCheck(id: "words.valid", level: 3, summary: "Searchable words are non-empty, valid UTF-8.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in types {
                    for (_, content) in try type.decodedExamples() {
                        guard let (status, words) = content.rawSearchableWords(), status != MISSIVE_ABSENT else { continue }
                        guard status == MISSIVE_OK else {
                            problems.append("\(type.objectName): \(content.failure(of: "searchable_words", status: status))")
                            continue
                        }
                        for word in words where word.isEmpty || !isValidUTF8(word) {
                            problems.append("\(type.objectName): word \(preview(word))")
                        }
                    }
                }
                return outcome(expected: "non-empty UTF-8 words", problems: problems)
            }
        },
        ConformanceCheck(id: "push.valid", level: 3,
                         summary: "Push content, where given, follows the digest's rules.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in types where type.persistenceValue != Persistence.status.rawValue {
                    for (example, content) in try type.decodedExamples() {
                        guard let (status, bytes) = content.rawPushContent(), status != MISSIVE_ABSENT else { continue }
                        if status != MISSIVE_OK {
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): \(content.failure(of: "push_content", status: status))")
                        } else if let problem = digestProblem(status: status, bytes: bytes, what: "push content") {
                            problems.append("\(type.objectName) \(preview(example, limit: 40)): \(problem)")
                        }
                    }
                }
                return outcome(expected: "one-line UTF-8 push content", problems: problems)
            }
        },
        ConformanceCheck(id: "media.valid", level: 3,
                         summary: "Media types give a well-formed media reference: a location, a type/subtype MIME type, no negative size.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let media = types.filter(\.isMedia)
                guard !media.isEmpty else { return .skipped("no media types") }
                var problems: [String] = []
                for type in media {
                    for (_, content) in try type.decodedExamples() {
                        guard let reference = content.media else {
                            problems.append("\(type.objectName): media gave no reference")
                            continue
                        }
                        if let problem = reference.problem { problems.append("\(type.objectName): \(problem)") }
                    }
                }
                return outcome(expected: "well-formed media references", problems: problems)
            }
        },
        ConformanceCheck(id: "roundtrip.variations", level: 7,
                         summary: "Equivalent spellings of each example (spacing, key order, escapes) decode and round-trip stably.",
                         requires: ["roundtrip.examples"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var generator = context.generator(for: "roundtrip.variations")
                var problems: [String] = []
                for type in types {
                    for example in type.examples {
                        for variation in JSONVariations.make(example, using: &generator) {
                            switch type.decode(bytes: variation) {
                            case .failure(let error): problems.append("\(type.objectName) \(preview(variation)): \(error.message)")
                            case .success(let content):
                                if let problem = roundTripProblem(type, content, original: variation) {
                                    problems.append("\(type.objectName) \(preview(variation)): \(problem)")
                                }
                            }
                        }
                    }
                }
                return outcome(expected: "every variation to decode and round-trip", problems: problems)
            }
        },
        ConformanceCheck(id: "digest.mutations", level: 9,
                         summary: "The digest and push content of every variation of the examples, and of \(GarbageChecks.mutationCount) "
                            + "seeded mutations, that decodes follow the digest's rules.",
                         requires: ["digest.valid", "push.valid"]) { context in
            context.withTypesOnSmallStack { (types) throws(CheckFailure) in
                var generator = context.generator(for: "digest.mutations")
                var problems: [String] = []
                let deadline = RepetitionDeadline()
                var tried = 0, total = 0
                for type in types {
                    var inputs: [(name: String, bytes: [UInt8])] = []
                    for (index, example) in type.examples.enumerated() {
                        for (number, variation) in JSONVariations.make(example, using: &generator).enumerated() {
                            inputs.append(("variation \(number + 1) of example \(index)", variation))
                        }
                    }
                    for mutation in Mutation.make(type, count: GarbageChecks.mutationCount / max(types.count, 1), using: &generator) {
                        inputs.append(("mutation \(mutation.number) of \(mutation.count) (of example \(mutation.example))", mutation.bytes))
                    }
                    total += inputs.count
                    for input in inputs where !deadline.isPast {
                        tried += 1
                        InputTrail.note("\(type.objectName), \(input.name): \(preview(input.bytes, limit: 64))")
                        guard case .success(let content) = type.decode(bytes: input.bytes) else { continue }
                        if let problem = textProblem(type, content) {
                            problems.append("\(type.objectName), \(input.name) \(preview(input.bytes, limit: 48)): \(problem)")
                        }
                    }
                }
                InputTrail.clear()
                return deadline.outcome(
                    expected: "one-line UTF-8 digests and push content for every input that decodes", problems: problems, tried: tried, of: total)
            }
        },
    ]

    /// Why a message's digest, or its push content (for a type that is not a status type), breaks the rules
    /// of text shown to people, or `nil`.
    static func textProblem(_ type: PluginType, _ content: PluginContent) -> String? {
        let (status, bytes) = content.rawDigest()
        if status != MISSIVE_OK { return content.failure(of: "digest", status: status) }
        if let problem = digestProblem(status: status, bytes: bytes) { return problem }
        guard type.persistenceValue != Persistence.status.rawValue, let (pushStatus, push) = content.rawPushContent(),
              pushStatus != MISSIVE_ABSENT else { return nil }
        if pushStatus != MISSIVE_OK { return content.failure(of: "push_content", status: pushStatus) }
        return digestProblem(status: pushStatus, bytes: push, what: "push content")
    }

    /// Why encode → decode → encode is not stable for a decoded message, or `nil`. With `original`, the JSON
    /// the message was decoded from, the first encoding must also be the same JSON value as it (``JSONValue``):
    /// a first encode that loses information (a number cut to fewer digits, a member dropped) would otherwise
    /// go unseen, since the second encoding only repeats the first.
    static func roundTripProblem(_ type: PluginType, _ content: PluginContent, original: [UInt8]? = nil) -> String? {
        let (status1, first) = content.rawEncode()
        guard status1 == MISSIVE_OK else { return content.failure(of: "encode", status: status1) }
        if let original, let value = JSONValue(original), let encoded = JSONValue(first), let difference = value.difference(from: encoded) {
            return "the first encoding \(preview(first)) is not the value decoded: \(difference)"
        }
        switch type.decode(bytes: first) {
        case .failure(let error): return "its own encoding \(preview(first)) does not decode: \(error.message)"
        case .success(let again):
            let (status2, second) = again.rawEncode()
            guard status2 == MISSIVE_OK else { return "the second " + again.failure(of: "encode", status: status2) }
            return first == second ? nil : "first encoding \(preview(first)), second \(preview(second))"
        }
    }

    /// Why a digest (or push content, `what`) is not acceptable, or `nil`.
    static func digestProblem(status: Int32, bytes: [UInt8], what: String = "digest") -> String? {
        guard status == MISSIVE_OK else { return "\(what) returned status \(status)" }
        return DisplayText.problem(bytes, what: what)
    }
}

/// Equivalent JSON spellings of a document, for the variation checks.
enum JSONVariations {
    /// Up to three variations of `json`: extra spacing, keys of the top-level object in another order, and
    /// ASCII letters in strings written as `\u00XX` escapes. Invalid JSON gives none.
    static func make(_ json: [UInt8], using generator: inout SeededGenerator) -> [[UInt8]] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed]) else { return [] }
        var variations: [[UInt8]] = []
        if let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .fragmentsAllowed]) {
            variations.append(Array(pretty))
        }
        if let dictionary = object as? [String: Any], dictionary.count > 1 {
            var members = dictionary.keys.sorted().compactMap { key -> [UInt8]? in
                guard let value = try? JSONSerialization.data(withJSONObject: dictionary[key]!, options: [.fragmentsAllowed]),
                      let name = try? JSONSerialization.data(withJSONObject: key, options: [.fragmentsAllowed]) else { return nil }
                return Array(name) + [UInt8(ascii: ":")] + Array(value)
            }
            members.reverse()
            members.shuffle(using: &generator)
            variations.append([UInt8(ascii: "{")] + Array(members.joined(separator: [UInt8(ascii: ",")])) + [UInt8(ascii: "}")])
        }
        variations.append(escapingLetters(json))
        return variations
    }

    /// The document with every ASCII letter inside strings written as a `\u00XX` escape.
    static func escapingLetters(_ json: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var inString = false, escaped = false
        // The bytes of an escape still to copy as they are: its letter, and for \u its four hex digits.
        var escapeBytesLeft = 0
        let hex = Array("0123456789abcdef".utf8)
        for byte in json {
            if escapeBytesLeft > 0 {
                out.append(byte)
                escapeBytesLeft -= 1
                if escaped {
                    escaped = false
                    if byte == UInt8(ascii: "u") { escapeBytesLeft = 4 }
                }
                continue
            }
            if inString && ((0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)) {
                out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                continue
            }
            out.append(byte)
            if inString && byte == UInt8(ascii: "\\") {
                escaped = true
                escapeBytesLeft = 1
            } else if byte == UInt8(ascii: "\"") {
                inString.toggle()
            }
        }
        return out
    }
}
