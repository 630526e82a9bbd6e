import Foundation
import Missive
import MissiveTestSupport
import Testing

/// A plugin whose container declaration clashes with a registered container loses that container and the
/// types declared under it, nothing more: its other types and their actions register and work, whether it
/// loads at startup or on first use. `BrokenConflictingContainer` declares `MS:Custom` again with another key;
/// its other type has a business identifier, so it is in the built-in `MS:Custom`, which the refused declaration
/// does not change (before, it was refused too, and its action with it: the whole plugin).
@Suite struct ContainerRefusalTests {
    static let note = Array(#"{"fixture":true}"#.utf8)
    static let poll = Array(#"{"kind":"poll","fixture":true}"#.utf8)

    static func envelope(_ objectName: String, _ content: [UInt8]) -> Envelope {
        Envelope(id: "m1", conversationID: "c1", senderID: "ana", sentAt: 0, objectName: objectName, content: content)
    }

    @Test(arguments: [PluginLoading.eager, .lazy])
    func aConflictingContainerCostsOnlyTheTypesUnderIt(loading: PluginLoading) throws {
        let folder = try Fixtures.stage(["BrokenConflictingContainer"])
        let file = folder + "/libBrokenConflictingContainer.so"
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(folder), loading: loading)

        // Refused: the declaration of MS:Custom, naming the file, the container and the clash, and the one type under it.
        #expect(result.rejections.count == 2, "\(result.rejections)")
        let container = try #require(result.rejections.first { $0.objectName == "MS:Custom" })
        #expect(container.code == .containerConflict)
        #expect(container.file == file)
        #expect(container.message.contains("container MS:Custom[kind: string] clashes with MS:Custom[businessID: string]"), "\(container.message)")
        let type = try #require(result.rejections.first { $0.objectName == "fixture:conflict-poll" })
        #expect(type.code == .containerConflict && type.file == file)
        #expect(type.message.contains("its container MS:Custom was refused"), "\(type.message)")
        #expect(!result.rejections.contains { $0.objectName == "fixture:conflict-note" || $0.action != nil })

        // The other type decodes, and its action is offered and runs.
        let registry = result.registry
        let note = registry.decode(Self.envelope("fixture:conflict-note", Self.note))
        #expect(note.isKnown)
        #expect(note.content.digest == "[fixture]")
        #expect(registry.actions(for: note).map(\.id) == ["pin"])
        let custom = registry.decode(Self.envelope("MS:Custom", Array(#"{"businessID":"note","fixture":true}"#.utf8)))
        #expect(custom.content.objectName == "fixture:conflict-note")
        guard case .edited(let pinned) = try registry.perform("pin", on: note) else {
            Issue.record("pin gave a URL")
            return
        }
        #expect(String(decoding: pinned.envelope.content, as: UTF8.self) == #"{"pinned":true,"fixture":true}"#)

        // The refused type's messages are unknown, kept whole; MS:Custom is still the built-in container.
        let poll = registry.decode(Self.envelope("fixture:conflict-poll", Self.poll))
        #expect(!poll.isKnown)
        #expect(poll.envelope.content == Self.poll)
        #expect(registry.decode(Self.envelope("MS:Custom", Array(#"{"businessID":"x.unknown","a":1}"#.utf8))).content.objectName == "MS:Custom")
    }
}
