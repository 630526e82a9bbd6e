import Foundation
import Missive
import MissivePluginKit
import Testing

// MARK: - Test types

/// Every property kind the generated coding handles, and a member that falls back to Codable.
@MissiveCoding
struct EveryKind: Codable, Equatable {
    var text: String
    var flag: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var float: Float
    var maybe: String?
    var maybeNumber: Int?
    var list: [Int]
    var table: [String: Double]
    var nested: Nested
    var nestedList: [Nested]?
    var mood: Mood
    var moods: [String: Mood]?
    /// No generated coding: JSONDecoder and JSONEncoder for this member alone.
    var fallback: PlainCodable
    var maybeFallback: PlainCodable?
    var lists: [[String]]
    /// Computed: not coded.
    var count: Int { list.count }
    /// Static: not coded.
    static let unit = "none"
}

@MissiveCoding
struct Nested: Codable, Equatable {
    var name: String
    var score: Double?
}

@MissiveCoding
enum Mood: String, Codable, Equatable, CaseIterable {
    case happy, sad
    case dashed = "so-so"
}

/// Codable only: a member of this type takes the fallback.
struct PlainCodable: Codable, Equatable {
    var label: String
    var values: [Int]
}

// Mirrors of the sample plugins' types, which the tests cannot link: the same stored properties, with the
// coding `@MissiveMessage` generates for them (`@MissiveCoding` generates the same members).
@MissiveCoding struct LinkShape: Codable, Equatable { var text: String; var link: String }
@MissiveCoding struct PollShape: Codable, Equatable {
    var question: String
    var options: [String]
    var votes: [Int]?
    var voters: [String: Int]?
}
@MissiveCoding struct TypingShape: Codable, Equatable { var userID: String; var isTyping: Bool }
@MissiveCoding struct StickerShape: Codable, Equatable {
    var pack: String
    var name: String
    var url: String
    var mimeType: String
    var sizeBytes: Int64
    var width: Int?
    var height: Int?
}
@MissiveCoding struct MatrixNoticeShape: Codable, Equatable { var msgtype: String; var body: String }

/// `@MissiveMessage` on a Codable struct: generated coding, decoded in place.
@MissiveMessage("test:generated", persistence: .persisted)
struct GeneratedMessage: Codable, MessageTextContent, Equatable {
    var title: String
    var tags: [String]?
    static var examples: [GeneratedMessage] { [GeneratedMessage(title: "a", tags: ["b"])] }
    var digest: String { title }
}

/// `@MissiveMessage` on a struct with its own `init(decoding:)`: generated coding, but a copy for the init.
@MissiveMessage("test:validated", persistence: .persisted)
struct ValidatedMessage: Codable, MessageTextContent, Equatable {
    var title: String
    static var examples: [ValidatedMessage] { [ValidatedMessage(title: "a")] }
    init(title: String) { self.title = title }
    init(decoding content: Data) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
        guard !title.isEmpty else { throw MissiveError(.malformedContent, "a title is needed") }
    }
    var digest: String { title }
}

/// `@MissiveMessage` on a struct with `CodingKeys`: the Codable path.
@MissiveMessage("test:keyed", persistence: .persisted)
struct KeyedMessage: Codable, MessageTextContent {
    var title: String
    enum CodingKeys: String, CodingKey { case title = "t" }
    static var examples: [KeyedMessage] { [KeyedMessage(title: "a")] }
    var digest: String { title }
}

// MARK: - A seeded generator

