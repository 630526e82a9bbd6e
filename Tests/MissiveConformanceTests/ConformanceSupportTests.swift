import Foundation
@testable import MissiveConformance
import MissiveCore
import MissiveTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The parts the conformance checks are built from: comparing JSON values exactly, the small stack the input
/// checks run on, the trail that names a crash's input, the invalid contents of `memory.errors`, and what a
/// crash report keeps of a plugin's output.
@Suite struct ConformanceSupportTests {
    private func value(_ text: String) throws -> JSONValue { try #require(JSONValue(Array(text.utf8)), "\(text)") }

    @Test func numbersCompareAsTheDecimalsTheySpell() throws {
        for spelling in ["1", "1.0", "1e0", "10e-1", "0.1E1", "1.000"] {
            #expect(try value(spelling) == value("1"), "\(spelling)")
        }
        #expect(try value("0") == value("-0.0"))
        #expect(try value("3.14159265") != value("3.14159"))
        // Beyond 2^53 a Double would take both for one value.
        #expect(try value("9007199254740993") != value("9007199254740992"))
        #expect(try value("-2") != value("2"))
        #expect(JSONValue(Array("01".utf8)) == nil)
        #expect(JSONValue(Array("1.".utf8)) == nil)
    }

    @Test func objectsCompareByMembersAndStringsByTheirCharacters() throws {
        #expect(try value(#"{"a": 1, "b": [true, null]}"#) == value(#"{"b":[true,null],"a":1}"#))
        #expect(try value(#""\u00e9\n""#) == value("\"é\\n\""))
        #expect(try value(#"{"a": 1}"#) != value(#"{"a": 1, "b": 2}"#))
        #expect(JSONValue(Array(#"{"a": 1} x"#.utf8)) == nil)

        let example = try value(#"{"score": 3.14159265, "comment": "ok", "tags": [1, 2]}"#)
        #expect(example.difference(from: try value(#"{"comment": "ok", "score": 3.14159, "tags": [1, 2]}"#))
            == "content.score is 3.14159265 in the example and 3.14159 in the encoding")
        #expect(example.difference(from: try value(#"{"score": 3.14159265, "tags": [1, 2]}"#))
            == "content.comment is in the example and missing from the encoding")
        #expect(example.difference(from: try value(#"{"score": 3.14159265, "comment": "ok", "tags": [1, "2"]}"#))
            == "content.tags[1] is number 2 in the example and string \"2\" in the encoding")
        #expect(example.difference(from: try value(#"{"tags": [1, 2.0], "comment": "ok", "score": 314159265e-8}"#)) == nil)
    }

    @Test func theInputChecksRunOnA256KiBStack() {
        // pthread_getattr_np is a GNU extension that Swift's Glibc module leaves out; RTLD_DEFAULT is a null handle.
        typealias GetAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        guard let symbol = dlsym(nil, "pthread_getattr_np") else {
            Issue.record("no pthread_getattr_np")
            return
        }
        let getAttributes = unsafeBitCast(symbol, to: GetAttributes.self)
        let size = SmallStack.run { () -> Int in
            let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
            defer { attributes.deallocate() }
            guard getAttributes(pthread_self(), attributes) == 0 else { return 0 }
            defer { pthread_attr_destroy(attributes) }
            var size = 0
            pthread_attr_getstacksize(attributes, &size)
            return size
        }
        #expect(size == 256 << 10)
    }

    @Test func theTrailKeepsTheLastInputNoted() throws {
        let path = Fixtures.scratchPath("trail")
        defer { try? FileManager.default.removeItem(atPath: path) }
        InputTrail.open(at: path)
        InputTrail.note("fixture:x, input 1 of 2: \"{}\"")
        InputTrail.note("fixture:x, input 2 of 2: \"[]\"")
        #expect(InputTrail.read(at: path) == "fixture:x, input 2 of 2: \"[]\"")
        InputTrail.note(String(repeating: "é", count: 4_000))
        #expect(InputTrail.read(at: path)?.utf8.count ?? 0 <= InputTrail.capacity - 4)
        InputTrail.clear()
        #expect(InputTrail.read(at: path) == nil)
    }

    @Test func invalidContentsRemoveEachMemberOrGiveItAValueOfAnotherKind() {
        let contents = Set(ResourceChecks.invalidContents(Array(#"{"score":5,"comment":"ok"}"#.utf8)).map { String(decoding: $0, as: UTF8.self) })
        #expect(contents.contains(#"{"comment":"ok"}"#))
        #expect(contents.contains(#"{"score":5}"#))
        #expect(contents.contains(#"{"score":"missive","comment":"ok"}"#))
        #expect(contents.contains(#"{"score":5,"comment":-1.5}"#))
        #expect(contents.contains(#"{"score":5,"comment":{}}"#))
        #expect(!contents.contains(#"{"score":-1.5,"comment":"ok"}"#), "a number is not replaced by a number")
        // Two members, each removed once and given five other kinds.
        #expect(contents.count == 12)
    }

    @Test func aCrashReportKeepsTheLastLinesOfOutputCleaned() {
        let lines = (1...30).map { "line \($0)" }.joined(separator: "\n")
        let panic = "\nthread 'main' panicked at src/lib.rs:42:5:\n\u{1B}[31mindex out of bounds\u{1B}[0m\u{7}\n"
        let result = ChildProcess.Result(termination: .signal(SIGABRT), outputTail: Data((lines + panic).utf8))
        let output = result.reportedOutput
        #expect(output.count == 20)
        #expect(output.last == "index out of bounds")
        #expect(output[output.count - 2] == "thread 'main' panicked at src/lib.rs:42:5:")
        #expect(output.first == "line 13")
        // At most 2 KiB of output are read.
        let long = ChildProcess.Result(termination: .exit(1), outputTail: Data(String(repeating: "x", count: 4_000).utf8))
        #expect(long.reportedOutput.count == 1)
        #expect(long.reportedOutput[0].count == 300)
    }
}
