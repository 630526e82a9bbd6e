import CMissivePlugin
import Foundation

/// A plugin's C descriptor, built from its Swift message types.
///
/// ``MissivePlugin(name:version:vendor:containers:types:dataFiles:)`` creates one as a global constant and returns its
/// descriptor from the entry symbol; plugin authors don't use this type directly. The descriptor, its
/// strings and its examples are allocated once and owned by this object, which a plugin keeps for the life
/// of the process, as the ABI requires.
public final class PluginExport: @unchecked Sendable {
    private let plugin: UnsafeMutablePointer<missive_plugin>
    private let typeTable: UnsafeMutablePointer<UnsafePointer<missive_type>?>
    private let containerTable: UnsafeMutablePointer<UnsafePointer<missive_container>?>
    private let actionTable: UnsafeMutablePointer<UnsafePointer<missive_action>?>
    /// The `missive.actions.v1` extension, when a type has actions.
    private let actionsExtension: UnsafeMutablePointer<missive_actions_v1>
    private let exports: [AnyTypeExport]
    private var allocations: [UnsafeMutableRawPointer] = []

    /// Builds the descriptor of a plugin with these containers and types.
    public init(name: String, version: String, vendor: String, containers: [MessageContainer] = [], types: [any MessageType.Type]) {
        exports = types.map { makeExport($0) }
        plugin = .allocate(capacity: 1)
        typeTable = .allocate(capacity: max(exports.count, 1))
        containerTable = .allocate(capacity: max(containers.count, 1))
        // Every type's actions, in one plugin-wide extension (missive_plugin.h, "The actions extension").
        let actions = exports.flatMap { export in export.actions.map { (export, $0) } }
        actionTable = .allocate(capacity: max(actions.count, 1))
        actionsExtension = .allocate(capacity: 1)
        for (index, export) in exports.enumerated() {
            typeTable[index] = UnsafePointer(describe(export))
        }
        for (index, container) in containers.enumerated() {
            let descriptor = allocate(missive_container.self, count: 1)
            descriptor.initialize(
                to: missive_container(
                    struct_size: UInt32(MemoryLayout<missive_container>.size),
                    key_kind: UInt32(container.keyKind == .integer ? MISSIVE_KEY_INTEGER : MISSIVE_KEY_STRING),
                    object_name: copy(container.objectName), key: copy(container.key)))
            containerTable[index] = UnsafePointer(descriptor)
        }
        for (index, (export, action)) in actions.enumerated() {
            let descriptor = allocate(missive_action.self, count: 1)
            descriptor.initialize(
                to: missive_action(
                    struct_size: UInt32(MemoryLayout<missive_action>.size),
                    kind: UInt32(action.kind == .message ? MISSIVE_ACTION_MESSAGE : MISSIVE_ACTION_COMPOSER),
                    id: copy(action.id), object_name: copy(export.objectName), title: copy(action.title), icon: copy(action.icon),
                    priority: action.priority, yields: UInt32(action.yields == .url ? MISSIVE_YIELDS_URL : MISSIVE_YIELDS_CONTENT),
                    signature: copy(action.signature), symbol: nil, function: unsafeBitCast(action.function, to: missive_action_function.self),
                    examples: copy("[" + action.examples.map(ActionArgument.jsonArray).joined(separator: ",") + "]")))
            actionTable[index] = UnsafePointer(descriptor)
        }
        actionsExtension.initialize(
            to: missive_actions_v1(
                struct_size: UInt32(MemoryLayout<missive_actions_v1>.size), action_count: UInt32(actions.count),
                actions: UnsafePointer(actionTable)))
        plugin.initialize(
            to: missive_plugin(
                abi_version: UInt32(MISSIVE_ABI_MAJOR) << 16 | UInt32(MISSIVE_ABI_MINOR),
                struct_size: UInt32(MemoryLayout<missive_plugin>.size),
                name: copy(name), version: copy(version), vendor: copy(vendor),
                type_count: UInt32(exports.count), types: UnsafePointer(typeTable), get_extension: nil,
                container_count: UInt32(containers.count), containers: UnsafePointer(containerTable),
                context: UnsafeMutableRawPointer(actionsExtension), get_plugin_extension: actions.isEmpty ? nil : pluginExtensionThunk))
    }

