import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The folders Missive looks in for plugin files, in order.
///
/// The standard order is:
/// 1. folders given explicitly (the CLI's `--plugin-path DIR` options);
/// 2. `MISSIVE_PLUGIN_PATH`, colon-separated;
/// 3. the folder that holds the running executable, so that `swift run` finds the plugins built beside it;
/// 4. the per-user folder, `$XDG_DATA_HOME/missive/plugins` (by default `~/.local/share/missive/plugins`);
/// 5. the system folder, `/usr/local/lib/missive/plugins` (`MISSIVE_SYSTEM_PLUGIN_DIR` moves it, for
///    distributions that keep plugins elsewhere).
///
/// Within a folder, files ending in `.so` are taken in byte order of their names. A file whose name was
/// already found in an earlier folder is shadowed: it is reported and skipped, as `PATH` does for
/// commands. So when two plugins claim the same name, the one found first in this order wins.
public struct PluginSearchPath: Sendable, Hashable {
    /// Where a folder in the search path comes from.
    public enum Source: String, Sendable, Hashable {
        /// A folder the caller named, e.g. with `--plugin-path`.
        case explicit
        /// A folder from `MISSIVE_PLUGIN_PATH`.
        case environment
        /// The folder that holds the running executable.
        case executable
        /// The per-user folder.
        case user
        /// The system folder.
        case system
    }

    /// One folder of the search path.
    public struct Entry: Sendable, Hashable {
        /// The folder.
        public var directory: String
        /// Where it comes from. Explicit and environment folders must exist; the defaults may not.
        public var source: Source

        /// Creates an entry.
        public init(directory: String, source: Source) {
            self.directory = directory
            self.source = source
        }
    }

    /// The name of the environment variable that adds folders.
    public static let environmentVariable = "MISSIVE_PLUGIN_PATH"

    /// The system folder when `MISSIVE_SYSTEM_PLUGIN_DIR` does not move it.
    public static let systemDirectory = "/usr/local/lib/missive/plugins"

    /// The name of the environment variable that moves the system folder.
    public static let systemDirectoryVariable = "MISSIVE_SYSTEM_PLUGIN_DIR"

    /// The system plugin folder for an environment: `MISSIVE_SYSTEM_PLUGIN_DIR` when it is an absolute
    /// path, else ``systemDirectory``.
    public static func systemDirectory(_ environment: [String: String]) -> String {
        if let moved = environment[systemDirectoryVariable], moved.hasPrefix("/") { return moved }
        return systemDirectory
    }

    /// The folders, in search order.
    public var entries: [Entry]

    /// A search path of exactly these folders.
    public init(entries: [Entry]) {
        self.entries = entries
    }

    /// The standard search path described above.
    ///
    /// - Parameters:
    ///   - explicitDirectories: folders to search first.
    ///   - environment: the environment to read `MISSIVE_PLUGIN_PATH`, `XDG_DATA_HOME` and `HOME` from.
    ///   - includeDefaults: whether to add the executable's, the user's and the system folder.
    public static func standard(
        explicitDirectories: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        includeDefaults: Bool = true
    ) -> PluginSearchPath {
        var entries = explicitDirectories.map { Entry(directory: $0, source: .explicit) }
        if let variable = environment[environmentVariable] {
            entries += variable.split(separator: ":").map { Entry(directory: String($0), source: .environment) }
        }
        if includeDefaults {
            if let executable = executableDirectory() { entries.append(Entry(directory: executable, source: .executable)) }
            if let user = userDirectory(environment) { entries.append(Entry(directory: user, source: .user)) }
            entries.append(Entry(directory: systemDirectory(environment), source: .system))
        }
        return PluginSearchPath(entries: entries)
    }

    /// The per-user plugin folder for an environment.
    public static func userDirectory(_ environment: [String: String]) -> String? {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/missive/plugins" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.local/share/missive/plugins"
    }

    /// The folder of the running executable, resolved through `/proc/self/exe`.
    public static func executableDirectory() -> String? {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
        guard let executable else { return nil }
        return URL(fileURLWithPath: executable).deletingLastPathComponent().standardizedFileURL.path
    }

    /// The plugin files in search order, and the problems found while listing them.
    public func candidateFiles() -> (files: [String], problems: [MissiveError]) {
        let (files, problems) = candidates()
        return (files.map(\.path), problems)
    }

    /// The plugin files in search order with their identities, and the problems found while listing them.
    func candidates() -> (files: [(path: String, identity: FileIdentity)], problems: [MissiveError]) {
        var files: [(path: String, identity: FileIdentity)] = []
        var problems: [MissiveError] = []
        var firstByName: [String: String] = [:]
        var seenDirectories: Set<String> = []
        let manager = FileManager.default
        for entry in entries {
            let directory = URL(fileURLWithPath: entry.directory).standardizedFileURL.resolvingSymlinksInPath().path
            guard seenDirectories.insert(directory).inserted else { continue }
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                if entry.source == .explicit || entry.source == .environment {
                    let problem = manager.fileExists(atPath: directory) ? "is not a folder (the search path names folders of plugins)" : "plugin folder does not exist"
                    problems.append(MissiveError(.ioFailure, problem, file: entry.directory))
                }
                continue
            }
            guard let names = Self.pluginNames(in: directory) else {
                problems.append(MissiveError(.ioFailure, "cannot list plugin folder", file: directory))
                continue
            }
            for name in names.sorted(by: Self.precedes).map({ String(decoding: $0, as: UTF8.self) }) {
                let path = directory + "/" + name
                guard let identity = FileIdentity.of(path) else {
                    // A name that looks like a plugin but is no regular file: a dangling link, a folder, a device.
                    problems.append(MissiveError(.ioFailure, "is not a regular file (a dangling link, a folder or a device)", file: path))
                    continue
                }
                if let earlier = firstByName[name] {
                    problems.append(MissiveError(.shadowed, "shadowed by \(earlier), which comes first in the search path", file: path))
                    continue
                }
                firstByName[name] = path
                files.append((path, identity))
            }
        }
        return (files, problems)
    }

    /// Whether file name `a` comes before `b` in byte order (`memcmp`, then the shorter first).
    private static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let order = a.withUnsafeBytes { a in b.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, min(a.count, b.count)) } }
        return order != 0 ? order < 0 : a.count < b.count
    }

    /// The names (as bytes, which is the order they are taken in) in `directory` that end in `.so`, in no
    /// order, or `nil` when it cannot be listed. Read with `readdir`: the names are all discovery needs, and
    /// Foundation's listing cost as much as the rest of discovery's own work on a file.
    private static func pluginNames(in directory: String) -> [[UInt8]]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        let suffix = Array(".so".utf8)
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw -> [UInt8]? in
                let bytes = raw.prefix { $0 != 0 }
                return bytes.count > suffix.count && bytes.suffix(suffix.count).elementsEqual(suffix) ? Array(bytes) : nil
            }
            if let name { names.append(name) }
        }
        return names
    }
}
