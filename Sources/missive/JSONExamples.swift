import ArgumentParser
import Missive
import MissiveCommandLine
import MissiveStore
import MissiveWire

/// Every ``CLIJSON`` type: the outputs of `--format json` and the shapes they share.
enum CLIJSONCatalog {
    static let all: [any CLIJSON.Type] = [
        PersistenceJSON.self, ContainerJSON.self, RejectionJSON.self, PluginJSON.self, MediaJSON.self, PublicKeyJSON.self, ActionJSON.self,
        StoredMessageJSON.self, CrashJSON.self, BlacklistedJSON.self,
        ListJSON.self, InspectJSON.self, DecodeJSON.self, DecodeErrorJSON.self, ActionsJSON.self, ActEditJSON.self, ActURLJSON.self, ComposeJSON.self,
        ActionErrorJSON.self, KeygenJSON.self, SignJSON.self, VerifyJSON.self, QuarantineListJSON.self, QuarantineClearJSON.self,
        StoreErrorJSON.self, StoreIngestJSON.self, StoreConversationsJSON.self, StoreShowJSON.self, StoreSearchJSON.self, StoreReadJSON.self,
        StoreDeleteJSON.self, StoreRedecodeJSON.self, StoreCheckJSON.self, StoreMembersJSON.self, StoreChangeJSON.self, StoreMigrateJSON.self,
    ]
}

extension MissiveCommand {
    /// `missive json-examples`: one object holding the ``CLIJSON/example`` of every output type and shared shape,
    /// by the name docs/CLI-JSON.md documents it under, for the test that holds the two together.
    struct JSONExamples: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "json-examples", abstract: "Print an example of every JSON output, with every field (for the documentation's test).",
            shouldDisplay: false)

        func run() throws {
            var writer = MissiveJSONWriter()
            writer.beginObject()
            for type in CLIJSONCatalog.all {
                writer.key(type.documentedAs)
                try JSONWriterEncoder.encode(type.example, into: &writer)
            }
            writer.endObject()
            Console.out(bytes: writer.bytes)
        }
    }
}

