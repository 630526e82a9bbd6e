import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What identifies one version of a file: its device, inode, size, modification time and status-change time.
///
/// The status-change time (`ctime`) cannot be set back by a user, so a file rewritten in place with its size
/// and modification time restored (`cp -p`, `touch -d`) still gets a new identity.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64, inode: UInt64, size: Int64, seconds: Int64, nanoseconds: Int64
    var changeSeconds: Int64 = 0, changeNanoseconds: Int64 = 0

    /// The identity of the regular file at `path` (following links), or `nil` when it is not one.
    static func of(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileIdentity(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec),
            changeSeconds: Int64(info.st_ctim.tv_sec), changeNanoseconds: Int64(info.st_ctim.tv_nsec))
    }

    /// The identity without the status-change time, as the crash journal records it.
    var withoutChangeTime: FileIdentity {
        FileIdentity(device: device, inode: inode, size: size, seconds: seconds, nanoseconds: nanoseconds)
    }
}

/// A cache of plugin metadata and of the plugin scanner's verdicts, so that startup need not open and parse
/// every plugin file, as GStreamer's registry cache does.
///
/// The cache is a binary snapshot (`PluginSnapshot`), read whole with one `read` at the first lookup. Its
/// index is sorted by a hash of the path, so a start decodes only the entries of the files it finds. An
/// entry is used only when the file's path, device, inode, size, modification time and status-change time
/// are all unchanged.
///
/// The cache never vouches for a plugin: after loading, the descriptor is still compared with the metadata,
/// so a stale or tampered cache can only make a plugin be refused, never make it load under false metadata.
/// A missing, unreadable, truncated or malformed snapshot, or one of another format (such as the text cache
/// of earlier versions), is ignored and rewritten. Writes are atomic (a new temporary file, then `rename`),
/// so hosts starting at once each leave a whole snapshot, the last one written winning. Entries for files
/// a discovery did not find are dropped once the cache holds more than 2,000 entries.
public final class PluginMetadataCache: Sendable {
    /// The file the cache is kept in.
    public let file: String

    private struct Entry: Sendable {
        var identity: FileIdentity
        var metadata: PluginMetadata
        var used: Bool
        var scan: ScanRecord?
    }

    /// What the plugin scanner found for one version of a file.
    struct ScanRecord: Sendable, Equatable {
        /// Whether the file passed.
        var passed: Bool
        /// The SHA-256 of the file's content, in hexadecimal.
        var contentHash: String
        /// The Missive version that scanned it; another version scans again.
        var hostVersion: String
        /// Why it failed; empty when it passed.
        var reason: String
        /// For a scan that ran past its timeout, that timeout in seconds: a scan with a longer one tries again.
        var hungAfter: Double? = nil
    }

    /// A plugin file the scanner blacklisted.
    public struct BlacklistedFile: Sendable, Hashable {
        /// The file.
        public let path: String
        /// Why: how its scan crashed, exited or hung.
        public let reason: String
    }

    private struct State: Sendable {
        /// The snapshot read from ``file``; its entries are decoded into ``entries`` as they are looked up.
        var image: PluginSnapshot.Image?
        /// The entries decoded from the snapshot or made in this process, by path.
        var entries: [String: Entry] = [:]
        var loaded = false
        var changed = false
        var hits = 0
        var misses = 0
        /// Scan failures of entries replaced because their file changed, by path: a file whose content is
        /// the same stays blacklisted.
        var replacedFailures: [String: ScanRecord] = [:]
    }

    /// Entries for files not seen by a discovery are kept only while the cache holds fewer than this many.
    private static let capacity = 2_000
    private let state = Locked(State())

    /// A cache kept in `file`.
    public init(file: String) {
        self.file = file
    }

