#if canImport(Glibc)
import Glibc
#endif
import Missive

/// The sample decoders' invariants, for one input, through a `MessageRegistry` that holds the built-in types
/// and the four sample plugins, loaded from their `.so` files as a host loads them.
///
/// An input is an objectName, a newline, and the content: the target puts them in an envelope (skipping
/// inputs whose content is not one JSON value) and decodes it.
///
/// 1. Whatever the type, the message keeps the content byte for byte: `encodedContent()` and the envelope
///    sent again are what was received. An unknown message keeps the objectName and the raw content.
/// 2. Digest, push text, words, media and view can be asked of any message.
/// 3. A known message's type encodes it, and that encoding is byte-stable: composed as a new message of the
///    type (under its objectName, and through its container when it has one) it decodes as the same type
///    again, which encodes it to the same bytes.
/// 4. Editing a known message to its own type's encoding succeeds, keeps the objectName it came under, and
///    gives the same encoding.
public enum DecoderChecks {
    /// The folder with the sample plugins, from `MISSIVE_FUZZ_PLUGINS` (Fuzz/run.sh sets it).
    static let pluginFolder: String = {
        guard let folder = getenv("MISSIVE_FUZZ_PLUGINS") else {
            fatalError("fuzz-decoders: set MISSIVE_FUZZ_PLUGINS to the folder holding the sample plugins (Fuzz/run.sh does)")
        }
        return String(cString: folder)
    }()

    /// The objectNames the sample plugins must have registered.
    public static let sampleTypes = [
        "demo:link", "demo:poll", "demo:typing", "demo:sticker", "demo:rating", "matrix:text", "matrix:notice", "matrix:emote",
    ]

    /// The built-in types and the sample plugins.
    public static let registry: MessageRegistry = {
        let found = MessageRegistry.discover(searchPath: PluginSearchPath(entries: [.init(directory: pluginFolder, source: .explicit)]))
        let missing = sampleTypes.filter { found.registry.type(objectName: $0) == nil }
        guard missing.isEmpty else {
            fatalError("fuzz-decoders: \(pluginFolder) lacks \(missing.joined(separator: ", ")); \(found)\n"
                + found.rejections.map(\.description).joined(separator: "\n"))
        }
        return found.registry
    }()

    public static func check(_ input: UnsafeBufferPointer<UInt8>) {
        let newline = input.firstIndex(of: 0x0A) ?? input.endIndex
        let objectName = String(decoding: UnsafeBufferPointer(rebasing: input[..<newline]), as: UTF8.self)
        let content = newline < input.endIndex ? UnsafeBufferPointer(rebasing: input[(newline + 1)...]) : UnsafeBufferPointer(rebasing: input[newline...])
        var line = Array(#"{"id":"fuzz","conversationID":"c","senderID":"s","sentAt":1767225600000,"objectName":"#.utf8)
        line += quoted(objectName)
        line += Array(#","content":"#.utf8)
        line += content
        line.append(UInt8(ascii: "}"))
        guard let envelope = try? Envelope(parsing: line), envelope.additionalFields.isEmpty else { return }

        let message = registry.decode(envelope)
        let kept = Result { () throws(MissiveError) in try message.content.encodedContent() }
        guard case .success(envelope.content) = kept else {
            violated("a message does not keep its content byte for byte", "\(envelope.objectName): \(show(envelope.content))\ngives: \(kept)")
        }
        guard (try? message.reencoded())?.encoded() == envelope.encoded() else { violated("a message is not sent again as received", show(line)) }

        _ = (message.digest, message.persistence, message.content.pushContent, message.content.searchableWords, message.content.media)
        _ = try? message.content.describedView()
        _ = message.content.view

        if let unknown = message.unknown {
            guard unknown.rawContent == envelope.content, unknown.objectName.sameBytes(as: envelope.objectName) else {
                violated("an unknown message does not keep its objectName and content", show(line))
            }
            return
        }
        checkKnown(message)
    }

    static func checkKnown(_ message: Message) {
        let objectName = message.content.objectName
        let received = show(message.envelope.content)
        guard let encoding = encoded(message) else { violated("a decoded \(objectName) cannot be encoded", "content: \(received)") }
        guard let type = registry.type(objectName: objectName) else { violated("a message decoded as \(objectName), which is not registered") }
        checkComposed(objectName, encoding, viaContainer: false, received: received)
        if type.businessID != nil { checkComposed(objectName, encoding, viaContainer: true, received: received) }

        let edited: Message
        do {
            edited = try registry.edit(message, content: encoding)
        } catch {
            violated("editing a \(objectName) to its own encoding is refused", "\(error)\nreceived: \(received)\nencoding: \(show(encoding))")
        }
        if !edited.envelope.objectName.sameBytes(as: message.envelope.objectName) || edited.content.objectName != objectName
            || encoded(edited) != encoding
        {
            violated("editing a \(objectName) to its own encoding changes it", "received: \(received)\nedited: \(show(edited.envelope.content))")
        }
    }

    /// Composes a new message of the type from its encoding and checks that it encodes to the same bytes.
    static func checkComposed(_ objectName: String, _ encoding: [UInt8], viaContainer: Bool, received: String) {
        let how = viaContainer ? " through its container" : ""
        let composed: Message
        do {
            composed = try registry.compose(
                objectName: objectName, content: encoding, id: "again", conversationID: "c", senderID: "s", sentAt: 1, viaContainer: viaContainer)
        } catch {
            violated("the type's encoding of a \(objectName) is not valid content for it\(how)", "\(error)\nreceived: \(received)\nencoding: \(show(encoding))")
        }
        if composed.content.objectName != objectName || encoded(composed) != encoding {
            violated("encoding a \(objectName) is not byte-stable\(how)", "received: \(received)\nfirst: \(show(encoding))\nthen: \(show(encoded(composed) ?? []))")
        }
    }

    /// The type's own encoding of a message's content, or `nil` when it fails.
    static func encoded(_ message: Message) -> [UInt8]? {
        try? message.content.typeEncodedContent()
    }

    /// `text` as a JSON string, written by Missive's JSON writer.
    static func quoted(_ text: String) -> [UInt8] {
        var writer = MissiveJSONWriter()
        writer.string(text)
        return writer.bytes
    }
}
