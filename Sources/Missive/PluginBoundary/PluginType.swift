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

    /// `ABI 1.0, Swift 6.3.1`, or `ABI 1.0, no Swift runtime` for a plugin that records no compiler.
    static func buildDescription(abi: String, swift: String?) -> String {
        "ABI \(abi), " + (swift.map { "Swift \($0)" } ?? "no Swift runtime")
    }
}

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

    /// The plugin the type belongs to.
    package let plugin: PluginInfo
    /// The type's objectName.
    package let objectName: String
    /// The type's business identifier.
    package let businessID: String?
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

    /// Reads one type descriptor: its size first, then its fields.
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
        guard let decode = descriptor.decode, let release = descriptor.release, let encode = descriptor.encode,
            let digest = descriptor.digest
        else {
            throw invalid("decode, release, encode and digest are required", name)
        }
        var examples: [[UInt8]] = []
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
        self.businessID = descriptor.business_id.map { String(cString: $0) }
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

    /// Decodes content through the plugin; on failure, the reason the plugin gave.
    package func decode(_ content: UnsafeBufferPointer<UInt8>) -> Result<PluginContent, MissiveError> {
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

    fileprivate func encode(_ handle: OpaquePointer) -> (status: Int32, bytes: [UInt8]) {
        PluginSinks.collectingBytes { encodeFunction(context, handle, $0) }
    }

    fileprivate func digest(_ handle: OpaquePointer) -> (status: Int32, bytes: [UInt8]) {
        PluginSinks.collectingBytes { digestFunction(context, handle, $0) }
    }

    fileprivate func pushContent(_ handle: OpaquePointer) -> (status: Int32, bytes: [UInt8])? {
        pushFunction.map { push in PluginSinks.collectingBytes { push(context, handle, $0) } }
    }

    fileprivate func searchableWords(_ handle: OpaquePointer) -> (status: Int32, pieces: [[UInt8]])? {
        wordsFunction.map { words in PluginSinks.collectingPieces { words(context, handle, $0) } }
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

    public var digest: String {
        let (status, bytes) = type.digest(handle)
        return status == MISSIVE_OK ? String(decoding: bytes, as: UTF8.self) : ""
    }

    public var pushContent: String? {
        guard type.persistence != .status else { return nil }
        guard let (status, bytes) = type.pushContent(handle) else { return digest }
        return status == MISSIVE_OK ? String(decoding: bytes, as: UTF8.self) : nil
    }

    public var searchableWords: [String] {
        guard let (status, words) = type.searchableWords(handle), status == MISSIVE_OK else { return [] }
        return words.map { String(decoding: $0, as: UTF8.self) }
    }

    public var media: MediaReference? { type.media(handle) }

    public func encodedContent() throws(MissiveError) -> [UInt8] {
        let (status, bytes) = type.encode(handle)
        guard status == MISSIVE_OK else {
            throw MissiveError(.pluginFailure, "encode failed with status \(status)", file: type.plugin.path, objectName: type.objectName)
        }
        // A plugin's output goes into envelopes and JSON Lines: it must be exactly one JSON value.
        if let problem = JSONScanner.problem(in: bytes) {
            throw MissiveError(.pluginFailure, "encode produced invalid JSON: \(problem)", file: type.plugin.path, objectName: type.objectName)
        }
        return bytes
    }

    // MARK: Raw results, as the plugin gave them, for conformance checks

    /// The status and bytes `encode` gave, unchecked.
    package func rawEncode() -> (status: Int32, bytes: [UInt8]) { type.encode(handle) }
    /// The status and bytes `digest` gave, unchecked.
    package func rawDigest() -> (status: Int32, bytes: [UInt8]) { type.digest(handle) }
    /// The status and bytes `push_content` gave, or `nil` when the type has no such function.
    package func rawPushContent() -> (status: Int32, bytes: [UInt8])? { type.pushContent(handle) }
    /// The status and pieces `searchable_words` gave, or `nil` when the type has no such function.
    package func rawSearchableWords() -> (status: Int32, pieces: [[UInt8]])? { type.searchableWords(handle) }
}
