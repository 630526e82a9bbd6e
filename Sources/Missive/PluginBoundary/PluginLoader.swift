import CMissivePlugin
import Foundation
import MissiveCore
import Synchronization

/// A plugin file that was loaded and whose descriptor agrees with its metadata.
public struct LoadedPlugin: Sendable {
    /// The plugin's identity and file.
    public let info: PluginInfo
    /// The metadata read from the file.
    public let metadata: PluginMetadata
    /// The validated types, in descriptor order.
    let types: [PluginType]
}

/// Loads plugin files: reads their metadata, opens them, calls their entry and validates the descriptor.
///
/// The order of checks for each file is: ELF and metadata (no plugin code runs), the ABI major in the
/// metadata, `dlopen`, the entry symbol, the descriptor's ABI version and struct size, the rest of the
/// descriptor, and finally the agreement of descriptor and metadata. The first failure refuses the file.
public enum PluginLoader {
    /// The information the host gives every plugin's entry.
    private static let host = HostInfo()

    /// What each library's entry returned, by library identity. The ABI promises that the entry is called
    /// once, so a library reached again (the same path, a link to it, a second discovery) is served from
    /// here; the lock also keeps two threads from calling one entry at once.
    private static let instantiated = Mutex<[UInt: Result<Instance, MissiveError>]>([:])

    /// A library's validated descriptor.
    private struct Instance: Sendable {
        var info: PluginInfo
        var types: [PluginType]
    }

    /// Loads one plugin file. Loading a file again returns the same plugin without calling its entry again.
    public static func load(_ path: String) throws(MissiveError) -> LoadedPlugin {
        let metadata = try PluginMetadata.read(fromFile: path)
        guard metadata.abiMajor == Int(MISSIVE_ABI_MAJOR) else {
            throw MissiveError(
                .unsupportedABI, "built for Missive plugin ABI \(metadata.abiMajor); this host supports ABI \(MISSIVE_ABI_MAJOR)",
                file: path)
        }
        let library = try DynamicLibrary.open(path)
        let result = instantiated.withLock { cache in
            if let earlier = cache[library.identity] { return earlier }
            let result = Result { () throws(MissiveError) in try instantiate(library, path: path) }
            cache[library.identity] = result
            return result
        }
        let plugin = try result.get()
        if plugin.info.path != path {
            throw MissiveError(.shadowed, "the same library as \(plugin.info.path), which is already loaded", file: path)
        }
        try checkAgreement(metadata: metadata, plugin: plugin)
        return LoadedPlugin(info: plugin.info, metadata: metadata, types: plugin.types)
    }

    /// Calls the entry of a freshly opened library and validates what it returns.
    private static func instantiate(_ library: DynamicLibrary, path: String) throws(MissiveError) -> Instance {
        guard let entryAddress = library.symbol(MISSIVE_ENTRY_SYMBOL) else {
            throw MissiveError(.missingEntry, "the library does not export \(MISSIVE_ENTRY_SYMBOL)", file: path)
        }
        let entry = unsafeBitCast(entryAddress, to: missive_plugin_entry_fn.self)
        guard let descriptor = host.withPointer({ entry($0) }) else {
            throw MissiveError(.missingEntry, "\(MISSIVE_ENTRY_SYMBOL) returned no descriptor (the plugin refused this host)", file: path)
        }
        return try validate(descriptor, path: path)
    }

    private static func validate(_ descriptor: UnsafePointer<missive_plugin>, path: String) throws(MissiveError) -> Instance {
        let raw = UnsafeRawPointer(descriptor)
        // Only the first two fields may be read before they are checked.
        let abiVersion = raw.load(fromByteOffset: 0, as: UInt32.self)
        let major = abiVersion >> 16, minor = abiVersion & 0xFFFF
        guard major == UInt32(MISSIVE_ABI_MAJOR) else {
            throw MissiveError(.unsupportedABI, "descriptor reports ABI \(major).\(minor); this host supports ABI \(MISSIVE_ABI_MAJOR).x", file: path)
        }
        let structSize = raw.load(fromByteOffset: 4, as: UInt32.self)
        guard structSize >= MemoryLayout<missive_plugin>.size else {
            throw MissiveError(
                .invalidDescriptor, "plugin descriptor is \(structSize) bytes; ABI \(major).0 needs \(MemoryLayout<missive_plugin>.size)",
                file: path)
        }
        let plugin = descriptor.pointee
        func text(_ pointer: UnsafePointer<CChar>?, _ field: String) throws(MissiveError) -> String {
            guard let pointer, pointer.pointee != 0 else {
                throw MissiveError(.invalidDescriptor, "the descriptor's \(field) is missing", file: path)
            }
            return String(cString: pointer)
        }
        let info = PluginInfo(
            name: try text(plugin.name, "name"), version: try text(plugin.version, "version"),
            vendor: try text(plugin.vendor, "vendor"), abiVersion: "\(major).\(minor)", path: path)
        guard plugin.type_count == 0 || plugin.types != nil else {
            throw MissiveError(.invalidDescriptor, "the descriptor lists \(plugin.type_count) types but no array", file: path)
        }
        var types: [PluginType] = []
        for index in 0..<Int(plugin.type_count) {
            guard let type = plugin.types[index] else {
                throw MissiveError(.invalidDescriptor, "type \(index) of the descriptor is NULL", file: path)
            }
            types.append(try PluginType(type, plugin: info))
        }
        return Instance(info: info, types: types)
    }

    private static func checkAgreement(metadata: PluginMetadata, plugin: Instance) throws(MissiveError) {
        var differences: [String] = []
        if metadata.name != plugin.info.name { differences.append("name '\(metadata.name)' vs '\(plugin.info.name)'") }
        if metadata.version != plugin.info.version { differences.append("version '\(metadata.version)' vs '\(plugin.info.version)'") }
        if metadata.vendor != plugin.info.vendor { differences.append("vendor '\(metadata.vendor)' vs '\(plugin.info.vendor)'") }
        // Compared as sorted lists: the linker decides the order of records in the section.
        let declared = metadata.types.map { "\($0.objectName)|\($0.businessID ?? "-")|\($0.persistenceValue)|\($0.isMedia)" }.sorted()
        let actual = plugin.types.map { "\($0.objectName)|\($0.businessID ?? "-")|\($0.persistence.rawValue)|\($0.isMedia)" }.sorted()
        if declared != actual {
            differences.append("types [\(declared.joined(separator: ", "))] vs [\(actual.joined(separator: ", "))]")
        }
        guard differences.isEmpty else {
            throw MissiveError(
                .metadataMismatch,
                "metadata disagrees with the runtime descriptor (metadata vs descriptor): \(differences.joined(separator: "; "))",
                file: plugin.info.path)
        }
    }
}

/// The `missive_host` value given to every entry, with strings that live for the whole process.
private final class HostInfo: @unchecked Sendable {
    private let name = strdup("Missive")!
    private let version = strdup(MissiveVersion.string)!

    func withPointer<R>(_ body: (UnsafePointer<missive_host>) -> R) -> R {
        var host = missive_host(
            abi_version: UInt32(MISSIVE_ABI_MAJOR) << 16 | UInt32(MISSIVE_ABI_MINOR), struct_size: UInt32(MemoryLayout<missive_host>.size),
            name: UnsafePointer(name), version: UnsafePointer(version))
        return body(&host)
    }
}

/// The version of this Missive library.
public enum MissiveVersion {
    /// The version, as `major.minor.patch`.
    public static let string = "0.1.0"
}
