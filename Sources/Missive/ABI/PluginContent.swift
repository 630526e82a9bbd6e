import CMissivePlugin
import MissiveCore
import Synchronization

/// The content of a message decoded by a plugin: the plugin's handle, released when this value goes away,
/// and the bytes it was decoded from.
///
/// Every property calls into the plugin, which answers from the decoded handle without parsing again. What
/// the plugin answers is held to the ABI's rules, with the fallbacks missive_plugin.h defines: a digest that
/// fails becomes `[objectName]`, text that breaks the one-line rules is repaired, a failing push sends the
/// digest, and failing words or media give none. The `checked` methods give the plugin's reason instead.
///
/// The digest, push text and words are fetched once per message, the digest and the words in one call when
/// the type offers the `missive.text.v1` extension, and kept: a host that shows the conversation list and indexes the same
/// messages for search crosses into the plugin once.
public final class PluginContent: MessageContent, @unchecked Sendable {
    /// The plugin type that decoded the content.
    let type: PluginType
    /// The plugin's handle to the decoded content, released in `deinit`.
    let handle: OpaquePointer
    /// The content exactly as received, which is what an unchanged message sends again.
    public let receivedContent: [UInt8]?
    /// The answers kept for the digest, the push text and the words: each a retained ``TextsBox``, or
    /// `nil` until first asked. One answer of the combined function fills the digest and the words. Written once, by
    /// compare-and-exchange, so that every thread sees the same answer; released in `deinit`.
    private let digestAnswer = Atomic<UnsafeRawPointer?>(nil)
    private let pushAnswer = Atomic<UnsafeRawPointer?>(nil)
    private let wordsAnswer = Atomic<UnsafeRawPointer?>(nil)

    init(type: PluginType, handle: OpaquePointer, received: [UInt8]) {
        self.type = type
        self.handle = handle
        self.receivedContent = received
    }

    deinit {
        // One retain per slot that holds an answer (the three may hold the same one).
        if let kept = digestAnswer.load(ordering: .acquiring) { Unmanaged<TextsBox>.fromOpaque(kept).release() }
        if let kept = pushAnswer.load(ordering: .acquiring) { Unmanaged<TextsBox>.fromOpaque(kept).release() }
        if let kept = wordsAnswer.load(ordering: .acquiring) { Unmanaged<TextsBox>.fromOpaque(kept).release() }
        type.release(handle)
    }

    /// An answer, kept by reference so that the three slots can share one.
    private final class TextsBox: Sendable {
        let texts: PluginTexts
        init(_ texts: PluginTexts) { self.texts = texts }
    }

    /// The kept answer holding `part`, fetched first if no thread has yet: the digest and the words through
    /// the combined function when the type has one (which answers both, as a conversation list and a search
    /// index want them), else, and for the push text, which is wanted far less often, through the part's own
    /// function. `nil` for push or words when the type has no such function.
    private func answer(_ part: PluginTexts.Part) -> PluginTexts? {
        if let kept = load(part) { return kept }
        if part != .push, let (status, both) = type.allTexts(handle, wantingPush: false), status == MISSIVE_OK {
            let box = Unmanaged.passRetained(TextsBox(both))
            let digest = store(box, .digest)
            let words = store(box, .words)
            box.release()
            return part == .digest ? digest : words
        }
        guard let own = type.text(part, handle) else { return nil }
        let box = Unmanaged.passRetained(TextsBox(own))
        defer { box.release() }
        return store(box, part)
    }

    private func load(_ part: PluginTexts.Part) -> PluginTexts? {
        let raw: UnsafeRawPointer? =
            switch part {
            case .digest: digestAnswer.load(ordering: .acquiring)
            case .push: pushAnswer.load(ordering: .acquiring)
            case .words: wordsAnswer.load(ordering: .acquiring)
            }
        return raw.map { Unmanaged<TextsBox>.fromOpaque($0).takeUnretainedValue().texts }
    }

    /// Keeps `box` for `part` unless another thread kept an answer first; gives the answer kept.
    private func store(_ box: Unmanaged<TextsBox>, _ part: PluginTexts.Part) -> PluginTexts {
        let pointer = UnsafeRawPointer(box.toOpaque())
        let (exchanged, original): (Bool, UnsafeRawPointer?) =
            switch part {
            case .digest: digestAnswer.compareExchange(expected: nil, desired: pointer, ordering: .acquiringAndReleasing)
            case .push: pushAnswer.compareExchange(expected: nil, desired: pointer, ordering: .acquiringAndReleasing)
            case .words: wordsAnswer.compareExchange(expected: nil, desired: pointer, ordering: .acquiringAndReleasing)
            }
        if exchanged {
            _ = box.retain()
            return box.takeUnretainedValue().texts
        }
        return Unmanaged<TextsBox>.fromOpaque(original!).takeUnretainedValue().texts
    }

    /// The plugin the content's type comes from.
    public var plugin: PluginInfo { type.plugin }
    public var objectName: String { type.objectName }
    public var businessID: String? { type.businessID }
    /// The objectName of the container that ``businessID`` belongs to (`MS:Custom` when the type names none),
    /// or `nil` when the type has no ``businessID``.
    public var container: String? { type.container ?? (type.businessID == nil ? nil : MessageContainer.custom.objectName) }
    public var persistence: Persistence { type.persistence }

    /// The digest, repaired to one line; `[objectName]` when the plugin fails or gives an empty one.
    public var digest: String {
        let text = (try? checkedDigestBytes()).map(DisplayText.repair) ?? ""
        return text.isEmpty ? "[\(type.objectName)]" : text
    }

