#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PluginMetadata {
    /// The absolute paths of the ``dataFiles`` of the plugin file at `pluginPath`, in the same order: each
    /// declared path appended to the folder that holds the plugin file.
    ///
    /// The folder is the one `pluginPath` names, as given: a plugin file reached through a symbolic link has
    /// its data files beside the link. A relative `pluginPath` is taken from the working directory. The folder
    /// is written without `.` components or repeated `/`; nothing is looked up on the file system, so a path
    /// may name a file that is missing (`missive check`'s `metadata.files` says so). Every declared path is
    /// relative, without `.` or `..` components (``PluginMetadata/read(fromFile:)`` refuses any other), so each
    /// result lies inside the folder as the path spells it; a symbolic link inside the folder can still point
    /// elsewhere, and whoever opens the file decides whether to follow it.
    package func dataFilePaths(pluginPath: String) -> [String] {
        guard !dataFiles.isEmpty else { return [] }
        let folder = Self.folder(ofPlugin: pluginPath)
        return dataFiles.map { folder == "/" ? "/" + $0 : folder + "/" + $0 }
    }

    /// The folder ``dataFilePaths(pluginPath:)`` resolves against: the absolute folder of the file at `path`,
    /// without `.` components, empty components or a trailing `/` (but `/` itself). `..` components are kept:
    /// dropping one with its parent would be wrong when the parent is a symbolic link.
    package static func folder(ofPlugin path: String) -> String {
        var absolute = path
        if !absolute.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let directory = getcwd(&buffer, buffer.count) != nil
                ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/"
            absolute = directory + "/" + absolute
        }
        var components = absolute.split(separator: "/").filter { $0 != "." }
        if !components.isEmpty { components.removeLast() }  // the plugin file's own name
        return "/" + components.joined(separator: "/")
    }
}
