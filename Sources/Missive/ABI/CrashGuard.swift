import CMissiveGuard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Marks the threads that run plugin code, so that a fatal signal inside a plugin is written to the
/// quarantine journal before the process dies. See ``PluginQuarantine``.
///
/// Every call into a plugin (its initialisers, its entry, each type function and each action) runs inside
/// ``run(_:_:_:)``, which costs two stores to a thread-local variable. The marks are always kept; they are
/// only read by the signal handler that ``PluginQuarantine`` installs.
package enum CrashGuard {
    /// What a plugin is running when a signal arrives.
    enum Operation: Int32 {
        case load = 1, entry, decode, release, encode, digest, push, words, media, view, action, texts
        /// Not a call: a fault on a thread that runs no marked call (a thread the plugin started, or plugin code
        /// reached outside a call), attributed to the plugin by the faulting address (``recordRanges(of:site:)``).
        case thread

        /// The name the journal records.
        var name: String {
            switch self {
            case .load: "load"
            case .entry: "entry"
            case .decode: "decode"
            case .release: "release"
            case .encode: "encode"
            case .digest: "digest"
            case .push: "push"
            case .words: "words"
            case .media: "media"
            case .view: "view"
            case .action: "action"
            case .texts: "texts"
            case .thread: "thread"
            }
        }

        init?(name: some StringProtocol) {
            guard let operation = (1...13).lazy.compactMap({ Operation(rawValue: $0) }).first(where: { $0.name == name }) else { return nil }
            self = operation
        }
    }

    /// One plugin file, or one of its types: the journal record written for it. Sites are made once per
    /// record and never freed, like the plugins themselves: a file's when it is opened, a type's when its code
    /// is first called (``TypeSite``).
    struct Site: @unchecked Sendable {
        fileprivate let pointer: OpaquePointer?

        /// A site that records nothing (for code that runs no plugin, and where memory ran out).
        static let none = Site(pointer: nil)
    }

    /// The sites made so far, by file (the shared part of their records), then by objectName (`-` for the
    /// file's own). A file probed or loaded again (a second discovery, `missive check --in-process`) gets the
    /// sites it had: one made anew would be lost as soon as the probe cache answered, as LeakSanitizer found.
    private static let files = Locked<[String: Locked<[String: Site]>]>([:])

    /// The site of a plugin file, or of one of its types when `objectName` is given.
    static func site(path: String, identity: FileIdentity?, objectName: String?) -> Site {
        FileSites(path: path, identity: identity).site(objectName: objectName)
    }

    /// The sites of one plugin file and its types, whose records share the file's part: it is formatted and
    /// looked up once per file, and each type costs a lookup by its name.
    struct FileSites: Sendable {
        private let prefix: [UInt8]
        private let sites: Locked<[String: Site]>

        /// The sites of the file at `path`, as `identity` says it is (`nil` when unknown).
        init(path: String, identity: FileIdentity?) {
            let prefix = PluginQuarantine.recordPrefix(path: path, identity: identity)
            self.prefix = Array(prefix.utf8)
            self.sites = CrashGuard.files.withLock { files in
                if let sites = files[prefix] { return sites }
                var table: [String: Site] = [:]
                table.reserveCapacity(8)
                let sites = Locked(table)
                files[prefix] = sites
                return sites
            }
        }

        /// The file's site (`objectName` `nil`) or one of its types'.
        func site(objectName: String?) -> Site {
            let name = objectName ?? "-"
            return sites.withLock { sites in
                if let site = sites[name] { return site }
                var bytes = prefix
                bytes.reserveCapacity(prefix.count + name.utf8.count + 8)
                bytes += JournalText.escape(name).utf8
                let site = bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { Site(pointer: missive_guard_site_create($0.baseAddress, $0.count)) }
                }
                if site.pointer != nil { sites[name] = site }
                return site
            }
        }
    }

    /// The site of one plugin type, made the first time the type's code is called rather than when the plugin
    /// loads: a start that loads 1,000 types and calls none of them makes none of their records (callgrind: 5.4M
    /// instructions of a 36.9M start). A crash in the first call is recorded all the same, since the site is
    /// made before that call starts.
    ///
    /// After the first call, reading it is one atomic load. Two threads making it at once get the same site:
    /// ``FileSites/site(objectName:)`` makes each name's site once, under the file's lock.
    struct TypeSite: ~Copyable, Sendable {
        /// The made site's address, or 0 until it is made.
        private let made = Atomic<UInt>(0)
        private let sites: FileSites
        private let objectName: String

        /// The site of the type `objectName` of the file whose sites are `sites`, made on first use.
        init(sites: FileSites, objectName: String) {
            self.sites = sites
            self.objectName = objectName
        }

        /// The site, made now if this is the first call.
        @inline(__always)
        var site: Site {
            let address = made.load(ordering: .acquiring)
            if address != 0 { return Site(pointer: OpaquePointer(bitPattern: address)) }
            return make()
        }

        @inline(never)
        private func make() -> Site {
            let site = sites.site(objectName: objectName)
            // Released, so that a thread that loads the address also sees the record the C side copied.
            if let pointer = site.pointer { made.store(UInt(bitPattern: pointer), ordering: .releasing) }
            return site
        }
    }

    /// Runs `body` with the calling thread marked as running `site`'s `operation`.
    @inline(__always)
    static func run<Result, Failure: Error>(_ site: Site, _ operation: Operation, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let previous = missive_guard_enter(site.pointer, operation.rawValue)
        defer { missive_guard_leave(previous) }
        return try body()
    }

    /// Records the loaded segments of the library that holds `address` (its entry, say) as `site`'s, so that
    /// a fatal signal on a thread that runs no marked call is attributed to it: the faulting instruction, or a
    /// return address in the faulting thread's stack, inside them. Recorded once per library.
    static func recordRanges(of address: UnsafeRawPointer, site: Site) {
        _ = missive_guard_record_ranges(address, site.pointer)
    }

    /// Whether the signal handler would attribute a fault at `address` to the plugin file at `path`.
    package static func attributes(_ address: UnsafeRawPointer, toPluginAt path: String) -> Bool {
        guard let found = missive_guard_site_at(address) else { return false }
        return found == site(path: path, identity: FileIdentity.of(path), objectName: nil).pointer
    }

    /// Whether the signal handler would attribute a fault at `address` to any plugin.
    package static func attributesToAPlugin(_ address: UnsafeRawPointer) -> Bool {
        missive_guard_site_at(address) != nil
    }

    /// Installs the signal handler, writing to `journal` (a descriptor opened for appending); installing
    /// again only moves it to another journal. Returns `errno` on failure.
    static func install(journal: Int32) -> Int32? {
        missive_guard_install(journal) == 0 ? nil : errno
    }

    /// In a child process the host started to run plugin code (a scan, a check): ends this process when the
    /// host does, so that an interrupted host leaves no child running a hung plugin. Exits at once when the
    /// host is already gone.
    package static func endWithParent() {
        if missive_guard_end_with_parent() != 0 && errno == ESRCH { exit(1) }
    }
}
