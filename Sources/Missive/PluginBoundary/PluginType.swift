import CMissivePlugin
import MissiveCore

/// Who provided a plugin: its declared identity and the file it was loaded from.
public struct PluginInfo: Sendable, Hashable, CustomStringConvertible {
    /// The plugin's name.
    public let name: String
    /// The plugin's version.
    public let version: String
    /// Who made it.
    public let vendor: String
    /// The ABI version the plugin reported, as `major.minor`.
    public let abiVersion: String
    /// The path it was loaded from.
    public let path: String

    /// `name version (path)`.
    public var description: String { "\(name) \(version) (\(path))" }
}

/// One message type of a loaded plugin: its validated descriptor and its function pointers.
///
/// Values are immutable: the ABI requires the descriptor to stay valid and unchanged for the life of the
/// process, and the functions to be callable from any thread, which is what makes this `Sendable`.
final class PluginType: @unchecked Sendable {
    typealias DecodeFunction = @convention(c) (
        UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<missive_sink>?
    ) -> Int32
    typealias ReleaseFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void
    typealias WriteFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<missive_sink>?) -> Int32
    typealias MediaFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<missive_media_out>?) -> Int32

    let plugin: PluginInfo
    let objectName: String
    let businessID: String?
    let persistence: Persistence
    let isMedia: Bool
    let examples: [[UInt8]]

    private let context: UnsafeMutableRawPointer?
    private let decodeFunction: DecodeFunction
    private let releaseFunction: ReleaseFunction
    private let encodeFunction: WriteFunction
    private let digestFunction: WriteFunction
    private let pushFunction: WriteFunction?
    private let wordsFunction: WriteFunction?
    private let mediaFunction: MediaFunction?

    /// Validates one type descriptor. The strings and persistence are checked by the caller against the
    /// metadata and the name grammar; here only what the ABI itself requires.
    init(_ type: UnsafePointer<missive_type>, plugin: PluginInfo) throws(MissiveError) {
        func invalid(_ message: String, _ name: String? = nil) -> MissiveError {
            MissiveError(.invalidDescriptor, message, file: plugin.path, objectName: name)
        }
        // Only struct_size may be read before it is checked.
        let structSize = UnsafeRawPointer(type).load(as: UInt32.self)
        guard structSize >= MemoryLayout<missive_type>.size else {
            throw invalid("type descriptor is \(structSize) bytes; ABI 1.0 needs \(MemoryLayout<missive_type>.size)")
        }
        let descriptor = type.pointee
        guard let namePointer = descriptor.object_name else { throw invalid("a type has no object_name") }
        let name = String(cString: namePointer)
        guard let persistence = Persistence(rawValue: descriptor.persistence) else {
            throw invalid("persistence \(descriptor.persistence) is not one of 0, 1, 3 and 16", name)
        }
        guard let decode = descriptor.decode, let release = descriptor.release, let encode = descriptor.encode,
            let digest = descriptor.digest
        else {
            throw invalid("decode, release, encode and digest are required", name)
        }
        let isMedia = descriptor.flags & UInt32(MISSIVE_TYPE_MEDIA) != 0
        if isMedia && descriptor.media == nil { throw invalid("a media type must provide media", name) }
        guard descriptor.example_count > 0, let examples = descriptor.examples else {
            throw invalid("a type must ship at least one example content", name)
        }
        self.plugin = plugin
        self.objectName = name
        self.businessID = descriptor.business_id.map { String(cString: $0) }
        self.persistence = persistence
        self.isMedia = isMedia
        self.examples = try (0..<Int(descriptor.example_count)).map { index throws(MissiveError) in
            let example = examples[index]
            guard example.length >= 0, example.length <= 16 << 20, example.bytes != nil || example.length == 0 else {
                throw invalid("example \(index) has an invalid length", name)
            }
            return example.bytes.map { Array(UnsafeBufferPointer(start: $0, count: example.length)) } ?? []
        }
        self.context = descriptor.context
        self.decodeFunction = decode
        self.releaseFunction = release
        self.encodeFunction = encode
        self.digestFunction = digest
        self.pushFunction = descriptor.push_content
        self.wordsFunction = descriptor.searchable_words
        self.mediaFunction = isMedia ? descriptor.media : nil
    }

    /// Decodes content through the plugin; on failure, the reason the plugin gave.
    func decode(_ content: UnsafeBufferPointer<UInt8>) -> Result<PluginContent, MissiveError> {
        var handle: OpaquePointer?
        let (status, reason) = PluginSinks.collectingBytes { errorSink in
            decodeFunction(context, content.baseAddress, content.count, &handle, errorSink)
        }
        // Ownership of a handle passes to the host only with MISSIVE_OK; anything else left in it is ignored.
        guard status == MISSIVE_OK, let handle else {
            let text = reason.isEmpty ? "the plugin's decoder failed with status \(status)" : String(decoding: reason, as: UTF8.self)
            return .failure(MissiveError(.malformedContent, text, file: plugin.path, objectName: objectName))
        }
        return .success(PluginContent(type: self, handle: handle))
    }

    fileprivate func release(_ handle: OpaquePointer) { releaseFunction(context, handle) }

    fileprivate func encode(_ handle: OpaquePointer) -> (Int32, [UInt8]) {
        PluginSinks.collectingBytes { encodeFunction(context, handle, $0) }
    }

    fileprivate func digest(_ handle: OpaquePointer) -> String {
        let (status, bytes) = PluginSinks.collectingBytes { digestFunction(context, handle, $0) }
        return status == MISSIVE_OK ? String(decoding: bytes, as: UTF8.self) : ""
    }

    fileprivate func pushContent(_ handle: OpaquePointer) -> String? {
        guard persistence != .status else { return nil }
        guard let pushFunction else { return digest(handle) }
        let (status, bytes) = PluginSinks.collectingBytes { pushFunction(context, handle, $0) }
        return status == MISSIVE_OK ? String(decoding: bytes, as: UTF8.self) : nil
    }

    fileprivate func searchableWords(_ handle: OpaquePointer) -> [String] {
        guard let wordsFunction else { return [] }
        let (status, words) = PluginSinks.collectingStrings { wordsFunction(context, handle, $0) }
        return status == MISSIVE_OK ? words : []
    }

    fileprivate func media(_ handle: OpaquePointer) -> MediaReference? {
        guard let mediaFunction else { return nil }
        let result = PluginSinks.collectingMedia { mediaFunction(context, handle, $0) }
        guard result.status == MISSIVE_OK else { return nil }
        func text(_ bytes: [UInt8]) -> String? { bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
        return MediaReference(
            remoteURL: text(result.url), localPath: text(result.path), mimeType: text(result.mime) ?? "",
            sizeBytes: result.size >= 0 ? result.size : nil)
    }
}