    deinit {
        for allocation in allocations { free(allocation) }
        typeTable.deallocate()
        containerTable.deallocate()
        actionTable.deallocate()
        actionsExtension.deallocate()
        plugin.deallocate()
    }

    /// What `missive_plugin_entry_v1` returns: the descriptor. A host of another ABI major never calls this
    /// entry (the major is in its name), and the host refuses a plugin of a newer minor from its metadata.
    public func entry(host: UnsafeRawPointer?) -> UnsafeRawPointer? {
        UnsafeRawPointer(plugin)
    }

    private func describe(_ export: AnyTypeExport) -> UnsafeMutablePointer<missive_type> {
        let examples = export.examples
        let exampleTable = allocate(missive_bytes.self, count: max(examples.count, 1))
        for (index, example) in examples.enumerated() {
            let storage = allocate(UInt8.self, count: max(example.count, 1))
            storage.initialize(from: example, count: example.count)
            exampleTable[index] = missive_bytes(bytes: UnsafePointer(storage), length: example.count)
        }
        let type = allocate(missive_type.self, count: 1)
        type.initialize(
            to: missive_type(
                struct_size: UInt32(MemoryLayout<missive_type>.size),
                flags: export.isMedia ? UInt32(MISSIVE_TYPE_MEDIA) : 0,
                object_name: copy(export.objectName),
                business_id: export.container == nil ? export.businessID.map(copy) : nil,
                persistence: export.persistence.rawValue,
                example_count: UInt32(examples.count),
                examples: UnsafePointer(exampleTable),
                context: Unmanaged.passUnretained(export).toOpaque(),
                decode: decodeThunk, release: releaseThunk, encode: encodeThunk, digest: digestThunk,
                push_content: pushThunk, searchable_words: wordsThunk,
                media: export.isMedia ? mediaThunk : nil, get_extension: extensionThunk,
                container: export.container.map(copy), container_value: export.container == nil ? nil : export.businessID.map(copy)))
        return type
    }

    private func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let raw = malloc(MemoryLayout<T>.stride * count)!
        allocations.append(raw)
        return raw.bindMemory(to: T.self, capacity: count)
    }

    private func copy(_ text: String) -> UnsafePointer<CChar> {
        let storage = strdup(text)!
        allocations.append(UnsafeMutableRawPointer(storage))
        return UnsafePointer(storage)
    }
}

// MARK: - Type-erased exports

/// One exported type; the C functions reach it through their context pointer.
class AnyTypeExport {
    var objectName: String { fatalError("abstract") }
    var businessID: String? { fatalError("abstract") }
    var container: String? { fatalError("abstract") }
    var persistence: Persistence { fatalError("abstract") }
    var isMedia: Bool { fatalError("abstract") }
    var describesView: Bool { fatalError("abstract") }
    var examples: [[UInt8]] { fatalError("abstract") }
    var actions: [ActionExport] { fatalError("abstract") }
    func decode(_ content: UnsafeRawBufferPointer) throws -> AnyMessageBox { fatalError("abstract") }
}

/// A decoded message behind a `missive_message *` handle.
class AnyMessageBox {
    func encode() throws -> Data { fatalError("abstract") }
    var digest: String { fatalError("abstract") }
    var pushContent: String? { fatalError("abstract") }
    var searchableWords: [String]? { fatalError("abstract") }
    var media: MediaReference? { fatalError("abstract") }
    var view: ViewElement? { fatalError("abstract") }
}

private func makeExport<T: MessageType>(_ type: T.Type) -> AnyTypeExport { TypeExport<T>() }

private final class TypeExport<T: MessageType>: AnyTypeExport {
    override var objectName: String { T.objectName }
    override var businessID: String? { T.businessID }
    override var container: String? { T.container }
    override var persistence: Persistence { T.persistence }
    override var isMedia: Bool { T.isMediaType }
    override var describesView: Bool { T.describesView && T.persistence != .status }
    override var examples: [[UInt8]] { T.examples.compactMap { try? Array($0.encode()) } }
    override var actions: [ActionExport] { (T.self as? any MissiveActionProviding.Type)?._missiveActions ?? [] }
    /// `init(decodingBytes:)` reads the host's bytes where they are when the type's `init(decoding:)` is the
    /// generated one, and copies them into `Data` for a hand-written one.
    override func decode(_ content: UnsafeRawBufferPointer) throws -> AnyMessageBox { MessageBox(try T(decodingBytes: content)) }
}

