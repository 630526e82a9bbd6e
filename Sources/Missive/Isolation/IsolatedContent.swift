import MissiveCore

/// What an isolated plugin's worker answered for one message: everything a host reads of it, fetched in the one
/// crossing of the decode. The view and the type's own encoding come with it only when asked for, and are fetched
/// on first use otherwise.
struct IsolatedParts: Sendable {
    let digest: String
    let pushContent: String?
    let searchableWords: [String]
    let media: MediaReference?
    /// `nil` when not asked for; else the view document (`nil` when the type has none for the message) or the failure.
    let view: Result<[UInt8]?, MissiveError>?
    /// `nil` when not asked for; else the type's encoding or the failure.
    let encoding: Result<[UInt8]?, MissiveError>?

    /// The same answers, with the parts `flags` name failed with `error`.
    func failing(_ flags: WorkerWire.DecodeFlags, with error: MissiveError) -> IsolatedParts {
        IsolatedParts(
            digest: digest, pushContent: pushContent, searchableWords: searchableWords, media: media,
            view: flags.contains(.view) ? .failure(error) : view, encoding: flags.contains(.encoding) ? .failure(error) : encoding)
    }
}

/// The content of a message decoded by a plugin that runs isolated, in a worker process of its own
/// (``PluginIsolation``).
///
/// The worker decoded the content and answered its digest, push text, words and media in the same crossing; the
/// values here are those answers, cleaned by the same rules as ``PluginContent``'s (the worker applies them). The
/// view and the type's own encoding cross on first use, and are kept.
public final class IsolatedContent: MessageContent, Sendable {
    /// The plugin the content's type comes from.
    public var plugin: PluginInfo { isolated.info }
    public let objectName: String
    public let businessID: String?
    /// The objectName of the container that ``businessID`` belongs to, or `nil` when the type has no ``businessID``.
    public let container: String?
    public let persistence: Persistence
    public let receivedContent: [UInt8]?
    public var digest: String { parts.digest }
    public var pushContent: String? { parts.pushContent }
    public var searchableWords: [String] { parts.searchableWords }
    public var media: MediaReference? { parts.media }

    let isolated: IsolatedPlugin
    private let parts: IsolatedParts
    private let fetched: Locked<(view: Result<[UInt8]?, MissiveError>?, encoding: Result<[UInt8]?, MissiveError>?)>

    init(type: RegisteredType, plugin: IsolatedPlugin, received: [UInt8], parts: IsolatedParts) {
        self.objectName = type.objectName
        self.businessID = type.businessID
        self.container = type.container
        self.persistence = type.persistence
        self.receivedContent = received
        self.isolated = plugin
        self.parts = parts
        self.fetched = Locked((parts.view, parts.encoding))
    }

    /// The content to send: the bytes received, unchanged.
    public func encodedContent() throws(MissiveError) -> [UInt8] {
        receivedContent ?? []
    }

    /// The content as the plugin's `encode` writes it (one crossing to the worker, the first time).
    public func typeEncodedContent() throws(MissiveError) -> [UInt8] {
        guard let bytes = try part(\.encoding, flag: .encoding).get() else {
            throw MissiveError(.pluginFailure, "encode gave nothing", file: isolated.path, objectName: objectName)
        }
        return bytes
    }

    /// The view the type describes for this message, read and sanitized; `nil` when it describes none. Throws when
    /// the view function fails, or the worker did on this message.
    public func describedView() throws(MissiveError) -> ViewReading? {
        guard let bytes = try part(\.view, flag: .view).get() else { return nil }
        return ViewDocument.read(bytes)
    }

    /// A part that crosses on first use: kept once fetched.
    private func part(
        _ keyPath: WritableKeyPath<(view: Result<[UInt8]?, MissiveError>?, encoding: Result<[UInt8]?, MissiveError>?), Result<[UInt8]?, MissiveError>?>,
        flag: WorkerWire.DecodeFlags
    ) -> Result<[UInt8]?, MissiveError> {
        if let kept = fetched.withLock({ $0[keyPath: keyPath] }) { return kept }
        let answer: Result<[UInt8]?, MissiveError>
        let operation: PluginFailure.Operation = flag == .view ? .view : .encoding
        if let remembered = isolated.rememberedFailure(objectName: objectName, content: receivedContent ?? [], operation: operation) {
            // The part failed on this content before: not asked again.
            answer = .failure(remembered)
        } else {
            answer = fetch(flag)
        }
        fetched.withLock { $0[keyPath: keyPath] = answer }
        return answer
    }

    /// A part, from the worker.
    private func fetch(_ flag: WorkerWire.DecodeFlags) -> Result<[UInt8]?, MissiveError> {
        let answer: Result<[UInt8]?, MissiveError>
        switch isolated.decode([(objectName, receivedContent ?? [])], flags: flag).first {
        case .decoded(let parts)?:
            answer = (flag == .view ? parts.view : parts.encoding) ?? .success(nil)
        case .failed(let error)?:
            answer = .failure(error)
        case nil:
            answer = .failure(MissiveError(.pluginCrashed, "the worker gave no answer", file: isolated.path, objectName: objectName))
        }
        return answer
    }
}
