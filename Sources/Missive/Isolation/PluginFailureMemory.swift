import Foundation

/// A message an isolated plugin failed on: its worker crashed, hung past its deadline, broke its protocol or was
/// stopped by its system-call filter while it handled that content.
///
/// ``PluginFailureMemory`` keeps failures by ``Key``, so that the same content is not handed to the same build of
/// the plugin again: a later call answers at once with the failure. A store keeps them too (`MessageStore`'s
/// `recordPluginFailures(_:)`), so that they outlive the process.
public struct PluginFailure: Sendable, Hashable {
    /// What the plugin was asked to do when it failed.
    public struct Operation: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// `decode`, `view`, `encoding`, or `action:` and the action's id.
        public let rawValue: String

        /// The operation spelled `rawValue`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Decoding the content, with its digest, push text, words and media (one call in the worker): when it fails,
        /// the message is an ``UnknownMessage`` whose reason is ``UnknownMessage/Reason/pluginCrashed(_:)``.
        public static let decode = Operation(rawValue: "decode")
        /// Describing the content's view: when it fails, the message decodes and ``MessageContent/describedView()``
        /// throws the failure.
        public static let view = Operation(rawValue: "view")
        /// The type's own encoding of the content (``MessageContent/typeEncodedContent()``).
        public static let encoding = Operation(rawValue: "encoding")

        /// Running the message action `id` on the content, whatever its arguments.
        public static func action(_ id: String) -> Operation {
            Operation(rawValue: "action:" + id)
        }

        public var description: String { rawValue }
    }

    /// What a failure is remembered by: the same plugin build, type, content and operation.
    public struct Key: Sendable, Hashable {
        /// The SHA-256 of the plugin file's content, in lowercase hexadecimal.
        public var pluginSHA256: String
        /// The objectName of the content's type.
        public var objectName: String
        /// The SHA-256 of the content's bytes, in lowercase hexadecimal.
        public var contentSHA256: String
        /// What the plugin was asked to do.
        public var operation: Operation

        /// A key; see each property.
        public init(pluginSHA256: String, objectName: String, contentSHA256: String, operation: Operation) {
            self.pluginSHA256 = pluginSHA256
            self.objectName = objectName
            self.contentSHA256 = contentSHA256
            self.operation = operation
        }
    }

    /// The plugin build, type, content and operation that failed.
    public var key: Key
    /// Why it failed, as the worker's failure was described the first time (`its worker hung: ...`), without what
    /// the worker wrote.
    public var reason: String
    /// The plugin file's path when it failed, for an operator: the key holds the file's content hash, not its path.
    public var file: String
    /// When it failed.
    public var date: Date

    /// A failure; see each property.
    public init(key: Key, reason: String, file: String, date: Date) {
        self.key = key
        self.reason = reason
        self.file = file
        self.date = date
    }

    /// The SHA-256 of `bytes` in lowercase hexadecimal, as ``Key/contentSHA256`` holds it.
    public static func sha256(_ bytes: [UInt8]) -> String {
        TrustFiles.sha256(bytes).hex
    }

    /// What a remembered failure says, before its first reason.
    public static let rememberedPhrase =
        "it failed on this content before and is not tried again until the plugin file changes or an operator retries it (missive store redecode)"

    /// The error a later call with the same key answers with, at once: code ``MissiveError/Code/pluginCrashed``, the
    /// message ``rememberedPhrase`` and the first ``reason``.
    func error(file: String, action: String? = nil) -> MissiveError {
        MissiveError(.pluginCrashed, "\(Self.rememberedPhrase): \(reason)", file: file, objectName: key.objectName, action: action)
    }
}

/// The messages isolated plugins failed on, so that each costs its deadline once (docs/PROTECTION.md, "Isolated
/// plugins").
///
/// When an isolated plugin's worker crashes, hangs or is stopped by its filter on a message (its decode, its view or
/// type encoding, or a message action on it), the plugin records a ``PluginFailure`` here; a later call with the same
/// ``PluginFailure/Key`` is answered with the failure at once, and the worker never sees the content again. The key
/// holds the SHA-256 of the plugin file's content: a new build of the plugin (or another file at the same path) has
/// another hash, and tries the message again; a file that is only touched or copied keeps its hash and its failures.
///
/// Discovery gives each isolated plugin ``PluginProtection/failureMemory``, or a memory of its own for the plugins it
/// finds when that is `nil` (``MessageRegistry/pluginFailureMemories`` lists them). A memory lives in the process; a
/// host that keeps a store fills it from the store (``reload(_:)``) and writes what it records back
/// (``unsavedFailures`` and ``markSaved(_:)``), as `missive serve` and `missive store` do. Every method is safe to
/// call from any thread.
public final class PluginFailureMemory: Sendable {
    /// Failures are found by content first, so that a miss costs a hash of the content and no hash of a plugin file.
    private struct ContentKey: Hashable {
        let objectName: String
        let contentSHA256: String
    }

    private struct State {
        var byContent: [ContentKey: [PluginFailure]] = [:]
        var count = 0
        /// Recorded here and not yet in a store.
        var unsaved: [PluginFailure.Key: PluginFailure] = [:]
        /// Grows with every change, so that a caller that waited can tell whether to look again.
        var generation: UInt64 = 0

        mutating func insert(_ failure: PluginFailure) {
            let content = ContentKey(objectName: failure.key.objectName, contentSHA256: failure.key.contentSHA256)
            if let index = byContent[content]?.firstIndex(where: { $0.key == failure.key }) {
                byContent[content]![index] = failure
            } else {
                byContent[content, default: []].append(failure)
                count += 1
            }
        }
    }