/// JSON received, which docs/CLI-JSON.md writes as `"$json"`.
private let received = RawJSON(Array(#""$json""#.utf8))

extension PersistenceJSON { static let example = PersistenceJSON(name: "counted", value: 3) }

extension ContainerJSON { static let example = ContainerJSON(objectName: "m.room.message", key: "msgtype", keyKind: "string") }

extension RejectionJSON {
    static let example = RejectionJSON(file: "/p/libX.so", objectName: "x:y", action: "vote", code: "invalid-action", reason: "why")
}

extension PluginJSON {
    static let example = PluginJSON(name: "X", version: "1.0.0", vendor: "V", abi: "1.0", abiVersion: "1.0", file: "/p/libX.so")
}

extension MediaJSON {
    static let example = MediaJSON(remoteURL: "https://example.com/a.jpg", localPath: "/tmp/a.jpg", mimeType: "image/jpeg", sizeBytes: 1)
}

extension PublicKeyJSON { static let example = PublicKeyJSON(fingerprint: "SHA256:00", publicKey: "AA==", comment: "me") }

extension ActionJSON {
    static let example = ActionJSON(
        kind: "composer", id: "x.create", objectName: "x:y", title: "T", icon: "i", priority: 1, yields: "content", signature: "int32(sink out)",
        parameters: [.init(name: "score", type: "int32", cType: "int32_t")], plugin: .example)
}

extension StoredMessageJSON {
    static let example = StoredMessageJSON(
        id: "m1", conversationID: "c", senderID: "s", sentAt: 1, objectName: "MS:Text", businessID: "b", known: true, digest: "d",
        persistence: .counted, countsAsUnread: true, searchableWords: ["w"], parentID: "m0", threadRootID: "m0", replyCount: 1, reason: "r",
        envelope: received.bytes)
}

extension CrashJSON {
    static let example = CrashJSON(
        file: "/p/libX.so", objectName: "x:y", operation: "decode", signal: 6, date: "2026-01-01T00:00:00Z", quarantined: true, reason: "r")
}

extension BlacklistedJSON { static let example = BlacklistedJSON(file: "/p/libX.so", reason: "r") }

extension ListJSON {
    static let example = ListJSON(
        types: [.init(
            objectName: "x:y", businessID: "b", container: "MS:Custom", dispatchesOn: .example, persistence: .example, media: false, origin: "plugin",
            plugin: .example, isolated: false)],
        plugins: [.example], isolatedPlugins: [.example], workerConfinement: PluginIsolation.Confinement.namespaces.rawValue, rejected: [.example])
}

extension InspectJSON {
    static let example = InspectJSON(
        file: "libX.so", name: "X", version: "1.0.0", vendor: "V", abi: 1, abiVersion: "1.1", swiftVersion: "6.3", containers: [.example],
        types: [.init(objectName: "x:y", businessID: "b", container: "MS:Custom", persistence: .flag(.example), media: false)],
        actions: [.init(kind: "message", id: "vote", objectName: "x:y", title: "T", icon: "i", priority: 1, yields: "url", signature: "s", symbol: "x_vote")],
        dataFiles: ["data/words.txt"])
}

extension DecodeJSON {
    static let example = DecodeJSON(
        line: 1, id: "m1", objectName: "MS:Custom", businessID: "b", container: .example, known: true, decodedAs: "x:y", digest: "d",
        searchableWords: ["w"], persistence: .example, pushContent: "p", media: .example, parentID: "m0", content: received, reason: "r",
        pluginFailures: ["f"])
}

extension DecodeErrorJSON { static let example = DecodeErrorJSON(line: 1, error: .init(code: "malformed-envelope", message: "m")) }

extension ActionsJSON { static let example = ActionsJSON(composerActions: [.example], messageActions: [.example], rejected: [.example]) }

extension ActEditJSON { static let example = ActEditJSON(action: "vote", id: "m1", objectName: "x:y", digest: "d", envelope: received) }

extension ActURLJSON { static let example = ActURLJSON(action: "open", url: "https://example.com") }

extension ComposeJSON { static let example = ComposeJSON(action: "x.create", id: "m1", objectName: "x:y", digest: "d", envelope: received) }

extension ActionErrorJSON {
    static let example = ActionErrorJSON(
        error: .init(code: "invalid-argument", message: "m", file: "/p/libX.so", objectName: "x:y", action: "vote", parameter: "score"))
}

extension KeygenJSON { static let example = KeygenJSON(privateKeyFile: "k", publicKeyFile: "k.pub", key: .example) }

extension SignJSON {
    static let example = SignJSON(
        signer: .example, files: [.init(file: "libX.so", signatureFile: "libX.so.sig", name: "X", version: "1.0.0", error: .example)])
}

extension VerifyJSON {
    static let example = VerifyJSON(
        trustedKeys: [.init(fingerprint: "SHA256:00", comment: "me", source: "/k/me.pub")], trustedKeyFolders: ["/k"],
        files: [.init(
            file: "libX.so", status: "trusted", trusted: true, reason: "r", signatureFile: "libX.so.sig",
            plugin: .init(name: "X", version: "1.0.0", vendor: "V", abiVersion: "1.0", types: ["x:y"]), signer: .example, trustedBy: "/k/me.pub",
            signed: .init(sha256: "00", name: "X", version: "1.0.0", vendor: "V", abiVersion: "1.0", types: ["x:y"]))])
}

extension QuarantineListJSON { static let example = QuarantineListJSON(crashes: [.example], blacklisted: [.example]) }

extension QuarantineClearJSON { static let example = QuarantineClearJSON(clearedCrashes: [.example], clearedBlacklisted: [.example]) }

extension StoreErrorJSON { static let example = StoreErrorJSON(error: .init(code: "not-found", reason: "r", database: "/d")) }

extension StoreIngestJSON {
    static let example = StoreIngestJSON(
        database: "/d", stored: 1, duplicates: ["m1"], notStored: [.init(id: "m2", persistence: .example)], malformedLines: 0, refused: 0)
}

extension StoreConversationsJSON {
    static let example = StoreConversationsJSON(conversations: [.init(id: "c", unreadCount: 1, messageCount: 2, lastMessage: .example)])
}

extension StoreShowJSON { static let example = StoreShowJSON(conversation: "c", unreadCount: 1, messages: [.example]) }

extension StoreSearchJSON { static let example = StoreSearchJSON(query: "q", hits: [.init(snippet: "[q]", rank: -1.5, message: .example)]) }

extension StoreReadJSON { static let example = StoreReadJSON(conversation: "c", readUpTo: "m1", unreadCount: 0) }

extension StoreDeleteJSON { static let example = StoreDeleteJSON(deleted: "m1") }

extension StoreMigrateJSON {
    static let example = StoreMigrateJSON(from: "/a.sqlite", to: "postgres://me@db/chat", copied: 1, alreadyThere: 0, consistent: false, problems: ["p"])
}

extension StoreMembersJSON { static let example = StoreMembersJSON(conversation: "c", members: ["alice"]) }

extension StoreChangeJSON {
    static let example = StoreChangeJSON(position: 1, kind: "read", conversationID: "c", messageID: "m1", memberID: "alice", message: .example)
}

extension StoreRedecodeJSON {
    static let example = StoreRedecodeJSON(
        decoded: 1, stillUnknown: 1, types: [.init(objectName: "x:y", decoded: 1, stillUnknown: 1, unreadChanged: 1, reason: "r")])
}

extension StoreCheckJSON { static let example = StoreCheckJSON(consistent: true, problems: ["p"]) }