/// The content of a message decoded by a plugin: the plugin's handle, released when this value goes away.
///
/// Every property calls into the plugin, which answers from the decoded handle without parsing again.
public final class PluginContent: MessageContent, @unchecked Sendable {
    private let type: PluginType
    private let handle: OpaquePointer

    fileprivate init(type: PluginType, handle: OpaquePointer) {
        self.type = type
        self.handle = handle
    }

    deinit { type.release(handle) }

    /// The plugin the content's type comes from.
    public var plugin: PluginInfo { type.plugin }
    public var objectName: String { type.objectName }
    public var businessID: String? { type.businessID }
    public var persistence: Persistence { type.persistence }
    public var digest: String { type.digest(handle) }
    public var pushContent: String? { type.pushContent(handle) }
    public var searchableWords: [String] { type.searchableWords(handle) }
    public var media: MediaReference? { type.media(handle) }

    public func encodedContent() throws(MissiveError) -> [UInt8] {
        let (status, bytes) = type.encode(handle)
        guard status == MISSIVE_OK else {
            throw MissiveError(.pluginFailure, "encode failed with status \(status)", file: type.plugin.path, objectName: type.objectName)
        }
        // A plugin's output goes into envelopes and JSON Lines: it must be exactly one JSON value.
        let problem = JSONScanner.problem(in: bytes)
        if let problem {
            throw MissiveError(.pluginFailure, "encode produced invalid JSON: \(problem)", file: type.plugin.path, objectName: type.objectName)
        }
        return bytes
    }
}