    private let state = Locked(State())
    /// Each plugin file's identity (path, device, inode, size, times) and content hash, hashed again when the identity
    /// changes.
    private let pluginHashes = Locked<[String: (identity: FileIdentity, sha256: String)]>([:])

    /// A memory holding `failures` (read from a store, say); they are not ``unsavedFailures``.
    public init(_ failures: [PluginFailure] = []) {
        remember(failures)
    }

    /// Every remembered failure, oldest first.
    public var failures: [PluginFailure] {
        state.withLock { $0.byContent.values.joined().sorted { ($0.date, $0.key.contentSHA256) < ($1.date, $1.key.contentSHA256) } }
    }

    /// How many failures are remembered.
    public var count: Int { state.withLock { $0.count } }

    /// Remembers failures that are kept elsewhere already (a store's): they are not ``unsavedFailures``. A failure
    /// with the key of one remembered replaces it.
    public func remember(_ failures: [PluginFailure]) {
        guard !failures.isEmpty else { return }
        state.withLock { state in
            for failure in failures { state.insert(failure) }
            state.generation += 1
        }
    }

    /// Replaces what is remembered with `failures` (a store's, read again), keeping the ``unsavedFailures``: failures
    /// that were forgotten in the store are forgotten here too.
    public func reload(_ failures: [PluginFailure]) {
        state.withLock { state in
            let unsaved = state.unsaved
            state.byContent = [:]
            state.count = 0
            for failure in failures { state.insert(failure) }
            for failure in unsaved.values { state.insert(failure) }
            state.generation += 1
        }
    }

    /// Forgets the failures of the plugin builds whose SHA-256s are given, or every failure when `pluginSHA256s` is
    /// `nil`, so that their messages are tried again.
    ///
    /// - Returns: how many were forgotten.
    @discardableResult
    public func forget(pluginSHA256s: Set<String>? = nil) -> Int {
        state.withLock { state in
            let before = state.count
            if let pluginSHA256s {
                state.byContent = state.byContent.compactMapValues { failures in
                    let kept = failures.filter { !pluginSHA256s.contains($0.key.pluginSHA256) }
                    return kept.isEmpty ? nil : kept
                }
                state.unsaved = state.unsaved.filter { !pluginSHA256s.contains($0.key.pluginSHA256) }
                state.count = state.byContent.values.reduce(0) { $0 + $1.count }
            } else {
                state.byContent = [:]
                state.unsaved = [:]
                state.count = 0
            }
            state.generation += 1
            return before - state.count
        }
    }

    /// The failures recorded in this process that no store has yet, oldest first: a host writes them to its store,
    /// then calls ``markSaved(_:)``.
    public var unsavedFailures: [PluginFailure] {
        state.withLock { $0.unsaved.values.sorted { $0.date < $1.date } }
    }

    /// Takes failures out of ``unsavedFailures`` once a store holds them (those recorded again since stay).
    public func markSaved(_ failures: [PluginFailure]) {
        state.withLock { state in
            for failure in failures where state.unsaved[failure.key] == failure { state.unsaved[failure.key] = nil }
        }
    }

    // MARK: For isolated plugins

    /// Whether nothing is remembered: a call then hashes no content.
    var isEmpty: Bool { state.withLock { $0.count == 0 } }

    /// Changes with every failure remembered or forgotten.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// The failure remembered for content of `objectName` whose SHA-256 is `contentSHA256`, done by `operation` by
    /// the plugin file at `file` as it is now.
    func failure(file: String, objectName: String, contentSHA256: String, operation: PluginFailure.Operation) -> PluginFailure? {
        let content = ContentKey(objectName: objectName, contentSHA256: contentSHA256)
        let candidates = state.withLock { $0.byContent[content]?.filter { $0.key.operation == operation } ?? [] }
        guard !candidates.isEmpty, let plugin = pluginSHA256(ofFile: file) else { return nil }
        return candidates.first { $0.key.pluginSHA256 == plugin }
    }

    /// Records that the plugin file at `file` failed on `content` of `objectName`, for each of `operations`, and
    /// returns the failures; none when the file cannot be read to hash it (it is then not remembered).
    @discardableResult
    func record(file: String, objectName: String, content: [UInt8], operations: [PluginFailure.Operation], reason: String) -> [PluginFailure] {
        guard !operations.isEmpty, let plugin = pluginSHA256(ofFile: file) else { return [] }
        let contentSHA256 = PluginFailure.sha256(content)
        let now = Date()
        let failures = operations.map { operation in
            PluginFailure(
                key: PluginFailure.Key(pluginSHA256: plugin, objectName: objectName, contentSHA256: contentSHA256, operation: operation), reason: reason,
                file: file, date: now)
        }
        state.withLock { state in
            for failure in failures {
                state.insert(failure)
                state.unsaved[failure.key] = failure
            }
            state.generation += 1
        }
        return failures
    }

    /// The SHA-256 of the plugin file at `path` as it is now: hashed again only when its identity changed.
    func pluginSHA256(ofFile path: String) -> String? {
        guard let identity = FileIdentity.of(path) else { return nil }
        if let known = pluginHashes.withLock({ $0[path] }), known.identity == identity { return known.sha256 }
        guard let sha256 = PluginProtection.contentHash(of: path) else { return nil }
        pluginHashes.withLock { $0[path] = (identity, sha256) }
        return sha256
    }
}