/// SplitMix64: small, fast and reproducible from its seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random values of the test types.
struct Values {
    var random: SeededGenerator

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func string() -> String {
        let pieces: [String] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1f}", "\u{7f}", "é", "链", "👋", "\u{2028}", "e\u{301}", "{", "}", ":", ","]
        let length = Int.random(in: 0...12, using: &random)
        return (0..<length).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type = T.self) -> T {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return [T.min, T.max, 0, 1].randomElement(using: &random)!
        case 1: return T(truncatingIfNeeded: Int8.random(in: .min ... .max, using: &random))
        default: return T.random(in: .min ... .max, using: &random)
        }
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return [0, -0.0, 1, -1, 0.1, 1e15, 1e16, 1e21, 1e-7, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 2.2250738585072014e-308].randomElement(using: &random)!
        case 1: return Double(Int32.random(in: .min ... .max, using: &random)) / 100
        case 2: return Double.random(in: -1e6...1e6, using: &random)
        default:
            var value = Double(bitPattern: random.next())
            while !value.isFinite { value = Double(bitPattern: random.next()) }
            return value
        }
    }

    mutating func float() -> Float {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return [0, 1, 0.1, 16_777_216, .greatestFiniteMagnitude, .leastNormalMagnitude].randomElement(using: &random)!
        case 1: return Float(Int16.random(in: .min ... .max, using: &random)) / 10
        default:
            var value = Float(bitPattern: UInt32.random(in: .min ... .max, using: &random))
            while !value.isFinite || (value != 0 && !value.isNormal) { value = Float(bitPattern: UInt32.random(in: .min ... .max, using: &random)) }
            return value
        }
    }

    mutating func optional<T>(_ make: (inout Values) -> T) -> T? { chance(30) ? nil : make(&self) }
    mutating func array<T>(_ make: (inout Values) -> T) -> [T] { (0..<Int.random(in: 0...4, using: &random)).map { _ in make(&self) } }
    mutating func table<T>(_ make: (inout Values) -> T) -> [String: T] {
        Dictionary(array { values in (values.string(), make(&values)) }, uniquingKeysWith: { first, _ in first })
    }

    mutating func nested() -> Nested { Nested(name: string(), score: optional { $0.double() }) }

    mutating func everyKind() -> EveryKind {
        EveryKind(
            text: string(), flag: chance(50), int: integer(), int8: integer(), int16: integer(), int32: integer(), int64: integer(),
            uint: integer(), uint8: integer(), uint16: integer(), uint32: integer(), uint64: integer(), double: double(), float: float(),
            maybe: optional { $0.string() }, maybeNumber: optional { $0.integer() }, list: array { $0.integer() },
            table: table { $0.double() }, nested: nested(), nestedList: optional { $0.array { $0.nested() } },
            mood: Mood.allCases.randomElement(using: &random)!, moods: optional { $0.table { _ in Mood.sad } },
            fallback: PlainCodable(label: string(), values: array { $0.integer() }), maybeFallback: optional { PlainCodable(label: $0.string(), values: []) },
            lists: array { $0.array { $0.string() } })
    }
}

// MARK: - Mutations

/// Ways to break (or merely change) a valid encoding: the fast path and JSONDecoder must agree on each.
enum Mutation: CaseIterable {
    case truncate, dropByte, duplicateByte, flipByte, insertSpecial, wrongKind, bigNumber, badEscape, invalidUTF8, deepNesting
    case trailing, dropMember, duplicateMember, unknownMember, trailingComma, byteOrderMark, nullMember, fractionalInteger