final class MessageBox<T: MessageType>: AnyMessageBox {
    let value: T
    init(_ value: T) { self.value = value }
    override func encode() throws -> Data { try value.encode() }
    override var digest: String { value.digest }
    override var pushContent: String? { T.persistence == .status ? nil : value.pushContent }
    override var searchableWords: [String]? { value.searchableWords }
    override var media: MediaReference? { (value as? any MediaMessageContent)?.media }
    override var view: ViewElement? { (value as? any MessageViewContent)?.view }
}

// MARK: - The C functions

private func export(_ context: UnsafeMutableRawPointer?) -> AnyTypeExport {
    Unmanaged<AnyTypeExport>.fromOpaque(context!).takeUnretainedValue()
}

private func box(_ handle: OpaquePointer?) -> AnyMessageBox {
    Unmanaged<AnyMessageBox>.fromOpaque(UnsafeRawPointer(handle!)).takeUnretainedValue()
}

private func write(_ text: String, to sink: UnsafePointer<missive_sink>?) {
    guard let sink else { return }
    var text = text
    text.withUTF8 { sink.pointee.write(sink.pointee.context, $0.baseAddress, $0.count) }
}

private let decodeThunk: @convention(c) (
    UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<missive_sink>?
) -> Int32 = { context, bytes, length, out, errorSink in
    out?.pointee = nil
    // The host's buffer is valid only during this call: the generated decoding copies out what it keeps, and
    // a hand-written init(decoding:), which may keep its Data, gets a copy (MessageCoding.init(decodingBytes:)).
    guard length >= 0 else { return MISSIVE_INVALID_CONTENT }
    let content = UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : length)
    do {
        let decoded = try export(context).decode(content)
        out?.pointee = OpaquePointer(Unmanaged.passRetained(decoded).toOpaque())
        return MISSIVE_OK
    } catch {
        write(MissiveJSON.describe(error), to: errorSink)
        return MISSIVE_INVALID_CONTENT
    }
}

private let releaseThunk: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void = { _, handle in
    guard let handle else { return }
    Unmanaged<AnyMessageBox>.fromOpaque(UnsafeRawPointer(handle)).release()
}

private let encodeThunk: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<missive_sink>?) -> Int32 = { _, handle, sink in
    guard let sink else { return MISSIVE_FAILED }
    do {
        let data = try box(handle).encode()
        data.withUnsafeBytes { sink.pointee.write(sink.pointee.context, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        return MISSIVE_OK
    } catch {
        // The reason mark, then the reason (missive_plugin.h, "Buffers and sinks").
        sink.pointee.write(sink.pointee.context, nil, 0)
        write("\(error)", to: sink)
        return MISSIVE_FAILED
    }
}

// The digest and push text are cleaned as a host would repair them (missive_plugin.h, "Text shown to people"),
// so that a type whose digest shows text from its content keeps the one-line rule whatever the content holds.
private let digestThunk: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<missive_sink>?) -> Int32 = { _, handle, sink in
    write(TextHygiene.digest(box(handle).digest), to: sink)
    return MISSIVE_OK
}

private let pushThunk: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<missive_sink>?) -> Int32 = { _, handle, sink in
    guard let text = box(handle).pushContent else { return MISSIVE_ABSENT }
    write(TextHygiene.digest(text), to: sink)
    return MISSIVE_OK
}

private let wordsThunk: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<missive_sink>?) -> Int32 = { _, handle, sink in
    guard let words = box(handle).searchableWords, !words.isEmpty else { return MISSIVE_ABSENT }
    for word in words { write(word, to: sink) }
    return MISSIVE_OK
}

