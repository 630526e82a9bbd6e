import Foundation
import Missive

/// A plugin file found in a plugin folder, with the metadata read from it.
package struct InstalledPlugin: Sendable, Hashable, CustomStringConvertible {
    /// The file.
    package let path: String
    /// Its metadata.
    package let metadata: PluginMetadata

    /// The file's name, for example `libDemoMessages.so`.
    package var fileName: String { URL(fileURLWithPath: path).lastPathComponent }

    /// The folder that holds the file.
    package var folder: String { URL(fileURLWithPath: path).deletingLastPathComponent().path }

    /// `DemoMessages 1.0.0 (/path/libDemoMessages.so)`.
    package var description: String { "\(metadata.name) \(metadata.version) (\(path))" }

    /// The plugins in `folder`, in byte order of their file names. Files that are not readable plugins are
    /// left out: they are not anyone's names.
    package static func all(in folder: String) -> [InstalledPlugin] {
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
package enum NameClashes {
    /// Every objectName, container and businessID (or container value) of `metadata` that one of `others`
    /// also declares, as readable sentences naming the other file. Plugins named like `metadata` are
    /// skipped, as are files at `ownPath`. Two plugins declaring the same container with the same key and
    /// key kind share it, which is no clash.
    package static func find(_ metadata: PluginMetadata, ownPath: String? = nil, among others: [InstalledPlugin]) -> [String] {
        let own = ownPath.map(resolved)
        var problems: [String] = []
        for other in others where other.metadata.name != metadata.name && resolved(other.path) != own {
            let otherNames = Set(other.metadata.types.map(\.objectName))
            for type in metadata.types {
                if otherNames.contains(type.objectName) || other.metadata.containers.contains(where: { $0.objectName == type.objectName }) {
                    problems.append("objectName '\(type.objectName)' is also declared by \(other)")
                }
                if let id = type.businessID,
                    other.metadata.types.contains(where: { $0.businessID == id && ($0.container ?? "MS:Custom") == (type.container ?? "MS:Custom") })
                {
                    let place = type.container.map { "value '\(id)' in container \($0)" } ?? "businessID '\(id)'"
                    problems.append("\(place) is also declared by \(other)")
                }
            }
            for container in metadata.containers {
                if otherNames.contains(container.objectName) {
                    problems.append("container '\(container.objectName)' is also a type's objectName in \(other)")
                } else if let theirs = other.metadata.containers.first(where: { $0.objectName == container.objectName }), theirs != container {
                    problems.append("container \(container) is declared as \(theirs) by \(other)")
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
