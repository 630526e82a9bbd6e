@testable import Missive
import Testing

/// Each worker frame read back as written, through the one type both the host and the worker use: a body that does
/// not parse, or that says more than it holds, is refused rather than misread.
@Suite struct WorkerFrameTests {
    /// The body of the one frame `writer` holds, after its length, kind and id.
    static func body(_ writer: WireWriter, kind: WorkerWire.Kind, id: UInt64) -> WireReader {
        let bytes = writer.bytes
        #expect(Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24 == bytes.count - 4)
        #expect(bytes[4] == kind.rawValue)
        var header = WireReader(bytes, from: 5, to: 13)
        #expect((try? header.integer(UInt64.self)) == id)
        return WireReader(bytes, from: 13, to: bytes.count)
    }

    @Test func aDecodeRequestAndItsAnswersReadBackAsWritten() throws {
        var writer = WireWriter()
        let items: [(objectName: String, content: [UInt8])] = [("a:b", Array("{}".utf8)), ("c:d", Array(#"{"x":"é"}"#.utf8)), ("e:f", [])]
        WorkerWire.DecodeRequest.write(id: 7, flags: [.view], items: items, indices: [2, 0], into: &writer)
        var reader = Self.body(writer, kind: .decode, id: 7)
        let request = try WorkerWire.DecodeRequest.read(&reader)
        #expect(request.flags == [.view] && request.items.map(\.objectName) == ["e:f", "a:b"] && request.items.map { Array($0.content) } == [[], Array("{}".utf8)])
        #expect(reader.isAtEnd)

        let parts = IsolatedParts(
            digest: "[Poll] Lunch?", pushContent: nil, searchableWords: ["lunch", "é"],
            media: MediaReference(remoteURL: "https://x/y.png", localPath: nil, mimeType: "image/png", sizeBytes: nil),
            view: .success(Array("{\"type\":\"text\"}".utf8)), encoding: .failure(MissiveError(.pluginFailure, "no encoding", action: nil)))
        for result in [Result<IsolatedParts, MissiveError>.success(parts), .failure(MissiveError(.malformedContent, "bad", objectName: nil))] {
            var answerWriter = WireWriter()
            WorkerWire.DecodeAnswer(position: 1, result: result).write(id: 7, into: &answerWriter)
            var answerReader = Self.body(answerWriter, kind: .answer, id: 7)
            let answer = try WorkerWire.DecodeAnswer.read(&answerReader, file: "/p/lib.so", objectName: "a:b")
            #expect(answer.position == 1 && answerReader.isAtEnd)
            switch (answer.result, result) {
            case (.success(let read), .success(let written)):
                #expect(read.digest == written.digest && read.pushContent == nil && read.searchableWords == written.searchableWords)
                #expect(read.media == written.media)
                #expect(try read.view?.get() == Array("{\"type\":\"text\"}".utf8))
                guard case .failure(let error)? = read.encoding else { Issue.record("the encoding's failure is kept"); continue }
                // The host names the file and, when the worker did not, the message's type.
                #expect(error.message == "no encoding" && error.file == "/p/lib.so" && error.objectName == "a:b")
            case (.failure(let read), .failure):
                #expect(read.code == .malformedContent && read.message == "bad" && read.objectName == "a:b")
            default:
                Issue.record("\(answer.result) read back as another case")
            }
        }
    }

    @Test func actionRequestsAndAnswersReadBackAsWritten() throws {
        for target in [WorkerWire.ActionRequest.Target.message(objectName: "demo:poll", content: Array("{}".utf8)[...]), .composer] {
            var writer = WireWriter()
            WorkerWire.ActionRequest(target: target, actionID: "vote", arguments: "[1,\"bob\"]").write(id: 3, into: &writer)
            let kind: WorkerWire.Kind = if case .composer = target { .compose } else { .action }
            var reader = Self.body(writer, kind: kind, id: 3)
            let request = try WorkerWire.ActionRequest.read(&reader, kind: kind)
            #expect(request.actionID == "vote" && request.arguments == "[1,\"bob\"]" && reader.isAtEnd)
            if case .message(let objectName, let content) = request.target {
                #expect(objectName == "demo:poll" && Array(content) == Array("{}".utf8))
            } else {
                #expect(kind == .compose)
            }
        }
        var writer = WireWriter()
        WorkerWire.ActionAnswer(result: .success(ActionFunctionOutput((3, Array("edit".utf8), "why")))).write(id: 4, into: &writer)
        var reader = Self.body(writer, kind: .actionAnswer, id: 4)
        #expect(try WorkerWire.ActionAnswer.read(&reader, file: "/p").result.get() == ActionFunctionOutput((3, Array("edit".utf8), "why")))
    }

    @Test func readyAndAttemptsReadBackAndAnAttemptsReportOverItsKeepIsCounted() throws {
        var writer = WireWriter()
        let loaded = WorkerWire.ReadyFrame.Loaded(actions: [(.composer, "demo:poll", "create"), (.message, "demo:poll", "vote")], rejections: [])
        WorkerWire.ReadyFrame(result: .success(loaded)).write(into: &writer)
        var reader = Self.body(writer, kind: .ready, id: 0)
        let ready = try WorkerWire.ReadyFrame.read(&reader, file: "/p").result.get()
        #expect(ready.actions.map(\.id) == ["create", "vote"] && ready.actions.map(\.kind) == [.composer, .message] && reader.isAtEnd)

        // 100 paths: the host keeps 64 and counts the other 36 with those the worker itself did not keep.
        var attemptsWriter = WireWriter()
        WorkerWire.AttemptsFrame(paths: (0..<100).map { "/home/\($0)\u{1B}" }, notKept: 5).write(into: &attemptsWriter)
        var attemptsReader = Self.body(attemptsWriter, kind: .attempts, id: 0)
        let attempts = try WorkerWire.AttemptsFrame.read(&attemptsReader)
        #expect(attempts.paths.count == 64 && attempts.notKept == 41 && attemptsReader.isAtEnd)
        #expect(!attempts.paths[0].contains("\u{1B}"))
    }

    @Test func aBodyCutShortIsRefused() {
        var writer = WireWriter()
        WorkerWire.DecodeRequest.write(id: 1, flags: [], items: [("a:b", Array(repeating: 0x41, count: 40))], indices: [0], into: &writer)
        let bytes = writer.bytes
        var reader = WireReader(bytes, from: 13, to: bytes.count - 1)
        #expect(throws: WorkerWire.Malformed.self) { try WorkerWire.DecodeRequest.read(&reader) }
    }
}
