import Foundation
import Missive
import MissiveTestSupport
import Testing

/// The envelope is parsed strictly, errors say what is wrong, and nothing unknown is dropped.
@Suite struct EnvelopeTests {
    static let minimal = #"{"id":"m1","conversationID":"c","senderID":"s","sentAt":1700000000000,"objectName":"MS:Text","content":{"content":"hi"}}"#

    @Test func parsesAndWritesTheDocumentedFields() throws {
        let line = #"{"id":"m1","conversationID":"c","senderID":"s","sentAt":-5,"objectName":"MS:Text","content":{"content":"hi"},"parentID":"m0","persistence":3,"fallbackText":"hi","pushContent":"hi!","x-future":{"a":[1]}}"#
        let envelope = try Envelope(parsing: Array(line.utf8))
        #expect(envelope.sentAt == -5)
        #expect(envelope.parentID == "m0")
        #expect(envelope.persistence == .counted)
        #expect(envelope.pushContent == "hi!")
        #expect(envelope.additionalFields == [Envelope.AdditionalField(name: "x-future", rawValue: Array(#"{"a":[1]}"#.utf8))])
        #expect(envelope.encoded().text == line)
    }

    @Test func decodesEscapedStrings() throws {
        let line = #"{"id":"a\"b\\c\u00e9\ud83d\ude00\n","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":"x"}"#
        let envelope = try Envelope(parsing: Array(line.utf8))
        #expect(envelope.id == "a\"b\\cé😀\n")
        #expect(try Envelope(parsing: envelope.encoded()) == envelope)
    }

    @Test(arguments: [
        ("", "expected a JSON object"),
        ("[1]", "expected a JSON object"),
        (#"{"id":"m1""#, "unexpected end of input"),
        (#"{"id" "m1"}"#, "expected ':'"),
        (#"{"id":"m1","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text"}"#, "missing required field 'content'"),
        (#"{"conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{}}"#, "missing required field 'id'"),
        (#"{"id":7,"conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{}}"#, "field 'id' must be a string"),
        (#"{"id":"m","conversationID":"c","senderID":"s","sentAt":1.5,"objectName":"MS:Text","content":{}}"#, "field 'sentAt' must be an integer"),
        (#"{"id":"m","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{},"persistence":2}"#, "field 'persistence' must be one of 0, 1, 3 and 16"),
        (#"{"id":"m","id":"n","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{}}"#, "field 'id' appears twice"),
        (#"{"id":"m","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{"a":}}"#, "unexpected character"),
        (#"{"id":"m","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{}} x"#, "unexpected data after the JSON object"),
        (#"{"id":"m","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":"tab"# + "\t" + #"in string"}"#, "control character in string"),
    ])
    func rejectsMalformedEnvelopesWithAReason(line: String, reason: String) {
        #expect {
            try Envelope(parsing: Array(line.utf8))
        } throws: { error in
            let error = error as! MissiveError
            return error.code == .malformedEnvelope && error.message.contains(reason)
        }
    }

    @Test func keysWithEscapesNameTheSameFields() throws {
        // Keys are matched as bytes; one spelled with escapes is decoded and matched as before.
        let line = #"{"\u0069d":"m1","conversationID":"c","sender\u0049D":"s","sentAt":1,"objectName":"MS:Text","content":{},"x\u00e9":1}"#
        let envelope = try Envelope(parsing: Array(line.utf8))
        #expect(envelope.id == "m1")
        #expect(envelope.senderID == "s")
        #expect(envelope.additionalFields.map(\.name) == ["xé"])
        #expect {
            try Envelope(parsing: Array(#"{"id":"m","\u0069d":"n","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{}}"#.utf8))
        } throws: { error in
            (error as! MissiveError).message.contains("field 'id' appears twice")
        }
    }

    @Test func invalidUTF8IsReportedBeforeAnyOtherProblem() {
        // UTF-8 is validated while strings are scanned; a line that also breaks another rule, before or after
        // the bad byte, or breaks only the UTF-8 rule outside a string, is still reported as invalid UTF-8.
        for line in [
            Array(#"{"id":7,"x":""#.utf8) + [0xFF] + Array(#""}"#.utf8),
            Array(#"{"id":"m","#.utf8) + [0xC0, 0xAF] + Array(#":1}"#.utf8),
            Array(#"{"id":"m"}"#.utf8) + [0xED, 0xA0, 0x80],
        ] {
            #expect {
                try Envelope(parsing: line)
            } throws: { error in
                (error as! MissiveError).message.contains("envelope is not valid UTF-8")
            }
        }
    }

    @Test func rejectsInvalidUTF8AndDeepNestingWithoutCrashing() {
        var invalid = Array(Self.minimal.utf8)
        invalid[invalid.count - 5] = 0xFF
        #expect(throws: MissiveError.self) { try Envelope(parsing: invalid) }

        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let line = #"{"id":"m","conversationID":"c","senderID":"s","sentAt":1,"objectName":"x:y","content":"# + deep + "}"
        #expect {
            try Envelope(parsing: Array(line.utf8))
        } throws: { error in
            (error as! MissiveError).message.contains("nested more than")
        }
    }

    @Test(arguments: [
        ([0xC0, 0xAF], false), ([0xED, 0xA0, 0x80], false), ([0xF4, 0x90, 0x80, 0x80], false), ([0xE2, 0x82], false),
        ([0xF0, 0x9F, 0x98, 0x80], true), ([0xC3, 0xA9], true),
    ] as [([UInt8], Bool)])
    func utf8IsValidatedStrictly(bytes: [UInt8], valid: Bool) throws {
        let line = Array(#"{"id":"m","conversationID":"c","senderID":"s","sentAt":1,"objectName":"MS:Text","content":{"content":""#.utf8)
            + bytes + Array(#""}}"#.utf8)
        if valid {
            #expect(try Envelope(parsing: line).content == Array(#"{"content":""#.utf8) + bytes + Array(#""}"#.utf8))
        } else {
            #expect(throws: MissiveError.self) { try Envelope(parsing: line) }
        }
    }

    @Test func registryReportsMalformedLines() throws {
        let registry = MessageRegistry.Builder().build()
        #expect(throws: MissiveError.self) { try registry.decode(line: Array("not json".utf8)) }
        #expect(try registry.decode(line: Array(Self.minimal.utf8)).digest == "hi")
    }
}
