import Foundation
@testable import MissiveCore
import Testing

/// The JSON layer's decisions that matter, pinned through each front end: the range scanner (the envelope's),
/// the pull reader (the generated coding's), the value tree (views, actions, the checker) and the writer.
@Suite struct JSONLayerTests {
    private func scans(_ text: String, validatingUTF8: Bool = true) -> Bool {
        Array(text.utf8).withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, validatingUTF8: validatingUTF8)
            return (try? scanner.scanMemberRanges { _, _, _, _ in }) != nil
        }
    }

    private func pulls(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { bytes in
            var reader = MissiveJSONReader(bytes)
            return (try? reader.skipValue()).flatMap { try? reader.finish() } != nil
        }
    }

    @Test func theEnvelopeScanRefusesWhatIsNotOneObject() {
        for text in ["", "[1]", "1", #"{"a":1"#, #"{"a" 1}"#, #"{"a":1,}"#, #"{"a":1} x"#, #"{"a":01}"#, #"{"a":1.}"#,
                     #"{"a":"x"# + "\t" + #""}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":tru}"#, "\u{FEFF}{}", #"{a:1}"#] {
            #expect(!scans(text), "\(text.debugDescription)")
        }
        for text in ["{}", " { \"a\" : [1, -0.5e+3, true, null, {}] } ", #"{"a":"\u00e9\/"}"#] {
            #expect(scans(text), "\(text.debugDescription)")
        }
    }

    @Test func loneSurrogatesAreAcceptedByTheScanAndRefusedOrRepairedWhenDecoded() throws {
        let text = #"{"id":"a\ud800b","k\udc00":1}"#
        // The scan checks syntax only: the content's decoder judges a lone surrogate.
        #expect(scans(text))
        // The envelope's fields repair it.
        let bytes = Array(text.utf8)
        let fields = bytes.withUnsafeBufferPointer { buffer -> [String] in
            var scanner = JSONScanner(buffer, validatingUTF8: true)
            let reader = JSONValueReader(buffer)
            var found: [String] = []
            try? scanner.scanMemberRanges { key, _, value, _ in
                found.append(reader.decodeString(key))
                if let string = reader.stringValue(value) { found.append(string) }
            }
            return found
        }
        #expect(fields == ["id", "a\u{FFFD}b", "k\u{FFFD}"])
        // The pull reader, actions and the checker refuse it; views repair it.
        #expect(!pulls(#""\ud800""#))
        #expect(!pulls(#""\udc00\ud800""#))
        #expect(pulls(#""\ud83d\ude00""#))
        #expect(throws: MissiveJSONError.self) { try JSONValue.parse(bytes) }
        #expect(JSONValue(Array(#"["\ud800"]"#.utf8)) == nil)
        #expect(try JSONValue.parse(Array(#""\ud800\u0041""#.utf8), loneSurrogates: .replace) == .string("\u{FFFD}A"))
        #expect(try JSONValue.parse(Array(#""\ud83d\ude00""#.utf8)) == .string("😀"))
        let error = try #require(throws: MissiveJSONError.self) { try JSONValue.parse(Array(#""x\ud800""#.utf8)) }
        #expect(error.message.contains("lone surrogate"))
    }

    @Test func invalidUTF8IsRefusedUnlessOnlySyntaxIsChecked() {
        for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            let text = String(decoding: Array(#"{"a":""#.utf8), as: UTF8.self)
            let bytes = Array(text.utf8) + bad + Array(#""}"#.utf8)
            let checked = bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer, validatingUTF8: true)
                return (try? scanner.scanMemberRanges { _, _, _, _ in }) != nil
            }
            let syntaxOnly = bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer, validatingUTF8: false)
                return (try? scanner.scanMemberRanges { _, _, _, _ in }) != nil
            }
            #expect(!checked && syntaxOnly, "\(bad)")
            #expect((try? JSONValue.parse(bytes)) == nil, "\(bad)")
        }
    }

    @Test func oneDepthLimitAndTheLowerOnesFrontEndsAskFor() {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        #expect(MissiveJSONReader.maxDepth == 512)
        #expect(JSONScanner.maxDepth == MissiveJSONReader.maxDepth)
        #expect(pulls(nested(512)))
        #expect(!pulls(nested(513)))
        #expect(JSONScanner.problem(in: Array(nested(512).utf8)) == nil)
        #expect(JSONScanner.problem(in: Array(nested(513).utf8))?.message.contains("nested more than 512") == true)
        // The envelope's object is the first level.
        #expect(scans(#"{"c":"# + nested(511) + "}"))
        #expect(!scans(#"{"c":"# + nested(512) + "}"))
        #expect((try? JSONValue.parse(Array(nested(16).utf8), maxDepth: 16)) != nil)
        #expect((try? JSONValue.parse(Array(nested(17).utf8), maxDepth: 16)) == nil)
        #expect((try? JSONValue.parse(Array(nested(512).utf8), maxDepth: 10_000)) != nil)
        #expect((try? JSONValue.parse(Array(nested(513).utf8), maxDepth: 10_000)) == nil)
    }

    @Test func numberForms() throws {
        for text in ["0", "-0", "1", "-1", "0.5", "1e5", "1E+5", "1e-5", "-0.0e-0", "123456789012345678901234567890"] {
            #expect(pulls(text), "\(text)")
            #expect((try? JSONValue.parse(Array(text.utf8))) != nil, "\(text)")
            // Skipping, alone and inside a container, accepts the same numbers as reading.
            #expect(JSONScanner.problem(in: Array(text.utf8)) == nil, "\(text)")
            #expect(JSONScanner.problem(in: Array("[\(text),{\"n\":\(text)}]".utf8)) == nil, "\(text)")
        }
        for text in ["01", "-", "1.", ".5", "+1", "1e", "1e+", "0x1", "NaN", "Infinity", "1.5.2", "--1"] {
            #expect(!pulls(text), "\(text)")
            #expect((try? JSONValue.parse(Array(text.utf8))) == nil, "\(text)")
            #expect(JSONScanner.problem(in: Array(text.utf8)) != nil, "\(text)")
            #expect(JSONScanner.problem(in: Array("[\(text)]".utf8)) != nil, "\(text)")
        }
        // Integers: range-checked, no fraction or exponent.
        let int64 = Array("[9223372036854775807,-9223372036854775808,9223372036854775808,1.0,1e0]".utf8).withUnsafeBufferPointer { buffer -> [Int64?] in
            let reader = JSONValueReader(buffer)
            return [1..<20, 21..<41, 42..<61, 62..<65, 66..<69].map { reader.decodeInt64($0) }
        }
        #expect(int64 == [Int64.max, Int64.min, nil, nil, nil])
        // Values compare as decimals; the spelling is kept.
        #expect(try JSONValue.parse(Array("10e-1".utf8)) == JSONValue.parse(Array("1".utf8)))
        #expect(try JSONValue.parse(Array("9007199254740993".utf8)) != JSONValue.parse(Array("9007199254740992".utf8)))
        #expect(try JSONValue.parse(Array(#"[1.50,{"b":2,"a":"\u00e9"}]"#.utf8)).serialized == #"[1.50,{"b":2,"a":"é"}]"#)
    }

    @Test func theWriterEscapesAsJSONEncoderOrDisplaySafe() throws {
        let text = "q\"b\\s/\u{8}\u{C}\n\r\t\u{1}\u{7F}\u{85}\u{2028}\u{202E}é😀"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(MissiveJSONWriter.quoted(text) == Array(try encoder.encode(text)))
        #expect(String(decoding: MissiveJSONWriter.quoted(text, escaping: .displaySafe), as: UTF8.self)
            == #""q\"b\\s/\b\f\n\r\t\u0001\u007f\u0085\u2028\u202eé😀""#)
        // Raw JSON is spliced unchanged, or display-safe with the same value.
        var plain = MissiveJSONWriter()
        plain.raw(Array("[\"\u{2029}\"]".utf8))
        #expect(plain.bytes == Array("[\"\u{2029}\"]".utf8))
        var safe = MissiveJSONWriter(escaping: .displaySafe)
        safe.raw(Array("[\"\u{2029}\"]\n".utf8))
        #expect(String(decoding: safe.bytes, as: UTF8.self) == "[\"\\u2029\"]\n")
    }

    @Test func theWriterSeparatesWhatTheCLIWrites() {
        var json = MissiveJSONWriter()
        json.beginObject()
        json.key("list")
        json.beginArray()
        json.beginObject()
        json.field("a", 1)
        json.field("b", nil)
        json.endObject()
        json.beginObject()
        json.field("c", true)
        json.endObject()
        json.strings(["x", "y"])
        json.raw(Array("{}".utf8))
        json.integer(-5)
        json.null()
        json.endArray()
        json.key("z")
        json.string("é")
        json.endObject()
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"{"list":[{"a":1,"b":null},{"c":true},["x","y"],{},-5,null],"z":"é"}"#)
    }
}
