import CMissiveSandbox
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The file system a confined worker sees (docs/PROTECTION.md, "The worker's own world"): the worker executable, the
/// shared libraries it and the plugin need, the plugin file and the files the plugin declares, each read-only at its
/// host path, `/dev/null`, `/dev/zero` and `/dev/urandom`, the dynamic loader's cache, and the folders and symbolic
/// links that lead to them. Nothing else: a folder in the view holds only what was put there.
package struct WorkerView {
    /// One step of making the view, in the order the worker's child process takes them.
    enum Step: Hashable {
        case directory(String)
        case symlink(String, target: String)
        case file(String)
        case device(String)
    }

    private(set) var steps: [Step] = []
    private var placed: Set<String> = ["/"]

    /// The view for a worker that runs `executable` and loads `plugin`, which declares `dataFiles` (absolute paths).
    /// The libraries are found as the dynamic loader finds them (``SharedLibraries``), once per file for the process.
    static func make(executable: String, plugin: String, dataFiles: [String]) -> WorkerView {
        var view = WorkerView()
        for device in ["/dev/null", "/dev/zero", "/dev/urandom"] { view.place(device, as: .device) }
        view.place("/etc/ld.so.cache", as: .file)
        for library in SharedLibraries.needed(by: [executable, plugin]) { view.place(library, as: .file) }
        view.place(executable, as: .file)
        view.place(plugin, as: .file)
        for file in dataFiles { view.place(file, as: .file) }
        return view
    }

    /// Of the data files a plugin declared (absolute paths beside the plugin), those that are regular files inside the
    /// plugin's folder once every symbolic link is followed: a declared file that leads out of the folder (a link to a
    /// key in the home folder) is left out of the view, and `missive check`'s `metadata.files` reports it.
    package static func declaredFiles(_ paths: [String], pluginPath: String) -> [String] {
        guard !paths.isEmpty, let folder = realPath(PluginMetadata.folder(ofPlugin: pluginPath)) else { return [] }
        return paths.filter { path in
            guard let real = realPath(path) else { return false }
            var info = stat()
            return real.hasPrefix(folder == "/" ? "/" : folder + "/") && stat(real, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private enum Leaf { case file, device }

    /// Puts the file at the absolute `path` in the view, with the folders and links on its way. A link in the path is
    /// made as it is on the host and followed; a path that does not lead to a file of the expected kind is left out (the
    /// worker then fails to open it, and says so, as it would on a host without it).
    private mutating func place(_ path: String, as leaf: Leaf, depth: Int = 0) {
        guard depth < 16, path.hasPrefix("/") else { return }
        let components = path.split(separator: "/").filter { $0 != "." && !$0.isEmpty }
        var current = ""
        var planned: [Step] = []
        for (index, component) in components.enumerated() {
            if component == ".." {
                current = String(current[..<(current.lastIndex(of: "/") ?? current.startIndex)])
                continue
            }
            current += "/" + component
            var info = stat()
            guard lstat(current, &info) == 0 else { return }
            let isLast = index == components.count - 1
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                guard let target = Self.readLink(current) else { return }
                planned.append(.symlink(current, target: target))
                let base = target.hasPrefix("/") ? "" : String(current[..<(current.lastIndex(of: "/") ?? current.startIndex)])
                let rest = components[(index + 1)...].joined(separator: "/")
                commit(planned)
                place(base + "/" + target + (rest.isEmpty ? "" : "/" + rest), as: leaf, depth: depth + 1)
                return
            case S_IFDIR where !isLast:
                planned.append(.directory(current))
            case S_IFREG where isLast && leaf == .file:
                planned.append(.file(current))
            case S_IFCHR where isLast && leaf == .device:
                planned.append(.device(current))
            default:
                return
            }
        }
        commit(planned)
    }

    private mutating func commit(_ planned: [Step]) {
        for step in planned {
            let path: String
            switch step {
            case .directory(let at), .symlink(let at, _), .file(let at), .device(let at): path = at
            }
            if placed.insert(path).inserted { steps.append(step) }
        }
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs `body` with the steps as the C sandbox takes them.
    func withCSteps<R>(_ body: (UnsafeBufferPointer<missive_sandbox_view_step>) -> R) -> R {
        var strings: [UnsafeMutablePointer<CChar>?] = []
        defer { strings.forEach { free($0) } }
        func copy(_ string: String) -> UnsafePointer<CChar>? {
            let pointer = strdup(string)
            strings.append(pointer)
            return UnsafePointer(pointer)
        }
        let cSteps = steps.map { step -> missive_sandbox_view_step in
            switch step {
            case .directory(let path):
                missive_sandbox_view_step(kind: Int32(MISSIVE_SANDBOX_VIEW_DIRECTORY), path: copy(path), source: nil)
            case .symlink(let path, let target):
                missive_sandbox_view_step(kind: Int32(MISSIVE_SANDBOX_VIEW_SYMLINK), path: copy(path), source: copy(target))
            case .file(let path):
                missive_sandbox_view_step(kind: Int32(MISSIVE_SANDBOX_VIEW_FILE), path: copy(path), source: copy(path))
            case .device(let path):
                missive_sandbox_view_step(kind: Int32(MISSIVE_SANDBOX_VIEW_DEVICE), path: copy(path), source: copy(path))
            }
        }
        return cSteps.withUnsafeBufferPointer(body)
    }

    /// Where a confined start failed, in words.
    static func describe(_ failure: missive_sandbox_failure, steps: [Step]) -> String {
        let error = String(cString: strerror(failure.error))
        var at = ""
        if failure.step >= 0, Int(failure.step) < steps.count {
            switch steps[Int(failure.step)] {
            case .directory(let path), .symlink(let path, _), .file(let path), .device(let path): at = " \(path)"
            }
        }
        switch Int(failure.stage) {
        case Int(MISSIVE_SANDBOX_STAGE_CLONE): return "the kernel refused new namespaces for the worker (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_USER_MAP): return "the worker's user namespace could not map its user (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_MOUNT): return "the worker's mount namespace could not be set up (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_OPEN): return "cannot open\(at) for the worker's view (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_STEP): return "cannot make\(at) in the worker's view (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_BIND): return "cannot bind\(at) read-only into the worker's view (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_PROC): return "cannot make the worker's /proc (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_ROOT): return "cannot make the view the worker's root (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_DESCRIPTORS): return "cannot hand the worker its descriptors (\(error))"
        case Int(MISSIVE_SANDBOX_STAGE_EXEC): return "cannot run the worker executable in its view (\(error))"
        default: return error
        }
    }
}

/// The shared libraries an executable or a library needs, found as the dynamic loader finds them: its `DT_NEEDED`
/// entries, searched in its `DT_RPATH` (when it has no `DT_RUNPATH`), its `DT_RUNPATH` (with `$ORIGIN`), the loader's
/// cache (`/etc/ld.so.cache`) and the default folders, and so on for what those need; and the loader itself
/// (`PT_INTERP`). Where the loader could take one of several files (a cache entry per hardware level), all are in the
/// view. The worker has an empty environment, so `LD_LIBRARY_PATH` plays no part.
///
/// Each file is read once per process: later workers reuse the answer while the file's identity is the same.
package enum SharedLibraries {
    /// Every library `objects` need (not the objects themselves), as the paths the loader opens.
    package static func needed(by objects: [String]) -> [String] {
        var found: [String] = []
        var seen = Set<String>()
        var queue = objects
        var visited = Set<String>()
        while let object = queue.popLast() {
            guard visited.insert(object).inserted, visited.count < 2048, let dynamic = Self.dynamic(of: object) else { continue }
            let origin = String(object[..<(object.lastIndex(of: "/") ?? object.startIndex)])
            var candidates: [String] = []
            if let interpreter = dynamic.interpreter { candidates.append(interpreter) }
            for name in dynamic.needed {
                candidates += name.contains("/") ? [name] : resolve(name, rpath: dynamic.runpath.isEmpty ? dynamic.rpath : [], runpath: dynamic.runpath, origin: origin)
            }
            for path in candidates where seen.insert(path).inserted {
                found.append(path)
                queue.append(path)
            }
        }
        return found
    }

    /// The files the loader may take for `name`: the first found in the object's own paths, else every match in the
    /// cache, else the first in the default folders.
    private static func resolve(_ name: String, rpath: [String], runpath: [String], origin: String) -> [String] {
        for folder in (rpath + runpath) {
            let expanded = folder.replacingOccurrences(of: "${ORIGIN}", with: origin).replacingOccurrences(of: "$ORIGIN", with: origin)
            guard expanded.hasPrefix("/") else { continue }
            let path = expanded + "/" + name
            if isRegularFile(path) { return [path] }
        }
        let cached = cachedEntries()[name, default: []].filter(isRegularFile)
        if !cached.isEmpty { return cached }
        for folder in defaultFolders {
            let path = folder + "/" + name
            if isRegularFile(path) { return [path] }
        }
        return []
    }

    private static let defaultFolders = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"]

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    // MARK: The loader's cache

    private static let cache = Locked<[String: [String]]?>(nil)

    /// The loader's cache: each library name with the paths it lists for it. Read once per process.
    private static func cachedEntries() -> [String: [String]] {
        if let entries = cache.withLock({ $0 }) { return entries }
        let entries = loadCache()
        cache.withLock { $0 = entries }
        return entries
    }

    private static func loadCache() -> [String: [String]] {
        var entries: [String: [String]] = [:]
        guard let bytes = FileBytes.readToEnd("/etc/ld.so.cache", limit: 8 << 20) else { return entries }
        let magic = Array("glibc-ld.so.cache1.1".utf8)
        // A cache in the old format first has the new one after it; find where the new one starts.
        guard let start = find(magic, in: bytes) else { return entries }
        let reader = ByteFields(bytes)
        guard let count = reader.u32(at: start + 20) else { return entries }
        for index in 0..<Int(min(count, 1 << 20)) {
            let entry = start + 48 + index * 24
            guard let key = reader.u32(at: entry + 4), let value = reader.u32(at: entry + 8),
                let name = reader.cString(at: start + Int(key)), let path = reader.cString(at: start + Int(value))
            else { break }
            entries[name, default: []].append(path)
        }
        return entries
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        for offset in 0...(bytes.count - needle.count) where bytes[offset] == needle[0] {
            if bytes[offset..<(offset + needle.count)].elementsEqual(needle) { return offset }
        }
        return nil
    }

    // MARK: ELF

    /// What the loader reads of one object.
    struct Dynamic: Sendable {
        var interpreter: String?
        var needed: [String] = []
        var rpath: [String] = []
        var runpath: [String] = []
    }

    private static let parsed = Locked<[String: (identity: FileIdentity?, dynamic: Dynamic?)]>([:])

    /// The object's dynamic section, once per file identity; `nil` when it is not a 64-bit little-endian ELF file with
    /// one (a static executable needs nothing).
    static func dynamic(of path: String) -> Dynamic? {
        let identity = FileIdentity.of(path)
        if let known = parsed.withLock({ $0[path] }), known.identity == identity { return known.dynamic }
        let dynamic = identity == nil ? nil : read(path)
        parsed.withLock { $0[path] = (identity, dynamic) }
        return dynamic
    }

    /// Reads the program headers, the interpreter and the dynamic section, bounds-checked: a hostile file gives
    /// `nil` or fewer names, never a read outside it.
    private static func read(_ path: String) -> Dynamic? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        func bytes(at offset: UInt64, count: Int) -> [UInt8]? {
            guard count > 0, count <= 16 << 20, offset <= UInt64(Int.max) else { return nil }
            var buffer = [UInt8](repeating: 0, count: count)
            let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
            return got == count ? buffer : nil
        }
        guard let header = bytes(at: 0, count: 64), header[0..<4].elementsEqual([0x7f, 0x45, 0x4c, 0x46]), header[4] == 2, header[5] == 1 else { return nil }
        let fields = ByteFields(header)
        guard let programOffset = fields.u64(at: 32), let entrySize = fields.u16(at: 54), let entryCount = fields.u16(at: 56), entrySize >= 56,
            let table = bytes(at: programOffset, count: Int(entrySize) * Int(entryCount))
        else { return nil }
        let programs = ByteFields(table)
        var loads: [(vaddr: UInt64, offset: UInt64, size: UInt64)] = []
        var dynamicSegment: (offset: UInt64, size: UInt64)?
        var result = Dynamic()
        for index in 0..<Int(entryCount) {
            let base = index * Int(entrySize)
            guard let type = programs.u32(at: base), let offset = programs.u64(at: base + 8), let vaddr = programs.u64(at: base + 16),
                let fileSize = programs.u64(at: base + 32)
            else { return nil }
            switch type {
            case 1: loads.append((vaddr, offset, fileSize))
            case 2: dynamicSegment = (offset, fileSize)
            case 3:
                if let text = bytes(at: offset, count: Int(min(fileSize, 4096))) {
                    result.interpreter = String(decoding: text.prefix { $0 != 0 }, as: UTF8.self)
                }
            default: break
            }
        }
        guard let dynamicSegment, let section = bytes(at: dynamicSegment.offset, count: Int(min(dynamicSegment.size, 1 << 20))) else {
            return result.interpreter == nil ? nil : result
        }
        let entries = ByteFields(section)
        var stringTable: UInt64?, stringSize: UInt64 = 0
        var neededOffsets: [UInt64] = [], rpathOffsets: [UInt64] = [], runpathOffsets: [UInt64] = []
        for index in 0..<(section.count / 16) {
            guard let tag = entries.u64(at: index * 16), let value = entries.u64(at: index * 16 + 8) else { break }
            switch tag {
            case 0: break
            case 1: neededOffsets.append(value)
            case 5: stringTable = value
            case 10: stringSize = value
            case 15: rpathOffsets.append(value)
            case 29: runpathOffsets.append(value)
            default: continue
            }
            if tag == 0 { break }
        }
        // The string table's address, as a file offset through the segment that loads it.
        guard let stringTable, stringSize > 0,
            let load = loads.first(where: { stringTable >= $0.vaddr && stringTable - $0.vaddr < $0.size }),
            let strings = bytes(at: load.offset + (stringTable - load.vaddr), count: Int(min(stringSize, 4 << 20)))
        else { return result }
        let stringFields = ByteFields(strings)
        func text(_ offset: UInt64) -> String? { offset < UInt64(strings.count) ? stringFields.cString(at: Int(offset)) : nil }
        result.needed = neededOffsets.compactMap(text).filter { !$0.isEmpty }
        result.rpath = rpathOffsets.compactMap(text).flatMap { $0.split(separator: ":").map(String.init) }
        result.runpath = runpathOffsets.compactMap(text).flatMap { $0.split(separator: ":").map(String.init) }
        return result
    }
}

/// Little-endian fields of a byte array, each read `nil` past its end.
private struct ByteFields {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private func integer(at offset: Int, width: Int) -> UInt64? {
        guard offset >= 0, offset <= bytes.count - width else { return nil }
        var value: UInt64 = 0
        for index in (0..<width).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }

    func u16(at offset: Int) -> UInt16? { integer(at: offset, width: 2).map { UInt16($0) } }
    func u32(at offset: Int) -> UInt32? { integer(at: offset, width: 4).map { UInt32($0) } }
    func u64(at offset: Int) -> UInt64? { integer(at: offset, width: 8) }

    /// The NUL-terminated string at `offset` (at most 4 KiB), or `nil` past the end.
    func cString(at offset: Int) -> String? {
        guard offset >= 0, offset < bytes.count else { return nil }
        let end = bytes[offset..<min(bytes.count, offset + 4096)].firstIndex(of: 0) ?? min(bytes.count, offset + 4096)
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }
}