    func apply(to bytes: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var out = bytes
        let position = { (random: inout SeededGenerator) in Int.random(in: 0..<max(out.count, 1), using: &random) }
        switch self {
        case .truncate: out = Array(out.prefix(position(&random)))
        case .dropByte: if !out.isEmpty { out.remove(at: position(&random)) }
        case .duplicateByte: if !out.isEmpty { let at = position(&random); out.insert(out[at], at: at) }
        case .flipByte: if !out.isEmpty { out[position(&random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random)) }
        case .insertSpecial:
            let specials: [[UInt8]] = [[0x22], [0x5C], [0x2C], [0x3A], [0x7B], [0x7D], [0x5B], [0x5D], [0x01], [0x20], Array("null".utf8), Array("-".utf8), Array("0".utf8), Array("1e5".utf8), Array(".5".utf8)]
            out.insert(contentsOf: specials.randomElement(using: &random)!, at: position(&random))
        case .wrongKind: out = Self.replacingValue(in: out, &random) { _ in ["\"x\"", "1", "-1", "1.5", "true", "null", "[]", "{}", "[1]", "{\"a\":1}"] }
        case .bigNumber:
            out = Self.replacingValue(in: out, &random) { _ in
                ["256", "-129", "65536", "4294967296", "18446744073709551616", "-9223372036854775809", "9223372036854775808", "1e400", "-1e400", "1e-400",
                 "3.5e38", "1.0", "1e2", "-0", "01", "1.", "-", "0.1e1", "123456789012345678901234567890", "1.00000005960464477539062501", "2.5e-324"]
            }
        case .badEscape:
            out = Self.replacingValue(in: out, &random) { _ in [#""\x""#, #""\u12""#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\u00e9\n""#, #""\/\b""#, #""\uD83D\uDC4B""#] }
        case .invalidUTF8:
            let sequences: [[UInt8]] = [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xC3, 0xA9]]
            if let quote = out.indices.filter({ out[$0] == 0x22 }).randomElement(using: &random) {
                out.insert(contentsOf: sequences.randomElement(using: &random)!, at: quote + 1)
            }
        case .deepNesting:
            let depth = [510, 511, 512, 513, 600].randomElement(using: &random)!
            let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            out = Self.addingMember(to: out, "\"deep\":" + deep)
        case .trailing: out += Array([" ", "x", "{}", "\n", ",", "\u{0}"].randomElement(using: &random)!.utf8)
        case .dropMember: out = Self.members(of: out, &random) { members, random in if !members.isEmpty { members.remove(at: Int.random(in: 0..<members.count, using: &random)) } }
        case .duplicateMember: out = Self.members(of: out, &random) { members, random in if let member = members.randomElement(using: &random) { members.insert(member, at: Int.random(in: 0...members.count, using: &random)) } }
        case .unknownMember: out = Self.addingMember(to: out, ["\"zz\":{\"a\":[1,2,{\"b\":null}]}", "\"\":1", "\"x\\u0041\":\"\\u00e9\"", "\"\u{212A}\":1"].randomElement(using: &random)!)
        case .trailingComma: if let close = out.lastIndex(of: 0x7D) { out.insert(0x2C, at: close) }
        case .byteOrderMark: out = [0xEF, 0xBB, 0xBF] + out
        case .nullMember: out = Self.replacingValue(in: out, &random) { _ in ["null"] }
        case .fractionalInteger: out = Self.replacingValue(in: out, &random) { _ in ["2.0", "3e0", "-0.0", "1E1"] }
        }
        return out
    }

    /// Replaces the value of one top-level member (found by re-encoding through JSONSerialization's view).
    static func replacingValue(in bytes: [UInt8], _ random: inout SeededGenerator, _ values: (inout SeededGenerator) -> [String]) -> [UInt8] {
        members(of: bytes, &random) { members, random in
            guard !members.isEmpty else { return }
            let at = Int.random(in: 0..<members.count, using: &random)
            let key = members[at].split(separator: ":", maxSplits: 1).first.map(String.init) ?? "\"\""
            members[at] = key + ":" + values(&random).randomElement(using: &random)!
        }
    }

    static func addingMember(to bytes: [UInt8], _ member: String) -> [UInt8] {
        guard bytes.first == 0x7B else { return bytes }
        return [0x7B] + Array(member.utf8) + (bytes.count > 2 ? [0x2C] : []) + bytes.dropFirst()
    }

    /// Splits a flat encoding's top level into members (as text), lets `change` edit them, and joins them.
    static func members(of bytes: [UInt8], _ random: inout SeededGenerator, _ change: (inout [String], inout SeededGenerator) -> Void) -> [UInt8] {
        guard bytes.first == 0x7B, bytes.last == 0x7D else { return bytes }
        var members: [String] = []
        var depth = 0
        var inString = false
        var escaped = false
        var current: [UInt8] = []
        for byte in bytes.dropFirst().dropLast() {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
            } else if byte == 0x22 {
                inString = true
            } else if byte == 0x7B || byte == 0x5B {
                depth += 1
            } else if byte == 0x7D || byte == 0x5D {
                depth -= 1
            } else if byte == 0x2C && depth == 0 {
                members.append(String(decoding: current, as: UTF8.self))
                current = []
                continue
            }
            current.append(byte)
        }
        if !current.isEmpty { members.append(String(decoding: current, as: UTF8.self)) }
        change(&members, &random)
        return Array(("{" + members.joined(separator: ",") + "}").utf8)
    }
}

// MARK: - Agreement

/// What one decoder made of some bytes: the value, or the reason `MissiveJSON.describe` gives.
enum Outcome<T: Equatable>: Equatable {
    case value(T)
    case refused(String)
}

