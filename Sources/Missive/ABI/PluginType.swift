import CMissivePlugin
import MissiveCore
import Synchronization

/// One message type of a plugin: its descriptor's fields and its function pointers.
///
/// Values are immutable: the ABI requires the descriptor to stay valid and unchanged for the life of the
/// process, and the functions to be callable from any thread, which is what makes this `Sendable`.
/// `init` checks only what is needed to call the type; ``registrationProblem`` checks the rest.
package final class PluginType: @unchecked Sendable {
    typealias DecodeFunction = @convention(c) (
        UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<missive_sink>?
    ) -> Int32
    typealias ReleaseFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void
    typealias WriteFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<missive_sink>?) -> Int32
    typealias MediaFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<missive_media_out>?) -> Int32
    typealias ViewFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<missive_sink>?) -> Int32
    typealias TextsFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<missive_text_out>?) -> Int32

    /// The plugin the type belongs to.
    package let plugin: PluginInfo
    /// The type's objectName.
    package let objectName: String
    /// The value its container dispatches on to reach it: the `MS:Custom` business identifier, or the
    /// `container_value` under ``container``.
    package let businessID: String?
    /// The objectName of the container ``businessID`` belongs to, when it is not `MS:Custom`.
    package let container: String?
    /// The persistence value as the descriptor gives it, which may be one Missive does not know.
    package let persistenceValue: UInt32
    /// Whether the descriptor flags the type as media.
    package let isMedia: Bool
    /// The example contents.
    package let examples: [[UInt8]]
    /// Why the examples could not all be read, if they could not.
    package let examplesProblem: String?
    /// Whether the type has a push_content function.
    package var hasPushFunction: Bool { pushFunction != nil }
    /// Whether the type offers the `missive.view.v1` extension.
    package var describesView: Bool { viewFunction != nil }
    /// Why the type's `missive.view.v1` extension cannot be used, when it offers one that is malformed.
    package let viewExtensionProblem: String?
    /// Whether the type offers the `missive.text.v1` extension: digest, push text and words in one call.
    package var answersTextsAtOnce: Bool { textsFunction != nil }
    /// Why the type's `missive.text.v1` extension cannot be used, when it offers one that is malformed.
    package let textExtensionProblem: String?

    /// The persistence flag; meaningful once ``registrationProblem`` is `nil`.
    var persistence: Persistence { Persistence(rawValue: persistenceValue) ?? .persisted }

    private let context: UnsafeMutableRawPointer?
    private let decodeFunction: DecodeFunction
    private let releaseFunction: ReleaseFunction
    private let encodeFunction: WriteFunction
    private let digestFunction: WriteFunction
    private let pushFunction: WriteFunction?
    private let wordsFunction: WriteFunction?
    private let mediaFunction: MediaFunction?
    private let viewFunction: ViewFunction?
    private let textsFunction: TextsFunction?
    /// What the crash guard records while one of the type's functions runs: made at the first call, not at load.
    var site: CrashGuard.Site { typeSite.site }
    private let typeSite: CrashGuard.TypeSite
    /// Whether the plugin changed the process state after a call; shared by the plugin's types.
    private let watch: ProcessWatch
    /// The operations called once already, as bits by their raw values: the first of each runs between two
    /// process states (``watched(_:_:)``).
    private let calledOnce = Atomic<UInt32>(0)

    /// Why the plugin's types are refused since a first call changed the process state, or `nil`.
    package var processStateRefusal: MissiveError? { watch.refusal }

    /// Reads one type descriptor: its size first, then the fields that size covers.
    ///
    /// `sites` are the crash guard's sites of the plugin's file (by default made here, without its identity), and
    /// `watch` the plugin's watch of the process state, shared by its types (by default the type's own).
    /// `declared` are the types the plugin's metadata declares, if known, and `position` the type's place in the
    /// descriptor: where a declared name holds the same bytes as the descriptor's (compared without copying),
    /// its String is shared instead of made again. The agreement of the two is still judged afterwards.
    init(
        _ type: UnsafePointer<missive_type>, plugin: PluginInfo, sites: CrashGuard.FileSites? = nil, watch: ProcessWatch = ProcessWatch(),
        declared: [PluginMetadata.TypeEntry] = [], position: Int = 0
    ) throws(MissiveError) {
        func invalid(_ message: String, _ name: String? = nil) -> MissiveError {
            MissiveError(.invalidDescriptor, message, file: plugin.path, objectName: name)
        }
        // Only struct_size may be read before it is checked, and then no byte past it: a 1.0 descriptor
        // ends before the 1.1 fields, which stay zero (NULL) in the copy.
        let structSize = UnsafeRawPointer(type).load(as: UInt32.self)
        guard structSize >= MISSIVE_TYPE_SIZE_1_0 else {
            throw invalid("type descriptor is \(structSize) bytes; ABI 1.0 needs at least \(MISSIVE_TYPE_SIZE_1_0)")
        }
        var descriptor = missive_type()
        withUnsafeMutableBytes(of: &descriptor) { copy in
            copy.copyMemory(from: UnsafeRawBufferPointer(start: type, count: min(Int(structSize), copy.count)))
        }
        guard let namePointer = descriptor.object_name else { throw invalid("a type has no object_name") }
        let entry = Self.declaredEntry(namePointer, in: declared, near: position)
        let name = Self.string(namePointer, sharing: entry?.objectName)
        guard let decode = descriptor.decode, let release = descriptor.release, let encode = descriptor.encode,
            let digest = descriptor.digest
        else {
            throw invalid("decode, release, encode and digest are required", name)
        }
        let container = descriptor.container.map { Self.string($0, sharing: entry?.container) }
        let containerValue = descriptor.container_value.map { Self.string($0, sharing: entry?.businessID) }
        guard (container == nil) == (containerValue == nil) else {
            throw invalid("container and container_value must be set together", name)
        }
        if container != nil && descriptor.business_id != nil {
            throw invalid("a type registers under one container: business_id must be NULL when container is set", name)
        }
        var examples: [[UInt8]] = []
        examples.reserveCapacity(Int(min(descriptor.example_count, 64)))
        var examplesProblem: String?
        for index in 0..<Int(descriptor.example_count) {
            guard let table = descriptor.examples else {
                examplesProblem = "example_count is \(descriptor.example_count) but examples is NULL"
                break
            }
            let example = table[index]
            guard example.length >= 0, example.length <= 16 << 20, example.bytes != nil || example.length == 0 else {
                examplesProblem = "example \(index) has an invalid length"
                break
            }
            examples.append(example.bytes.map { Array(UnsafeBufferPointer(start: $0, count: example.length)) } ?? [])
        }
        self.plugin = plugin
        self.objectName = name
        self.businessID = containerValue ?? descriptor.business_id.map { Self.string($0, sharing: entry?.businessID) }
        self.container = container
        self.persistenceValue = descriptor.persistence
        self.isMedia = descriptor.flags & UInt32(MISSIVE_TYPE_MEDIA) != 0
        self.examples = examples
        self.examplesProblem = examplesProblem
        self.context = descriptor.context
        self.decodeFunction = decode
        self.releaseFunction = release
        self.encodeFunction = encode
        self.digestFunction = digest
        self.pushFunction = descriptor.push_content
        self.wordsFunction = descriptor.searchable_words
        self.mediaFunction = isMedia ? descriptor.media : nil
        (self.viewFunction, self.viewExtensionProblem) = Self.viewExtension(descriptor.get_extension, context: descriptor.context)
        (self.textsFunction, self.textExtensionProblem) = Self.textExtension(descriptor.get_extension, context: descriptor.context)
        self.watch = watch
        self.typeSite = CrashGuard.TypeSite(sites: sites ?? CrashGuard.FileSites(path: plugin.path, identity: nil), objectName: name)
    }

    /// The declared type whose objectName holds the bytes of `name`: the one at `position`, or at the mirrored
    /// position (the linker often lays a section's records out in reverse), when it does; else the first that does.
    private static func declaredEntry(_ name: UnsafePointer<CChar>, in declared: [PluginMetadata.TypeEntry], near position: Int) -> PluginMetadata.TypeEntry? {
        for guess in [position, declared.count - 1 - position] where declared.indices.contains(guess) && holds(name, declared[guess].objectName) {
            return declared[guess]
        }
        return declared.first { holds(name, $0.objectName) }
    }

    /// The NUL-terminated `text` as a String: `known` itself when it holds exactly the same bytes, else a new
    /// String (whose invalid UTF-8 is repaired, as `String(cString:)` does; equal bytes are valid UTF-8, so the
    /// two ways give equal Strings).
    static func string(_ text: UnsafePointer<CChar>, sharing known: String?) -> String {
        if let known, holds(text, known) { return known }
        return String(cString: text)
    }

    /// Whether the NUL-terminated `text` holds exactly the UTF-8 bytes of `known`; no byte past `text`'s NUL is read.
    static func holds(_ text: UnsafePointer<CChar>, _ known: String) -> Bool {
        var known = known
        return known.withUTF8 { bytes in
            for index in 0..<bytes.count where text[index] == 0 || UInt8(bitPattern: text[index]) != bytes[index] { return false }
            return text[bytes.count] == 0
        }
    }

    /// The view function of the type's `missive.view.v1` extension, if it offers a usable one.
    private static func viewExtension(
        _ getExtension: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> UnsafeRawPointer?)?,
        context: UnsafeMutableRawPointer?
    ) -> (ViewFunction?, String?) {
        guard let getExtension, let pointer = getExtension(context, MISSIVE_VIEW_EXTENSION) else { return (nil, nil) }
        // Only struct_size may be read before it is checked (missive_plugin.h, "Extensions").
        let structSize = pointer.load(as: UInt32.self)
        let needed = MemoryLayout<missive_view_v1>.offset(of: \.view)! + MemoryLayout<ViewFunction?>.size
        guard structSize >= needed else {
            return (nil, "its \(MISSIVE_VIEW_EXTENSION) extension is \(structSize) bytes; the view function needs \(needed)")
        }
        guard let view = pointer.assumingMemoryBound(to: missive_view_v1.self).pointee.view else {
            return (nil, "its \(MISSIVE_VIEW_EXTENSION) extension has no view function")
        }
        return (view, nil)
    }

    /// The texts function of the type's `missive.text.v1` extension, if it offers a usable one.
    private static func textExtension(
        _ getExtension: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> UnsafeRawPointer?)?,
        context: UnsafeMutableRawPointer?
    ) -> (TextsFunction?, String?) {
        guard let getExtension, let pointer = getExtension(context, MISSIVE_TEXT_EXTENSION) else { return (nil, nil) }
        // Only struct_size may be read before it is checked (missive_plugin.h, "Extensions").
        let structSize = pointer.load(as: UInt32.self)
        let needed = MemoryLayout<missive_text_v1>.offset(of: \.texts)! + MemoryLayout<TextsFunction?>.size
        guard structSize >= needed else {
            return (nil, "its \(MISSIVE_TEXT_EXTENSION) extension is \(structSize) bytes; the texts function needs \(needed)")
        }
        guard let texts = pointer.assumingMemoryBound(to: missive_text_v1.self).pointee.texts else {
            return (nil, "its \(MISSIVE_TEXT_EXTENSION) extension has no texts function")
        }
        return (texts, nil)
    }

    /// Why the type may not be registered although it can be called, or `nil`.
    package var registrationProblem: MissiveError? {
        func invalid(_ message: String) -> MissiveError {
            MissiveError(.invalidDescriptor, message, file: plugin.path, objectName: objectName)
        }
        if Persistence(rawValue: persistenceValue) == nil {
            return invalid("persistence \(persistenceValue) is not one of 0, 1, 3 and 16")
        }
        if isMedia && mediaFunction == nil { return invalid("a media type must provide media") }
        if let examplesProblem { return invalid(examplesProblem) }
        if examples.isEmpty { return invalid("a type must ship at least one example content") }
        return nil
    }

    /// Decodes content through the plugin, keeping the bytes as the content received; on failure, the
    /// reason the plugin gave.
    package func decode(_ content: UnsafeBufferPointer<UInt8>, received: [UInt8]? = nil) -> Result<PluginContent, MissiveError> {
        if let refusal = watch.refusal { return .failure(refusal) }
        var handle: OpaquePointer?
        let (status, reason, _) = watched(.decode) {
            CrashGuard.run(site, .decode) {
                PluginSinks.collectingBytes { errorSink in decodeFunction(context, content.baseAddress, content.count, &handle, errorSink) }
            }
        }
        // Ownership of a handle passes to the host only with MISSIVE_OK; anything else left in it is ignored.
        guard status == MISSIVE_OK, let handle else {
            let text: String
            if !reason.isEmpty {
                text = DisplayText.oneLine(reason)
            } else if status == MISSIVE_OK {
                text = "the plugin's decoder returned MISSIVE_OK without a handle"
            } else {
                text = "the plugin's decoder failed with \(Self.describe(status))"
            }
            return .failure(MissiveError(.malformedContent, text, file: plugin.path, objectName: objectName))
        }
        return .success(PluginContent(type: self, handle: handle, received: received ?? Array(content)))
    }

    /// A status in words: `status 3 (MISSIVE_FAILED)`, or `status 9, which no ABI version defines`.
    package static func describe(_ status: Int32) -> String {
        switch status {
        case MISSIVE_OK: "status 0 (MISSIVE_OK)"
        case MISSIVE_ABSENT: "status 1 (MISSIVE_ABSENT)"
        case MISSIVE_INVALID_CONTENT: "status 2 (MISSIVE_INVALID_CONTENT)"
        case MISSIVE_FAILED: "status 3 (MISSIVE_FAILED)"
        default: "status \(status), which no ABI version defines"
        }
    }

    /// Runs `body`, a call of the type's `operation`; the first of each operation runs between two process
    /// states, and what it changed is put back and refuses the plugin's types (``ProcessWatch``). After the
    /// first, one atomic load.
    @inline(__always)
    func watched<Result>(_ operation: CrashGuard.Operation, _ body: () -> Result) -> Result {
        let bit = UInt32(1) << UInt32(operation.rawValue)
        if calledOnce.load(ordering: .relaxed) & bit != 0 { return body() }
        return firstCall(operation, bit, body)
    }

    @inline(never)
    private func firstCall<Result>(_ operation: CrashGuard.Operation, _ bit: UInt32, _ body: () -> Result) -> Result {
        let (result, change) = ProcessState.exclusively {
            let state = ProcessState()
            let result = body()
            return (result, state.restore())
        }
        if let change { watch.refuse(change, operation: operation, path: plugin.path, objectName: objectName) }
        calledOnce.bitwiseOr(bit, ordering: .relaxed)
        return result
    }

    func release(_ handle: OpaquePointer) { watched(.release) { CrashGuard.run(site, .release) { releaseFunction(context, handle) } } }

    func encode(_ handle: OpaquePointer) -> (status: Int32, bytes: [UInt8], reason: String?) {
        watched(.encode) { CrashGuard.run(site, .encode) { PluginSinks.collectingBytes { encodeFunction(context, handle, $0) } } }
    }

    func digest(_ handle: OpaquePointer) -> (status: Int32, bytes: [UInt8], reason: String?) {
        watched(.digest) { CrashGuard.run(site, .digest) { PluginSinks.collectingBytes { digestFunction(context, handle, $0) } } }
    }

    func pushContent(_ handle: OpaquePointer) -> (status: Int32, bytes: [UInt8], reason: String?)? {
        pushFunction.map { push in watched(.push) { CrashGuard.run(site, .push) { PluginSinks.collectingBytes { push(context, handle, $0) } } } }
    }

    func searchableWords(_ handle: OpaquePointer) -> (status: Int32, pieces: [[UInt8]], reason: String?)? {
        wordsFunction.map { words in watched(.words) { CrashGuard.run(site, .words) { PluginSinks.collectingPieces { words(context, handle, $0) } } } }
    }

    /// What the `missive.text.v1` texts function returned and wrote, in one call, or `nil` when the type
    /// has none. The answers count only when it returned `MISSIVE_OK`.
    /// Without `wantingPush` the plugin may skip the push text, which the answer then does not hold.
    func allTexts(_ handle: OpaquePointer, wantingPush: Bool) -> (status: Int32, texts: PluginTexts)? {
        guard let textsFunction else { return nil }
        return watched(.texts) {
            CrashGuard.run(site, .texts) {
                PluginTexts.collectingAll(push: pushFunction != nil, words: wordsFunction != nil, wantingPush: wantingPush) {
                    textsFunction(context, handle, $0)
                }
            }
        }
    }

    /// One part from its own function; `nil` for push or words when the type has no such function.
    func text(_ part: PluginTexts.Part, _ handle: OpaquePointer) -> PluginTexts? {
        switch part {
        case .digest:
            return watched(.digest) { CrashGuard.run(site, .digest) { PluginTexts.collecting(.digest) { digestFunction(context, handle, $0) } } }
        case .push:
            return pushFunction.map { push in watched(.push) { CrashGuard.run(site, .push) { PluginTexts.collecting(.push) { push(context, handle, $0) } } } }
        case .words:
            return wordsFunction.map { words in watched(.words) { CrashGuard.run(site, .words) { PluginTexts.collecting(.words) { words(context, handle, $0) } } } }
        }
    }

    func media(_ handle: OpaquePointer) -> Result<MediaReference?, MissiveError> {
        guard let mediaFunction else { return .success(nil) }
        let result = watched(.media) { CrashGuard.run(site, .media) { PluginSinks.collectingMedia { mediaFunction(context, handle, $0) } } }
        guard result.status == MISSIVE_OK else {
            if result.status == MISSIVE_ABSENT { return .success(nil) }
            return .failure(failure("media", result.status, result.reason))
        }
        func text(_ bytes: [UInt8]) -> String? { bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
        return .success(
            MediaReference(
                remoteURL: text(result.url), localPath: text(result.path), mimeType: text(result.mime) ?? "",
                sizeBytes: result.size >= 0 ? result.size : nil))
    }

    func view(_ handle: OpaquePointer) -> (status: Int32, bytes: [UInt8], reason: String?)? {
        viewFunction.map { view in watched(.view) { CrashGuard.run(site, .view) { PluginSinks.collectingBytes { view(context, handle, $0) } } } }
    }

    /// The error for a function that failed, with the plugin's reason when it gave one.
    func failure(_ function: String, _ status: Int32, _ reason: String?) -> MissiveError {
        let because = reason.map { ": \($0)" } ?? " (the plugin gave no reason)"
        return MissiveError(.pluginFailure, "\(function) failed with \(Self.describe(status))\(because)", file: plugin.path, objectName: objectName)
    }
}
