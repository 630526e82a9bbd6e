import Foundation
@testable import MissiveConformance
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The parts the conformance checks are built from: comparing JSON values exactly, the small stack the input
/// checks run on, and the invalid contents of `memory.errors`.
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
}