/// Checks the generated path against the Codable path on `bytes`; returns whether the fast path alone (no
/// fallback) accepted them.
@discardableResult
func expectAgreement<T: MissiveJSONValue & Equatable>(_ type: T.Type, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    let codable: Outcome<T>
    do { codable = .value(try JSONDecoder().decode(T.self, from: Data(bytes))) } catch { codable = .refused(MissiveJSON.describe(error)) }
    let generated: Outcome<T>
    do { generated = .value(try MissiveJSON.decode(T.self, from: Data(bytes))) } catch { generated = .refused(MissiveJSON.describe(error)) }
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(generated == codable, "\(T.self): \(text)", sourceLocation: sourceLocation)
    // The fast path alone never accepts what JSONDecoder refuses, and reads the same value.
    let fast = bytes.withUnsafeBytes { try? MissiveJSONReader.decode(T.self, from: $0) }
    if let fast {
        #expect(codable == .value(fast), "fast path accepted \(T.self): \(text)", sourceLocation: sourceLocation)
        // And writes the same bytes as JSONEncoder.
        let written = try? MissiveJSON.encode(fast)
        #expect(written == (try? MissiveJSON.encoder.encode(fast)), "\(T.self) encoding of \(text)", sourceLocation: sourceLocation)
    }
    return fast != nil
}

/// Runs `rounds` random values of a type through both paths, then mutations of their encodings.
func checkAgreement<T: MissiveJSONValue & Equatable>(
    _ type: T.Type, seed: UInt64, rounds: Int = 300, sourceLocation: SourceLocation = #_sourceLocation, make: (inout Values) -> T
) throws {
    var values = Values(random: SeededGenerator(seed: seed))
    var mutationRandom = SeededGenerator(seed: seed &+ 1)
    var fastAccepted = 0
    var mutated = 0
    for _ in 0..<rounds {
        let value = make(&values)
        let codableBytes = try MissiveJSON.encoder.encode(value)
        let generatedBytes = try MissiveJSON.encode(value)
        #expect(generatedBytes == codableBytes, "\(T.self): \(String(decoding: codableBytes, as: UTF8.self)) vs \(String(decoding: generatedBytes, as: UTF8.self))", sourceLocation: sourceLocation)
        let valid = Array(codableBytes)
        // A valid encoding: the fast path reads it alone.
        if expectAgreement(T.self, valid, sourceLocation: sourceLocation) {
            fastAccepted += 1
        } else {
            let reason = valid.withUnsafeBytes { bytes -> String in
                do {
                    _ = try MissiveJSONReader.decode(T.self, from: bytes)
                    return "accepted"
                } catch {
                    return "\(error)"
                }
            }
            Issue.record("the fast path refused a valid \(T.self) encoding (\(reason)): \(String(decoding: valid, as: UTF8.self))", sourceLocation: sourceLocation)
        }
        for mutation in Mutation.allCases {
            expectAgreement(T.self, mutation.apply(to: valid, &mutationRandom), sourceLocation: sourceLocation)
            mutated += 1
        }
    }
    #expect(fastAccepted == rounds, "the fast path read \(fastAccepted) of \(rounds) valid \(T.self) encodings", sourceLocation: sourceLocation)
    #expect(mutated == rounds * Mutation.allCases.count)
}

/// The generated coding (`@MissiveMessage`, `@MissiveCoding`, the built-in types' hand-written conformances)
/// agrees with the Codable path: the same values and bytes from valid content, the same refusals and reasons
/// from invalid content.
@Suite struct GeneratedCodingTests {
    @Test func everyPropertyKindAgreesWithCodable() throws {
        try checkAgreement(EveryKind.self, seed: 1, rounds: 400) { $0.everyKind() }
    }

    @Test func sampleTypeShapesAgreeWithCodable() throws {
        try checkAgreement(LinkShape.self, seed: 2) { LinkShape(text: $0.string(), link: $0.string()) }
        try checkAgreement(PollShape.self, seed: 3) { values in
            PollShape(question: values.string(), options: values.array { $0.string() }, votes: values.optional { $0.array { $0.integer() } },
                voters: values.optional { $0.table { $0.integer() } })
        }
        try checkAgreement(TypingShape.self, seed: 4) { TypingShape(userID: $0.string(), isTyping: $0.chance(50)) }
        try checkAgreement(StickerShape.self, seed: 5) { values in
            StickerShape(pack: values.string(), name: values.string(), url: values.string(), mimeType: values.string(), sizeBytes: values.integer(),
                width: values.optional { $0.integer() }, height: values.optional { $0.integer() })
        }
        try checkAgreement(MatrixNoticeShape.self, seed: 6) { MatrixNoticeShape(msgtype: $0.string(), body: $0.string()) }
    }