/// The `missive.text.v1` extension every type shares: the digest, push text and words in one call, written
/// exactly as the three thunks above write them, so that the two ways agree (missive_plugin.h, "The text
/// extension"). Allocated once and never freed, as the ABI requires of extensions.
nonisolated(unsafe) private let textExtension: UnsafeMutablePointer<missive_text_v1> = {
    let pointer = UnsafeMutablePointer<missive_text_v1>.allocate(capacity: 1)
    pointer.initialize(to: missive_text_v1(struct_size: UInt32(MemoryLayout<missive_text_v1>.size), texts: textsThunk))
    return pointer
}()

private let textsThunk: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<missive_text_out>?) -> Int32 = { _, handle, out in
    guard let out else { return MISSIVE_FAILED }
    let message = box(handle)
    withUnsafePointer(to: out.pointee.digest) { write(TextHygiene.digest(message.digest), to: $0) }
    out.pointee.digest_status = MISSIVE_OK
    // The host sets push_status to MISSIVE_ABSENT when it does not want the push text now.
    if out.pointee.push_status == MISSIVE_ABSENT {
        // Left as it is: not wanted.
    } else if let text = message.pushContent {
        withUnsafePointer(to: out.pointee.push_content) { write(TextHygiene.digest(text), to: $0) }
        out.pointee.push_status = MISSIVE_OK
    } else {
        out.pointee.push_status = MISSIVE_ABSENT
    }
    if let words = message.searchableWords, !words.isEmpty {
        withUnsafePointer(to: out.pointee.searchable_words) { sink in
            for word in words { write(word, to: sink) }
        }
        out.pointee.words_status = MISSIVE_OK
    } else {
        out.pointee.words_status = MISSIVE_ABSENT
    }
    return MISSIVE_OK
}

private let mediaThunk: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<missive_media_out>?) -> Int32 = { _, handle, out in
    guard let out, let media = box(handle).media else { return MISSIVE_ABSENT }
    if let url = media.remoteURL { withUnsafePointer(to: out.pointee.remote_url) { write(url, to: $0) } }
    if let path = media.localPath { withUnsafePointer(to: out.pointee.local_path) { write(path, to: $0) } }
    withUnsafePointer(to: out.pointee.mime_type) { write(media.mimeType, to: $0) }
    if let size = media.sizeBytes { out.pointee.size_bytes = size }
    return MISSIVE_OK
}

/// The `missive.view.v1` extension every type that describes a view shares: its function reaches the
/// message through the handle. Allocated once and never freed, as the ABI requires of extensions.
nonisolated(unsafe) private let viewExtension: UnsafeMutablePointer<missive_view_v1> = {
    let pointer = UnsafeMutablePointer<missive_view_v1>.allocate(capacity: 1)
    pointer.initialize(to: missive_view_v1(struct_size: UInt32(MemoryLayout<missive_view_v1>.size), view: viewThunk))
    return pointer
}()

/// The plugin-wide `get_plugin_extension`: its context is the plugin's `missive.actions.v1` extension.
private let pluginExtensionThunk: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> UnsafeRawPointer? = { context, id in
    guard let id, strcmp(id, MISSIVE_ACTIONS_EXTENSION) == 0 else { return nil }
    return UnsafeRawPointer(context)
}

/// Every type's `get_extension`: `missive.text.v1` for all, `missive.view.v1` for a type that describes a view.
private let extensionThunk: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> UnsafeRawPointer? = { context, id in
    guard let id else { return nil }
    if strcmp(id, MISSIVE_TEXT_EXTENSION) == 0 { return UnsafeRawPointer(textExtension) }
    guard strcmp(id, MISSIVE_VIEW_EXTENSION) == 0, let context,
        Unmanaged<AnyTypeExport>.fromOpaque(context).takeUnretainedValue().describesView
    else { return nil }
    return UnsafeRawPointer(viewExtension)
}

private let viewThunk: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<missive_sink>?) -> Int32 = { _, handle, sink in
    guard let sink, let view = box(handle).view else { return MISSIVE_ABSENT }
    let document = ViewDocument.encode(view)
    document.withUnsafeBufferPointer { sink.pointee.write(sink.pointee.context, $0.baseAddress, $0.count) }
    return MISSIVE_OK
}
