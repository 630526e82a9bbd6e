import Foundation
import Missive
import MissiveConformance
import MissiveTestSupport
import Testing

/// Containers other than MS:Custom: declared by plugins (Swift and C) and by hosts, with string and integer
/// keys, their clash rules, and the reasons unknown messages give.
@Suite struct ContainerTests {
    static func matrix(_ content: String) -> Envelope { Fixtures.envelope("m.room.message", content) }

    @Test func aSwiftPluginsContainerDispatchesOnItsKey() throws {
        let registry = try Fixtures.sampleRegistry()
        #expect(registry.containers.map(\.objectName) == ["MS:Custom", "m.room.message"])
        #expect(registry.type(container: "m.room.message", value: "m.emote")?.objectName == "matrix:emote")
        #expect(registry.type(businessID: "m.emote") == nil)

        let text = registry.decode(Self.matrix(#"{"msgtype":"m.text","body":"Hi\nthere","m.mentions":{}}"#))
        #expect(text.content.objectName == "matrix:text")
        #expect(text.digest == "Hi there")
        #expect(text.content.businessID == "m.text")
        #expect(try text.reencoded().content.text == #"{"msgtype":"m.text","body":"Hi\nthere","m.mentions":{}}"#)
        #expect(try text.reencoded().objectName == "m.room.message")
        // The notice is kept but not counted, by its type's flag.
        #expect(registry.decode(Self.matrix(#"{"msgtype":"m.notice","body":"Build passed"}"#)).persistence == .persisted)
        // The type's own objectName works too.
        #expect(registry.decode(Fixtures.envelope("matrix:emote", #"{"msgtype":"m.emote","body":"waves"}"#)).digest == "* waves")
    }

    @Test(arguments: [
        (#"{"body":"no msgtype"}"#, "m.room.message content has no 'msgtype' member to dispatch on"),
        (#"{"msgtype":7,"body":"x"}"#, "m.room.message content's 'msgtype' is not a string"),
        (#"{"msgtype":"m.location","body":"Office"}"#, "no type is registered in m.room.message under msgtype 'm.location'"),
        ("[1]", "m.room.message content is not a JSON object, so it has no 'msgtype' to dispatch on"),
    ])
    func undispatchableContentIsUnknownWithAReasonNamingTheContainerAndKey(content: String, reason: String) throws {
        let message = try Fixtures.sampleRegistry().decode(Self.matrix(content))
        #expect(!message.isKnown)
        #expect(message.unknown?.reason.description == reason)
        #expect(try message.reencoded().content.text == content)
    }

    @Test func aCPluginsContainerDispatchesOnAnIntegerKey() throws {
        let result = MessageRegistry.discover(searchPath: Fixtures.searchPath(try Fixtures.stage(["IntegerContainer"])))
        #expect(result.rejections.isEmpty, "\(result.rejections)")
        let registry = result.registry
        #expect(registry.containers.last == MessageContainer(objectName: "call:signal", key: "businessID", keyKind: .integer))
        let invite = registry.decode(Fixtures.envelope("call:signal", #"{"inviter":"alice","businessID":1}"#))
        #expect(invite.content.objectName == "call:invite")
        #expect(invite.content.businessID == "1")
        #expect(registry.decode(Fixtures.envelope("call:signal", #"{"businessID":2}"#)).persistence == .persisted)
        for (content, problem) in [
            (#"{"businessID":"1"}"#, UnknownMessage.DispatchProblem.wrongKind(.integer)),
            (#"{"businessID":1.0}"#, .wrongKind(.integer)),
            (#"{"businessID":1e0}"#, .wrongKind(.integer)),
            (#"{"businessID":99999999999999999999}"#, .wrongKind(.integer)),
            (#"{"businessID":3}"#, .notRegistered("3")),
        ] {
            let message = registry.decode(Fixtures.envelope("call:signal", content))
            #expect(message.unknown?.reason == .notDispatched(container: "call:signal", key: "businessID", problem: problem), "\(content)")
        }
    }

    /// A host declares a container, and a plugin that declares the same one shares it; one that declares it
    /// with another key is refused, with its types under it.
    @Test func containersFollowTheClashRules() throws {
        struct Reaction: MessageType, Codable {
            static let objectName = "host:reaction"
            static let businessID: String? = "m.reaction"
            static let container: String? = "m.room.message"
            static let persistence = Persistence.persisted
            static var examples: [Reaction] { [Reaction(msgtype: "m.reaction", key: "👍")] }
            var msgtype: String
            var key: String
            var digest: String { key }
        }
        let folder = try Fixtures.stage(["MatrixBridge"])

        var shared = MessageRegistry.Builder()
        try shared.register(MessageContainer(objectName: "m.room.message", key: "msgtype"))
        try shared.register(Reaction.self)
        let discovery = shared.discoverPlugins(searchPath: Fixtures.searchPath(folder))
        #expect(discovery.rejections.isEmpty, "\(discovery.rejections)")
        let registry = shared.build()
        #expect(registry.decode(Self.matrix(#"{"msgtype":"m.reaction","key":"👍"}"#)).content.objectName == "host:reaction")
        #expect(registry.decode(Self.matrix(#"{"msgtype":"m.text","body":"hi"}"#)).content.objectName == "matrix:text")

        var rival = MessageRegistry.Builder()
        try rival.register(MessageContainer(objectName: "m.room.message", key: "type"))
        let refused = rival.discoverPlugins(searchPath: Fixtures.searchPath(folder)).rejections
        #expect(refused.count == 4, "\(refused)")
        #expect(refused.first?.message.contains("container m.room.message[msgtype: string] clashes with m.room.message[type: string], declared by the host application") == true)
        #expect(refused.allSatisfy { $0.code == .containerConflict })
        #expect(refused.dropFirst().allSatisfy { $0.message == "its container m.room.message was refused" })

        // A host type may not name a container nobody declared, nor take a value twice.
        var lone = MessageRegistry.Builder()
        #expect(throws: MissiveError.self) { try lone.register(Reaction.self) }
        #expect(throws: MissiveError.self) { try lone.register(MessageContainer(objectName: "MS:Other", key: "k")) }
        #expect(throws: MissiveError.self) { try lone.register(MessageContainer(objectName: "x:c", key: "a key")) }
        try lone.register(MessageContainer(objectName: "MS:Custom", key: "businessID"))  // the built-in one, again: no clash
    }

    /// What `missive install` and `missive check --against` judge: a container declared alike is shared, one
    /// declared with another key clashes, and a value clashes only within its own container.
    @Test func clashesWithInstalledPluginsCoverContainers() throws {
        let installed = InstalledPlugin.all(in: try Fixtures.stage(["MatrixBridge"]))
        func plugin(_ container: MessageContainer, _ type: PluginMetadata.TypeEntry) -> PluginMetadata {
            PluginMetadata(name: "MatrixExtras", version: "1.0.0", vendor: "Tests", abiMajor: 1, abiMinor: 1, containers: [container], types: [type])
        }
        let matrix = MessageContainer(objectName: "m.room.message", key: "msgtype")
        let location = PluginMetadata.TypeEntry(objectName: "matrix:location", businessID: "m.location", container: "m.room.message", persistenceValue: 3, isMedia: false)
        #expect(NameClashes.find(plugin(matrix, location), among: installed).isEmpty)

        let otherKey = NameClashes.find(plugin(MessageContainer(objectName: "m.room.message", key: "type"), location), among: installed)
        #expect(otherKey.count == 1)
        #expect(otherKey.first?.hasPrefix("container m.room.message[type: string] is declared as m.room.message[msgtype: string] by MatrixBridge 1.0.0") == true)

        var text = location
        text.businessID = "m.text"
        #expect(NameClashes.find(plugin(matrix, text), among: installed).first?.hasPrefix("value 'm.text' in container m.room.message is also declared by MatrixBridge") == true)
        // The same value under MS:Custom is another place.
        text.container = nil
        #expect(NameClashes.find(plugin(matrix, text), among: installed).isEmpty)
    }

    @Test func theCLIDecodesAContainerAndNamesItsKey() async throws {
        let input = [
            #"{"id":"a","conversationID":"c","senderID":"s","sentAt":1,"objectName":"m.room.message","content":{"msgtype":"m.emote","body":"waves"}}"#,
            #"{"id":"b","conversationID":"c","senderID":"s","sentAt":2,"objectName":"m.room.message","content":{"msgtype":"m.poll","body":"?"}}"#,
        ].joined(separator: "\n")
        let text = try await Fixtures.missive(["decode", "-"], input: input)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("#1 a  m.room.message  msgtype=m.emote  known as matrix:emote"))
        #expect(text.stdout.contains("reason:      no type is registered in m.room.message under msgtype 'm.poll'"))
        let json = try await Fixtures.missive(["decode", "-", "--format", "json"], input: input)
        let first = try CLITests.object(json.stdout.split(separator: "\n")[0])
        #expect(first["decodedAs"] as? String == "matrix:emote")
        #expect((first["container"] as? [String: Any])?["key"] as? String == "msgtype")
    }
}
