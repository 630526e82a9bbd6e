import Foundation
import Missive

/// Level 1: the data files the plugin declares (its metadata's `file` records) are there to read.
///
/// A host that confines the plugin lets it read these files and no other, so a file the plugin needs and did
/// not declare fails where it runs isolated, and a declared file that is missing, not a file, unreadable, or a
/// symbolic link out of the plugin's folder fails for every user. Read from the file system only: no plugin
/// code runs.
enum DataFileChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            id: "metadata.files", level: 1,
            summary: "Every data file the metadata declares is a readable regular file inside the plugin's folder, symbolic links followed; lists them.",
            requires: ["metadata.present"]
        ) { context in
            guard case .success(let metadata) = context.metadata else { return .skipped("no metadata") }
            guard !metadata.dataFiles.isEmpty else { return .skipped("the plugin declares no data file") }
            let folder = PluginMetadata.folder(ofPlugin: context.path)
            var found: [String] = []
            var problems: [String] = []
            for (declared, path) in zip(metadata.dataFiles, metadata.dataFilePaths(pluginPath: context.path)) {
                switch DataFileChecks.inspect(path, folder: folder) {
                case .success(let size): found.append("\(declared) (\(size) byte\(size == 1 ? "" : "s"))")
                case .failure(let problem): problems.append("\(declared): \(problem.reason)")
                }
            }
            guard problems.isEmpty else {
                return outcome(expected: "each declared data file to be a readable regular file inside \(folder)", problems: problems)
            }
            return .noted("\(found.count) data file\(found.count == 1 ? "" : "s") in \(folder): " + found.joined(separator: ", "))
        }
    ]

    /// Why a declared file cannot serve.
    struct Problem: Error {
        let reason: String
    }

    /// The size of the file at `path` when it is a regular file this process can open for reading and it
    /// resolves (symbolic links followed) to a path inside `folder` (also resolved); otherwise why not.
    static func inspect(_ path: String, folder: String) -> Result<Int64, Problem> {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            return .failure(Problem(reason: errno == ENOENT ? "missing (no file at \(path))" : "cannot be reached: \(String(cString: strerror(errno)))"))
        }
        guard let resolved = realPath(path) else {
            return .failure(Problem(reason: "a symbolic link to nothing (\(path))"))
        }
        let root = realPath(folder) ?? folder
        guard resolved.hasPrefix(root == "/" ? "/" : root + "/") else {
            return .failure(Problem(reason: "leaves the plugin's folder through a symbolic link (it resolves to \(resolved))"))
        }
        guard stat(path, &status) == 0 else { return .failure(Problem(reason: "cannot be reached: \(String(cString: strerror(errno)))")) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            return .failure(Problem(reason: "not a regular file (\(status.st_mode & S_IFMT == S_IFDIR ? "a folder" : "a device, socket or pipe"))"))
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else { return .failure(Problem(reason: "cannot be read: \(String(cString: strerror(errno)))")) }
        close(descriptor)
        return .success(Int64(status.st_size))
    }

    /// `path` with every symbolic link, `.` and `..` resolved, or `nil` when that fails (a component is missing).
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