    @Test func builtInTypesAgreeWithCodable() throws {
        try checkAgreement(TextMessage.self, seed: 10) { TextMessage(content: $0.string(), extra: $0.optional { $0.string() }) }
        try checkAgreement(ImageMessage.self, seed: 11) { values in
            ImageMessage(remoteURL: values.optional { $0.string() }, localPath: values.optional { $0.string() }, mimeType: values.string(),
                sizeBytes: values.optional { $0.integer() }, width: values.optional { $0.integer() }, height: values.optional { $0.integer() })
        }
        try checkAgreement(VoiceMessage.self, seed: 12) { values in
            VoiceMessage(remoteURL: values.optional { $0.string() }, localPath: values.optional { $0.string() }, mimeType: values.string(),
                sizeBytes: values.optional { $0.integer() }, durationSeconds: values.integer())
        }
        try checkAgreement(VideoMessage.self, seed: 13) { values in
            VideoMessage(remoteURL: values.optional { $0.string() }, localPath: values.optional { $0.string() }, mimeType: values.string(),
                sizeBytes: values.optional { $0.integer() }, durationSeconds: values.integer())
        }
        try checkAgreement(FileMessage.self, seed: 14) { values in
            FileMessage(name: values.string(), remoteURL: values.optional { $0.string() }, localPath: values.optional { $0.string() }, mimeType: values.string(),
                sizeBytes: values.optional { $0.integer() })
        }
        try checkAgreement(LocationMessage.self, seed: 15) { LocationMessage(latitude: $0.double(), longitude: $0.double(), poi: $0.optional { $0.string() }) }
    }

    @Test func builtInExamplesEncodeAsBefore() throws {
        func check<T: MessageType & MissiveJSONValue & Equatable>(_ type: T.Type) throws {
            for example in T.examples {
                let encoded = try example.encode()
                #expect(encoded == (try MissiveJSON.encoder.encode(example)), "\(T.objectName)")
                let decoded = try encoded.withUnsafeBytes { try T(decodingBytes: $0) }
                #expect(decoded == example)
            }
        }
        try check(TextMessage.self)
        try check(ImageMessage.self)
        try check(VoiceMessage.self)
        try check(VideoMessage.self)
        try check(FileMessage.self)
        try check(LocationMessage.self)
    }

