import Foundation
import Missive

/// A plugin file found in a plugin folder, with the metadata read from it.
public struct InstalledPlugin: Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public let path: String
    /// Its metadata.
    public let metadata: PluginMetadata

    /// The file's name, for example `libDemoMessages.so`.
    public var fileName: String { URL(fileURLWithPath: path).lastPathComponent }

    /// The folder that holds the file.
    public var folder: String { URL(fileURLWithPath: path).deletingLastPathComponent().path }

    /// `DemoMessages 1.0.0 (/path/libDemoMessages.so)`.
    public var description: String { "\(metadata.name) \(metadata.version) (\(path))" }

    /// The plugins in `folder`, in byte order of their file names. Files that are not readable plugins are
    /// left out: they are not anyone's names.
    public static func all(in folder: String) -> [InstalledPlugin] {
        PluginSearchPath(entries: [.init(directory: folder, source: .user)]).candidateFiles().files.compactMap { path in
            (try? PluginMetadata.read(fromFile: path)).map { InstalledPlugin(path: path, metadata: $0) }
        }
    }
}

/// Where a plugin's names meet another plugin's.
///
/// A plugin with the same plugin name is an older or newer copy of the same plugin, which the new one
/// replaces, so its names are not clashes: that is how `missive install` upgrades and how
/// `missive check --against` judges an upgrade.
public enum NameClashes {
    /// Every objectName and businessID of `metadata` that one of `others` also declares, as readable
    /// sentences naming the other file. Plugins named like `metadata` are skipped, as are files at `ownPath`.
    public static func find(_ metadata: PluginMetadata, ownPath: String? = nil, among others: [InstalledPlugin]) -> [String] {
        let own = ownPath.map(resolved)
        var problems: [String] = []
        for other in others where other.metadata.name != metadata.name && resolved(other.path) != own {
            for type in metadata.types {
                if other.metadata.types.contains(where: { $0.objectName == type.objectName }) {
                    problems.append("objectName '\(type.objectName)' is also declared by \(other)")
                }
                if let id = type.businessID, other.metadata.types.contains(where: { $0.businessID == id }) {
                    problems.append("businessID '\(id)' is also declared by \(other)")
                }
            }
        }
        return problems
    }

    /// The path with links resolved, so that two spellings of one file compare equal.
    static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
    }
}