    /// The cache the `missive` command uses: `MISSIVE_METADATA_CACHE` if set (`off` disables it), else
    /// `$XDG_CACHE_HOME/missive/plugin-metadata-v1`, else `~/.cache/missive/plugin-metadata-v1`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginMetadataCache? {
        if let setting = environment["MISSIVE_METADATA_CACHE"], !setting.isEmpty {
            return setting == "off" ? nil : PluginMetadataCache(file: setting)
        }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return PluginMetadataCache(file: cache + "/missive/plugin-metadata-v1") }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return PluginMetadataCache(file: home + "/.cache/missive/plugin-metadata-v1")
    }

    /// How many lookups were answered from the cache, and how many had to read the file.
    public var statistics: (hits: Int, misses: Int) {
        state.withLock { ($0.hits, $0.misses) }
    }

    /// The metadata of the plugin at `path`, from the cache when the file is unchanged, else read from the
    /// file (whose size `identity` gives, so it is opened and read once) and remembered; and whether it came
    /// from the cache.
    func lookUp(_ path: String, identity: FileIdentity) throws(MissiveError) -> (metadata: PluginMetadata, fromCache: Bool) {
        let cached: PluginMetadata? = state.withLock { state in
            guard let entry = entry(path, in: &state, markingUsed: true), entry.identity == identity else { return nil }
            state.hits += 1
            return entry.metadata
        }
        if let cached { return (cached, true) }
        let metadata = try PluginMetadata.read(fromFile: path, knownSize: identity.size)
        state.withLock { state in
            if let failure = state.entries[path]?.scan, !failure.passed { state.replacedFailures[path] = failure }
            state.entries[path] = Entry(identity: identity, metadata: metadata, used: true)
            state.changed = true
            state.misses += 1
        }
        return (metadata, false)
    }

    private func loadIfNeeded(_ state: inout State) {
        guard !state.loaded else { return }
        state.loaded = true
        state.image = PluginSnapshot.Image(file: file)
        if let image = state.image { state.entries.reserveCapacity(image.count) }
        // A file that is there but is no snapshot of this format is rewritten at the next save.
        if state.image == nil && access(file, F_OK) == 0 { state.changed = true }
    }

    /// The entry for `path`: one decoded already, or decoded now from the snapshot; `markingUsed` marks it
    /// as used by this discovery. A malformed entry is dropped (and the snapshot rewritten without it).
    private func entry(_ path: String, in state: inout State, markingUsed: Bool = false) -> Entry? {
        loadIfNeeded(&state)
        if let index = state.entries.index(forKey: path) {
            if markingUsed { state.entries.values[index].used = true }
            return state.entries.values[index]
        }
        guard let image = state.image else { return nil }
        for position in image.positions(of: PluginSnapshot.hash(path)) where image.entry(position, isFor: path) {
            guard let record = image.record(position, path: path) else {
                state.changed = true
                return nil
            }
            let entry = Entry(identity: record.identity, metadata: record.metadata, used: markingUsed, scan: record.scan)
            state.entries[path] = entry
            return entry
        }
        return nil
    }

    /// Decodes every entry of the snapshot, for the calls that look at all of them.
    private func decodeAll(_ state: inout State) {
        loadIfNeeded(&state)
        guard let image = state.image else { return }
        for position in 0..<image.count {
            guard let record = image.record(position) else {
                state.changed = true
                continue
            }
            if state.entries[record.path] == nil {
                state.entries[record.path] = Entry(identity: record.identity, metadata: record.metadata, used: false, scan: record.scan)
            }
        }
        state.image = nil
    }

    /// The scanner's verdict on the file at `path` as it is now (`identity`), by this version of Missive.
    func scanRecord(_ path: String, identity: FileIdentity) -> ScanRecord? {
        state.withLock { state in
            guard let entry = entry(path, in: &state), entry.identity == identity, let scan = entry.scan, scan.hostVersion == MissiveVersion.string else {
                return nil
            }
            return scan
        }
    }

    /// The failed scan of an earlier version of the file at `path`, if it had one.
    func earlierFailure(_ path: String) -> ScanRecord? {
        state.withLock { $0.replacedFailures[path] }
    }

    /// Remembers the scanner's verdict on the file at `path` as it is now.
    func record(_ scan: ScanRecord, for path: String, identity: FileIdentity) {
        state.withLock { state in
            guard entry(path, in: &state)?.identity == identity else { return }
            state.entries[path]?.scan = scan
            state.replacedFailures[path] = nil
            state.changed = true
        }
    }

    /// The files the scanner blacklisted, by path; an entry whose file changed since is still listed, as
    /// its next scan decides.
    public func blacklisted() -> [BlacklistedFile] {
        state.withLock { state in
            decodeAll(&state)
            return state.entries.compactMap { path, entry in
                guard let scan = entry.scan, !scan.passed else { return nil }
                return BlacklistedFile(path: path, reason: scan.reason)
            }.sorted { $0.path < $1.path }
        }
    }

    /// Forgets the scanner's verdicts on `paths` (every file when `nil`), so that they are scanned again at
    /// the next start, and saves the cache; returns the blacklisted files it released.
    public func clearScans(_ paths: [String]? = nil) -> [BlacklistedFile] {
        let names = paths.map { Set($0 + $0.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }) }
        let released: [BlacklistedFile] = state.withLock { state in
            decodeAll(&state)
            var released: [BlacklistedFile] = []
            for (path, entry) in state.entries where names?.contains(path) ?? true {
                guard let scan = entry.scan else { continue }
                if !scan.passed { released.append(BlacklistedFile(path: path, reason: scan.reason)) }
                state.entries[path]?.scan = nil
                state.changed = true
            }
            return released.sorted { $0.path < $1.path }
        }
        save()
        return released
    }

    /// Writes the snapshot back if it changed, dropping entries this discovery did not use once it is full.
    /// Entries of the old snapshot that were not looked at are copied as they are. A cache that cannot be
    /// written is not an error: the next startup reads the files again.
    func save() {
        let bytes: [UInt8]? = state.withLock { state in
            guard state.changed else { return nil }
            state.changed = false
            var entries: [(hash: UInt64, body: PluginSnapshot.EntryBody)] = []
            var untouched: [(hash: UInt64, body: PluginSnapshot.EntryBody)] = []
            for (path, entry) in state.entries {
                let record = PluginSnapshot.Record(path: path, identity: entry.identity, metadata: entry.metadata, scan: entry.scan)
                entries.append((PluginSnapshot.hash(path), .record(record)))
            }
            if let image = state.image {
                for position in 0..<image.count {
                    guard let path = image.path(position), state.entries[path] == nil else { continue }
                    untouched.append((image.index[position].hash, .copied(image.entryBytes(position))))
                }
            }
            if entries.count + untouched.count > Self.capacity {
                // Full: only the entries this discovery used stay.
                entries = state.entries.filter(\.value.used).map { path, entry in
                    (PluginSnapshot.hash(path), .record(PluginSnapshot.Record(path: path, identity: entry.identity, metadata: entry.metadata, scan: entry.scan)))
                }
                untouched = []
            }
            return PluginSnapshot.encode(entries + untouched)
        }
        guard let bytes else { return }
        let folder = (file as NSString).deletingLastPathComponent
        if !folder.isEmpty { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        FileBytes.replace(file, with: bytes)
    }
}