    /// The digest exactly as the plugin wrote it, or the plugin's failure and its reason.
    public func checkedDigest() throws(MissiveError) -> [UInt8] {
        Array(try checkedDigestBytes())
    }

    private func checkedDigestBytes() throws(MissiveError) -> ArraySlice<UInt8> {
        let texts = answer(.digest)!
        let status = texts.status(.digest)!
        guard status == MISSIVE_OK else { throw type.failure("digest", status, texts.reason(.digest)) }
        return texts.joined(.digest)
    }

    /// The push text, repaired to one line; the digest when the type has no push function or it fails;
    /// `nil` for status types and when the plugin says there is none (or gives an empty one).
    public var pushContent: String? {
        guard type.persistence != .status else { return nil }
        guard type.hasPushFunction else { return digest }
        do {
            guard let bytes = try checkedPushBytes() else { return nil }
            let text = DisplayText.repair(bytes)
            return text.isEmpty ? nil : text
        } catch {
            return digest
        }
    }

    /// The push text exactly as the plugin wrote it, `nil` for `MISSIVE_ABSENT` or no push function, or the
    /// plugin's failure and its reason.
    public func checkedPushContent() throws(MissiveError) -> [UInt8]? {
        try checkedPushBytes().map(Array.init)
    }

    private func checkedPushBytes() throws(MissiveError) -> ArraySlice<UInt8>? {
        guard let texts = answer(.push), let status = texts.status(.push), status != MISSIVE_ABSENT else { return nil }
        guard status == MISSIVE_OK else { throw type.failure("push_content", status, texts.reason(.push)) }
        return texts.joined(.push)
    }

    /// The searchable words, without empty ones; none when the plugin fails. Each word becomes a `String`
    /// straight from the kept answer's buffer.
    public var searchableWords: [String] {
        guard let texts = try? checkedWords() else { return [] }
        var words: [String] = []
        texts.forEachPiece(of: .words) { piece in
            if !piece.isEmpty { words.append(String(decoding: piece, as: UTF8.self)) }
        }
        return words
    }

    /// The words exactly as the plugin wrote them (empty for `MISSIVE_ABSENT` or no function), or the
    /// plugin's failure and its reason.
    public func checkedSearchableWords() throws(MissiveError) -> [[UInt8]] {
        guard let texts = try checkedWords() else { return [] }
        var words: [[UInt8]] = []
        texts.forEachPiece(of: .words) { words.append(Array($0)) }
        return words
    }

    /// The kept answer holding the words, `nil` for `MISSIVE_ABSENT` or no function, or the failure.
    private func checkedWords() throws(MissiveError) -> PluginTexts? {
        guard let texts = answer(.words), let status = texts.status(.words), status != MISSIVE_ABSENT else { return nil }
        guard status == MISSIVE_OK else { throw type.failure("searchable_words", status, texts.reason(.words)) }
        return texts
    }

    /// The media reference; `nil` when the type is not a media type or the plugin gives none or fails.
    public var media: MediaReference? { try? checkedMedia() }

    /// The media reference, or the plugin's failure and its reason.
    public func checkedMedia() throws(MissiveError) -> MediaReference? { try type.media(handle).get() }

    /// The content to send: the bytes received, unchanged.
    public func encodedContent() throws(MissiveError) -> [UInt8] {
        if let receivedContent { return receivedContent }
        return try typeEncodedContent()
    }

    /// The content as the plugin's `encode` writes it, which must be one JSON object.
    public func typeEncodedContent() throws(MissiveError) -> [UInt8] {
        let (status, bytes, reason) = type.encode(handle)
        guard status == MISSIVE_OK else { throw type.failure("encode", status, reason) }
        // A plugin's output goes into envelopes and JSON Lines: it must be exactly one JSON object.
        if let problem = JSONScanner.problem(in: bytes) {
            throw MissiveError(.pluginFailure, "encode produced invalid JSON: \(problem)", file: type.plugin.path, objectName: type.objectName)
        }
        guard ContentMembers(bytes) != nil else {
            throw MissiveError(.pluginFailure, "encode produced JSON that is not an object", file: type.plugin.path, objectName: type.objectName)
        }
        return bytes
    }

    /// The view the type describes for this message, read and sanitized; `nil` when the type has no view
    /// extension or says this message has none (`MISSIVE_ABSENT`). Throws when the view function fails.
    public func describedView() throws(MissiveError) -> ViewReading? {
        guard let bytes = try checkedView() else { return nil }
        return ViewDocument.read(bytes)
    }

    /// The view document exactly as the plugin wrote it, `nil` for `MISSIVE_ABSENT` or no view extension,
    /// or the plugin's failure and its reason.
    public func checkedView() throws(MissiveError) -> [UInt8]? {
        guard let (status, bytes, reason) = type.view(handle), status != MISSIVE_ABSENT else { return nil }
        guard status == MISSIVE_OK else { throw type.failure("view", status, reason) }
        return bytes
    }

    /// Runs a message action's function on this message's handle, through `function` (the action's own, or
    /// a counting one in front of it): the status, what it wrote, and the reason after the mark. `nil` when
    /// the action takes messages of another type than this one, whose handles it must never see.
    package func run(_ action: LoadedAction, through function: ActionFunction? = nil, _ values: [ActionValue]) -> ActionFunctionOutput? {
        guard action.type === type else { return nil }
        let function = function ?? action.function
        return ActionFunctionOutput(type.watched(.action) {
            CrashGuard.run(type.site, .action) {
                PluginSinks.collectingBytes { sink in function.call(message: handle, values: values, sink: UnsafeRawPointer(sink)) }
            }
        })
    }
}
