import MissiveCore
import Testing

/// ``JSONReaderDecoder``: what `JSONDecoder` reads, by the project's JSON rules, with ``RawJSON`` kept as written.
@Suite struct JSONReaderDecoderTests {
    struct Inner: Codable, Equatable {
        var flag: Bool
        var words: [String]
    }

    struct Sample: Codable, Equatable {
        var text: String
        var missing: String?
        var count: Int64
        var small: UInt8
        var rank: Double
        var inner: Inner?
        var raw: RawJSON
        var list: [Int?]
    }

    @Test func readsWhatTheEncoderWritesAndKeepsRawJSONAsWritten() throws {
        let raw = RawJSON(Array(#"{"b" :[1, 2.50e1 ],"a":"\u0041"}"#.utf8))
        let value = Sample(
            text: "a\"\\\n\t\u{1}é😀", missing: nil, count: -5, small: 200, rank: -1.25, inner: Inner(flag: true, words: ["x", ""]), raw: raw, list: [1, nil])
        let decoded = try JSONReaderDecoder.decode(Sample.self, from: try JSONWriterEncoder.encode(value))
        #expect(decoded == value)
        #expect(decoded.raw.bytes == raw.bytes)
    }

    @Test func aRepeatedKeyIsRefusedAndUnknownKeysAreSkipped() throws {
        let decoded = try JSONReaderDecoder.decode(Inner.self, from: Array(#"{"flag":true,"new":{"x":[1],"x":2},"words":[]}"#.utf8))
        #expect(decoded == Inner(flag: true, words: []))
        // Readers differ on which of two values wins, so neither is taken: the error names the member.
        do {
            _ = try JSONReaderDecoder.decode([Inner].self, from: Array(#"[{"flag":true,"words":[],"flag":false}]"#.utf8))
            Issue.record("a repeated member was read")
        } catch {
            #expect(JSONReaderDecoder.describe(error).contains("'flag' is given twice"), "\(JSONReaderDecoder.describe(error))")
            #expect(JSONReaderDecoder.describe(error).contains("[0]"), "\(JSONReaderDecoder.describe(error))")
        }
    }

    @Test func integersAreWholeNumbersTheTypeHolds() throws {
        #expect(try JSONReaderDecoder.decode([Int64].self, from: Array("[2, 2.0, 2e0, -9223372036854775808]".utf8)) == [2, 2, 2, Int64.min])
        for bad in ["[2.5]", "[256]", "[-1]", "[\"2\"]"] {
            #expect(throws: DecodingError.self, "\(bad)") { try JSONReaderDecoder.decode([UInt8].self, from: Array(bad.utf8)) }
        }
    }

    @Test func errorsNameTheMemberAtFault() {
        func reason(_ json: String) -> String {
            do {
                _ = try JSONReaderDecoder.decode([Sample].self, from: Array(json.utf8))
                return "read"
            } catch {
                return JSONReaderDecoder.describe(error)
            }
        }
        #expect(reason(#"[{"text":1}]"#) == "[0].text: expected a string, found a number")
        #expect(reason(#"[{"text":"t","count":1}]"#) == "[0].small is missing")
        #expect(reason(#"[{"text":"t","count":1,"small":1,"rank":1,"inner":{"flag":true,"words":[1]},"raw":0,"list":[]}]"#)
            == "[0].inner.words[0]: expected a string, found a number")
        #expect(reason(#"[{"text":"\ud800"}]"#).hasPrefix("[0].text: a \\u escape of a lone surrogate"), "\(reason(#"[{"text":"\ud800"}]"#))")
        #expect(reason("[1,]").hasPrefix("the document: not JSON: "))
    }
}