    @Test func messageMacroChoosesThePath() throws {
        #expect((GeneratedMessage.self as Any.Type) is any MissiveDecodesInPlace.Type)
        #expect((ValidatedMessage.self as Any.Type) is any MissiveJSONValue.Type)
        #expect(!((ValidatedMessage.self as Any.Type) is any MissiveDecodesInPlace.Type))
        #expect(!((KeyedMessage.self as Any.Type) is any MissiveJSONValue.Type))
        try checkAgreement(GeneratedMessage.self, seed: 20) { GeneratedMessage(title: $0.string(), tags: $0.optional { $0.array { $0.string() } }) }
        // The hand-written init(decoding:) still runs, from Data and from borrowed bytes alike.
        let empty = Array(#"{"title":""}"#.utf8)
        #expect(throws: MissiveError.self) { try ValidatedMessage(decoding: Data(empty)) }
        #expect(throws: MissiveError.self) { try empty.withUnsafeBytes { try ValidatedMessage(decodingBytes: $0) } }
        let keyed = Array(#"{"t":"x"}"#.utf8)
        #expect(try keyed.withUnsafeBytes { try KeyedMessage(decodingBytes: $0) }.title == "x")
        #expect(try GeneratedMessage(decoding: Data(#"{"title":"x","tags":null,"more":1}"#.utf8)) == GeneratedMessage(title: "x", tags: nil))
    }

    @Test func refusalsKeepTheirReasons() throws {
        func reason(_ json: String) -> String? {
            do {
                _ = try TextMessage(decoding: Data(json.utf8))
                return nil
            } catch {
                return MissiveJSON.describe(error)
            }
        }
        #expect(reason(#"{"extra":"x"}"#) == "missing field 'content'")
        #expect(reason(#"{"content":1}"#) == "wrong type at 'content': expected a string")
        #expect(reason(#"{"content":null}"#) == "wrong type at 'content': expected a string, found null")
        #expect(reason(#"{"content":"x""#) == "invalid JSON, or a value the type cannot hold (a number out of range, a fraction for an integer, a lone surrogate)")
        #expect(reason(#"{"content":"x","extra":"y","more":[1,{"a":null}]}"#) == nil)
        #expect(reason(#"{"content":"x"} x"#) == "invalid JSON, or a value the type cannot hold (a number out of range, a fraction for an integer, a lone surrogate)")
        let location = Data(#"{"latitude":91,"longitude":0}"#.utf8)
        #expect(throws: MissiveError.self) { try LocationMessage(decoding: location) }
    }

    /// A refusal names the member it is about, an array's element by its index, and says what a value without
    /// a path may be.
    @Test func refusalReasonsNameTheMember() {
        func reason(_ json: String) -> String? {
            do {
                _ = try MissiveJSON.decoder.decode(ReasonProbe.self, from: Data(json.utf8))
                return nil
            } catch {
                return MissiveJSON.describe(error)
            }
        }
        #expect(reason(#"{"tags":["a",null]}"#) == "wrong type at 'tags.1': expected a string, found null")
        #expect(reason(#"{"tags":[],"mood":"angry"}"#)?.hasPrefix("invalid value at 'mood': ") == true)
        #expect(reason(#"{"tags":[],"level":256}"#)?.contains("a number out of range") == true)
        #expect(reason(#"{"tags":[]}"#) == nil)
    }

    /// JSONDecoder takes the first of two members with the same key; the fast path leaves such content to it.
    @Test func duplicateKeysFollowJSONDecoder() throws {
        let bytes = Array(#"{"content":"first","content":"second"}"#.utf8)
        #expect(bytes.withUnsafeBytes { try? MissiveJSONReader.decode(TextMessage.self, from: $0) } == nil)
        #expect(try TextMessage(decoding: Data(bytes)).content == (try JSONDecoder().decode(TextMessage.self, from: Data(bytes))).content)
        expectAgreement(PollShape.self, Array(#"{"question":"q","options":[],"voters":{"a":1,"a":2}}"#.utf8))
        expectAgreement(PollShape.self, Array("{\"question\":\"q\",\"options\":[],\"voters\":{\"e\u{301}\":1,\"\u{e9}\":2}}".utf8))
    }

    @Test func readerIsStrict() throws {
        func refuses(_ json: String) -> Bool {
            Array(json.utf8).withUnsafeBytes { bytes in
                var reader = MissiveJSONReader(bytes)
                do {
                    try reader.skipValue()
                    try reader.finish()
                    return false
                } catch {
                    return true
                }
            }
        }
        for json in [#"{"a":1,}"#, "[1,]", "01", "1.", ".5", "-", "+1", "\"\\x\"", "\"\\ud800\"", "\"\u{1}\"", "tru", "nul", "{\"a\"}", "{1:2}", "[1 2]", "1 2", "\u{feff}1", "'a'", "NaN"] {
            #expect(refuses(json), "\(json)")
        }
        for json in ["{}", "[]", " 1 ", "-0", "0.5e-3", "\"\\u00e9\\/\"", "\"\\ud83d\\udc4b\"", "[null,true,false,{\"a\":[]}]"] {
            #expect(!refuses(json), "\(json)")
        }
        #expect(!refuses(String(repeating: "[", count: 512) + String(repeating: "]", count: 512)))
        #expect(refuses(String(repeating: "[", count: 513) + String(repeating: "]", count: 513)))
        #expect(Array([0x22, 0xFF, 0x22]).withUnsafeBytes { bytes in var reader = MissiveJSONReader(bytes); return (try? reader.readString()) == nil })
    }

    @Test func writerWritesWhatJSONEncoderWrites() throws {
        var values = Values(random: SeededGenerator(seed: 99))
        for _ in 0..<2000 {
            let double = values.double()
            let float = values.float()
            let text = values.string()
            let key = values.string()
            let integer: Int64 = values.integer()
            let value: [String: [String: Double]] = [key: ["d": double]]
            #expect(try MissiveJSON.encode(value) == MissiveJSON.encoder.encode(value))
            #expect(try MissiveJSON.encode([float]) == MissiveJSON.encoder.encode([float]), "\(float)")
            #expect(try MissiveJSON.encode([text]) == MissiveJSON.encoder.encode([text]))
            #expect(try MissiveJSON.encode([integer]) == MissiveJSON.encoder.encode([integer]))
        }
        // A number JSON cannot hold: JSONEncoder's error.
        #expect(throws: EncodingError.self) { try MissiveJSON.encode([Double.nan]) }
    }
}

/// Content with an array, an enum and a small integer, for the wording of refusals.
private struct ReasonProbe: Codable {
    enum Mood: String, Codable { case happy }
    var tags: [String]
    var mood: Mood?
    var level: UInt8?
}
