import Foundation
import Missive

/// Levels 4–5 and 9: decoding bad input returns an error and never crashes.
///
/// Every check here runs on a thread with a 256 KiB stack (``SmallStack``), as hosts decode, and notes each
/// input in the ``InputTrail`` before giving it, so that a crash names it.
enum GarbageChecks {
    /// How deep `decode.deep` nests arrays and objects.
    static let depth = 100_000
    /// Seeded mutations of the examples `decode.mutations` and `digest.mutations` try, shared among the types.
    static let mutationCount = 2_000

    /// A check that every input `inputs` makes must be refused by every type.
    private static func refuses(
        _ id: String, level: Int, _ summary: String, inputs: @escaping @Sendable (PluginType, inout SeededGenerator) -> [[UInt8]]
    ) -> ConformanceCheck {
        ConformanceCheck(id: id, level: level, summary: summary, requires: ["types.functions"]) { context in
            context.withTypesOnSmallStack { (types) throws(CheckFailure) in
                var generator = context.generator(for: id)
                var problems: [String] = []
                for type in types {
                    let all = inputs(type, &generator)
                    for (index, input) in all.enumerated() {
                        InputTrail.note("\(type.objectName), input \(index + 1) of \(all.count): \(preview(input, limit: 64))")
                        if case .success = type.decode(bytes: input) {
                            problems.append("\(type.objectName) accepted \(preview(input, limit: 48))")
                        }
                    }
                }
                InputTrail.clear()
                return outcome(expected: "an error for every input", problems: problems)
            }
        }
    }

    static let all: [ConformanceCheck] = [
        refuses("decode.empty", level: 4, "Empty input is refused.") { _, _ in [[]] },
        refuses("decode.truncated", level: 4, "Every truncation of every example is refused.") { type, _ in
            type.examples.flatMap { full in
                // Trailing whitespace first: cutting it off would leave valid JSON.
                let example = Array(full.reversed().drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }.reversed())
                return example.count < 2 ? [] : Set([1, example.count / 2, example.count - 1]).sorted().map { Array(example.prefix($0)) }
            }
        },
        refuses("decode.wrong-shape", level: 4, "JSON of the wrong shape (array, string, number, null, boolean) is refused.") { _, _ in
            ["[]", "[{}]", "\"text\"", "42", "null", "true"].map { Array($0.utf8) }
        },
        refuses("decode.invalid-utf8", level: 4, "Content with invalid UTF-8 is refused.") { type, _ in
            type.examples.filter { $0.first == UInt8(ascii: "{") && $0.count > 2 }.map { example in
                Array("{\"".utf8) + [0xFF, 0xC3, 0x28] + Array("\":1,".utf8) + example.dropFirst()
            } + [[0xC3, 0x28, 0xFF, 0xFE]]
        },
        refuses("decode.nul", level: 4, "Content with NUL bytes is refused.") { type, _ in
            [[0], Array(repeating: 0, count: 64)] + type.examples.filter { $0.count > 2 }.map { example in
                Array(example.prefix(example.count / 2)) + [0] + Array(example.dropFirst(example.count / 2))
            }
        },
        refuses("decode.trailing", level: 4, "An example followed by more bytes (text, a second copy, a NUL byte) is refused.") { type, _ in
            type.examples.flatMap { (example: [UInt8]) -> [[UInt8]] in
                let tails: [[UInt8]] = [Array("xyz".utf8), example, [0], Array("]".utf8)]
                return tails.map { example + $0 }
            }
        },
        refuses("decode.random", level: 5, "200 inputs of seeded random bytes are refused.") { _, generator in
            (0..<200).map { _ in (0..<Int.random(in: 1...256, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        },
        refuses("decode.deep", level: 5, "JSON nested 100,000 deep (arrays and objects) is refused, on a 256 KiB stack.") { _, _ in
            [Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8),
             Array((String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)).utf8)]
        },
        refuses("decode.large", level: 5, "A 10 MB input (an array of numbers) is refused.") { _, _ in
            // [1,1,...,1]: 10 MiB of valid JSON of the wrong shape.
            var input = [UInt8](repeating: UInt8(ascii: ","), count: (10 << 20) + 1)
            for index in stride(from: 1, to: input.count, by: 2) { input[index] = UInt8(ascii: "1") }
            input[0] = UInt8(ascii: "[")
            input[input.count - 1] = UInt8(ascii: "]")
            return [input]
        },
        ConformanceCheck(id: "decode.mutations", level: 9,
                         summary: "\(mutationCount) seeded mutations of the examples never crash; what decodes encodes to valid JSON.",
                         requires: ["examples.decode"]) { context in
            context.withTypesOnSmallStack { (types) throws(CheckFailure) in
                var generator = context.generator(for: "decode.mutations")
                var problems: [String] = []
                let deadline = RepetitionDeadline()
                var tried = 0, total = 0
                for type in types {
                    let mutations = Mutation.make(type, count: mutationCount / max(types.count, 1), using: &generator)
                    total += mutations.count
                    for mutation in mutations where !deadline.isPast {
                        tried += 1
                        mutation.note(type)
                        if case .success(let content) = type.decode(bytes: mutation.bytes) {
                            let (status, bytes) = content.rawEncode()
                            if status == 0, (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) == nil {
                                problems.append("\(type.objectName) decoded \(preview(mutation.bytes, limit: 48)) and encoded it as \(preview(bytes, limit: 48))")
                            }
                        }
                    }
                }
                InputTrail.clear()
                return deadline.outcome(expected: "valid JSON from every accepted mutation", problems: problems, tried: tried, of: total, inputs: "mutations")
            }
        },
    ]

    /// Flips, inserts or deletes a few bytes.
    static func mutate(_ bytes: inout [UInt8], using generator: inout SeededGenerator) {
        let interesting: [UInt8] = Array("{}[]\",:\\0123456789-.eE tfnu".utf8) + [0, 0x80, 0xFF, 0xC3]
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0 where !bytes.isEmpty: bytes[position] = interesting.randomElement(using: &generator)!
            case 1: bytes.insert(interesting.randomElement(using: &generator)!, at: position)
            default: if !bytes.isEmpty { bytes.remove(at: position) }
            }
        }
    }
}

/// One seeded mutation of an example: which example, its number in the check's series, and its bytes.
struct Mutation {
    /// The index of the example it was made from.
    let example: Int
    /// Its number among the type's mutations, from 1.
    let number: Int
    /// Its total count for the type.
    let count: Int
    let bytes: [UInt8]

    /// `count` mutations of the type's examples (none without examples), drawn from `generator`.
    static func make(_ type: PluginType, count: Int, using generator: inout SeededGenerator) -> [Mutation] {
        guard !type.examples.isEmpty else { return [] }
        return (0..<count).map { number in
            let example = Int.random(in: 0..<type.examples.count, using: &generator)
            var bytes = type.examples[example]
            GarbageChecks.mutate(&bytes, using: &generator)
            return Mutation(example: example, number: number + 1, count: count, bytes: bytes)
        }
    }

    /// Notes this mutation in the input trail as the input about to be given to `type`.
    func note(_ type: PluginType) {
        InputTrail.note("\(type.objectName), mutation \(number) of \(count) (of example \(example)): \(preview(bytes, limit: 64))")
    }
}
