import CMissivePlugin
import Foundation
import Logging
import MissiveCore

/// A plugin file that was loaded and whose descriptor agrees with its metadata.
public struct LoadedPlugin: Sendable, CustomStringConvertible {
    /// The plugin's identity and file.
    public let info: PluginInfo
    /// The metadata read from the file.
    public let metadata: PluginMetadata
    /// The containers the plugin declares, in descriptor order.
    public let containers: [MessageContainer]
    /// The validated types, in descriptor order.
    let types: [PluginType]
    /// The actions that loaded, in extension order.
    package let loadedActions: [LoadedAction]
    /// The actions the loader refused (each naming the action and the reason); the plugin loaded without them.
    public let actionRejections: [MissiveError]

    /// The objectNames of the plugin's types, in descriptor order.
    public var objectNames: [String] { types.map(\.objectName) }

    /// The actions that loaded, in the order the plugin declares them.
    public var actions: [ActionDeclaration] { loadedActions.map(\.info) }

    /// `DemoMessages 1.0.0 by Missive Samples (ABI 1.0, Swift 6.3.1): demo:link, demo:poll from /path/libDemoMessages.so`.
    public var description: String {
        "\(info.name) \(info.version) by \(info.vendor) (\(PluginInfo.buildDescription(abi: info.abiVersion, swift: metadata.swiftVersion))): "
            + "\(objectNames.joined(separator: ", ")) from \(info.path)"
    }
}

/// A plugin library that was opened and whose entry was called, with its descriptor read but not yet
/// judged: what the conformance suite inspects. ``PluginLoader/load(_:)`` builds on it.
package struct PluginProbe: Sendable {
    /// The file the library was first opened from.
    package let path: String
    /// The descriptor's `abi_version`.
    package let abiVersion: UInt32
    /// The descriptor's name, version and vendor; `nil` where the pointer is NULL or the string empty.
    package let name: String?, version: String?, vendor: String?
    /// The containers the descriptor declares (ABI 1.1), or the reason one cannot be read.
    package let containers: [Result<MessageContainer, MissiveError>]
    /// Each type descriptor, callable, or the reason it cannot be called.
    package let types: [Result<PluginType, MissiveError>]
    /// Each action of the `missive.actions.v1` extension, read but not judged, or the reason it cannot be read.
    package let actions: [Result<ActionDescriptor, MissiveError>]
    /// The library, for looking up the actions' symbols.
    let library: DynamicLibrary
    /// What the crash guard records while plugin-wide code (the entry, a composer action) runs.
    let site: CrashGuard.Site
    /// What the library's initialisers and entry changed in the process (put back already), or `nil`.
    /// ``PluginLoader/load(_:logger:)`` refuses the plugin for it; the checker reports it.
    package var processStateChange: ProcessStateChange?

    /// The actions judged as the loader judges them, against `metadata` and the types that can be called:
    /// those that load, and a reason for each refused.
    package func judgeActions(metadata: PluginMetadata) -> (actions: [LoadedAction], rejections: [MissiveError]) {
        PluginActions.resolve(actions, metadata: metadata, types: types.compactMap { try? $0.get() }, library: library, info: info, site: site)
    }

    /// The plugin's identity, with empty strings where the descriptor has none.
    package var info: PluginInfo {
        PluginInfo(name: name ?? "", version: version ?? "", vendor: vendor ?? "",
                   abiVersion: "\(abiVersion >> 16).\(abiVersion & 0xFFFF)", path: path)
    }
}

/// Loads plugin files: reads their metadata, opens them, calls their entry and validates the descriptor.
///
/// The order of checks for each file is: ELF and metadata (no plugin code runs), the ABI major in the
/// metadata, `dlopen`, the entry symbol, the descriptor's ABI version and struct size, the rest of the
/// descriptor, and finally the agreement of descriptor and metadata. The first failure refuses the file.
public enum PluginLoader {
    /// The information the host gives every plugin's entry.
    private static let host = HostInfo()

    /// What each library's entry gave, by library identity. The ABI promises that the entry is called
    /// once, so a library reached again (the same path, a link to it, a second discovery) is served from
    /// here; the lock also keeps two threads from calling one entry at once.
    private static let probes = Locked<[UInt: Result<PluginProbe, MissiveError>]>([:])

    /// Loads one plugin file. Loading a file again returns the same plugin without calling its entry again.
    ///
    /// - Parameters:
    ///   - path: the plugin file.
    ///   - logger: where to log decisions (a Swift patch-version difference, for example); `nil` logs
    ///     nothing. A refusal is thrown, not logged.
    public static func load(_ path: String, logger: Logger? = nil) throws(MissiveError) -> LoadedPlugin {
        try load(path, metadata: try PluginMetadata.read(fromFile: path), logger: logger)
    }

    /// Loads one plugin file whose metadata was already read (or taken from a cache).
    ///
    /// `identity` is the file's, when discovery already took it, so that the file is not looked at again.
    static func load(_ path: String, metadata: PluginMetadata, identity: FileIdentity? = nil, logger: Logger?) throws(MissiveError) -> LoadedPlugin {
        try checkSupported(metadata, path: path, logger: logger)
        let probe = try probe(path, identity: identity, declared: metadata)
        if probe.path != path {
            throw MissiveError(.shadowed, "the same library as \(probe.path), which is already loaded", file: path)
        }
        if let change = probe.processStateChange {
            throw MissiveError(
                .changedProcessState,
                "while loading (its initialisers and entry), the plugin \(change)\(change.isRestored ? "" : ", which could not all be put back"); "
                    + "the host put it back and refuses the plugin",
                file: path)
        }
        for (field, value) in [("name", probe.name), ("version", probe.version), ("vendor", probe.vendor)] where value == nil {
            throw MissiveError(.invalidDescriptor, "the descriptor's \(field) is missing", file: path)
        }
        let containers = try probe.containers.map { result throws(MissiveError) in try result.get() }
        var types: [PluginType] = []
        for result in probe.types {
            let type = try result.get()
            if let problem = type.registrationProblem { throw problem }
            if let container = type.container, !containers.contains(where: { $0.objectName == container }) {
                throw MissiveError(.invalidDescriptor, "the type's container \(container) is not one the plugin declares", file: path, objectName: type.objectName)
            }
            types.append(type)
        }
        let info = probe.info
        try checkAgreement(metadata: metadata, info: info, containers: containers, types: types)
        let (actions, actionRejections) = PluginActions.resolve(
            probe.actions, metadata: metadata, types: types, library: probe.library, info: info, site: probe.site)
        return LoadedPlugin(info: info, metadata: metadata, containers: containers, types: types, loadedActions: actions,
                            actionRejections: actionRejections)
    }

    /// Refuses metadata that declares an ABI major version this host does not support or a minor newer
    /// than its own, or a Swift plugin built by a Swift compiler of another major.minor version than the
    /// host's. A plugin that differs from the host only in the compiler's patch version loads, with a
    /// warning logged.
    static func checkSupported(_ metadata: PluginMetadata, path: String, logger: Logger?) throws(MissiveError) {
        guard metadata.abiMajor == Int(MISSIVE_ABI_MAJOR), metadata.abiMinor <= Int(MISSIVE_ABI_MINOR) else {
            throw MissiveError(
                .unsupportedABI,
                "built for Missive plugin ABI \(metadata.abiVersion); this host supports ABI \(MISSIVE_ABI_MAJOR).0 to \(MISSIVE_ABI_MAJOR).\(MISSIVE_ABI_MINOR)",
                file: path)
        }
        guard let pluginSwift = metadata.swiftVersion, pluginSwift != SwiftCompiler.version else { return }
        guard SwiftCompiler.majorMinor(pluginSwift) == SwiftCompiler.majorMinor(SwiftCompiler.version) else {
            throw MissiveError(
                .incompatibleToolchain,
                "built by Swift \(pluginSwift), but this host was built by Swift \(SwiftCompiler.version); a Swift plugin shares the host's "
                    + "Swift runtime, so rebuild it with Swift \(SwiftCompiler.majorMinor(SwiftCompiler.version) ?? SwiftCompiler.version)",
                file: path)
        }
        logger?.warning(
            "plugin built by another Swift patch release than the host; loading it",
            metadata: ["missive.file": "\(path)", "missive.pluginSwift": "\(pluginSwift)", "missive.hostSwift": "\(SwiftCompiler.version)"])
    }

    /// Opens a library with `dlopen` without calling any of its code beyond its initialisers.
    package static func openLibrary(_ path: String) throws(MissiveError) {
        _ = try DynamicLibrary.open(path)
    }

    /// Opens a library, calls its entry (once per library, ever) and reads its descriptor after checking
    /// the ABI version and the struct size.
    ///
    /// The library's initialisers and its entry run under the crash guard, so that a crash in either is
    /// recorded for the quarantine (``PluginQuarantine``), and between two process states (``ProcessState``):
    /// what they changed is put back, and named by the probe's ``PluginProbe/processStateChange``. The
    /// library's loaded segments are recorded, so that a crash on a thread it starts is attributed to it.
    package static func probe(_ path: String) throws(MissiveError) -> PluginProbe {
        try probe(path, identity: nil)
    }

    /// ``probe(_:)`` for a file whose identity discovery already took (`nil` to take it here). `declared` is
    /// the file's metadata, when read already: the descriptor's strings that hold the same bytes as its names
    /// share its Strings instead of being made again (nothing is judged here; ``load(_:logger:)`` compares the two).
    static func probe(_ path: String, identity known: FileIdentity?, declared: PluginMetadata? = nil) throws(MissiveError) -> PluginProbe {
        let identity = known ?? FileIdentity.of(path)
        let sites = CrashGuard.FileSites(path: path, identity: identity)
        let site = sites.site(objectName: nil)
        return try ProcessState.exclusively { () throws(MissiveError) -> PluginProbe in
            try probe(path, sites: sites, site: site, declared: declared)
        }
    }

    /// ``probe(_:identity:declared:)`` under the process-state lock.
    private static func probe(_ path: String, sites: CrashGuard.FileSites, site: CrashGuard.Site, declared: PluginMetadata?) throws(MissiveError) -> PluginProbe {
        let state = ProcessState()
        let library: DynamicLibrary
        do {
            library = try CrashGuard.run(site, .load) { () throws(MissiveError) in try DynamicLibrary.open(path) }
        } catch {
            // Initialisers may have run before dlopen failed.
            _ = state.restore()
            throw error
        }
        return try probes.withLock { cache in
            if let earlier = cache[library.identity] { return earlier }
            var result = Result { () throws(MissiveError) in try instantiate(library, path: path, sites: sites, site: site, declared: declared) }
            if let change = state.restore(), case .success(var probe) = result {
                probe.processStateChange = change
                result = .success(probe)
            }
            cache[library.identity] = result
            return result
        }.get()
    }

    private static func instantiate(
        _ library: DynamicLibrary, path: String, sites: CrashGuard.FileSites, site: CrashGuard.Site, declared: PluginMetadata?
    ) throws(MissiveError) -> PluginProbe {
        guard let entryAddress = library.symbol(MISSIVE_ENTRY_SYMBOL) else {
            throw MissiveError(.missingEntry, "the library does not export \(MISSIVE_ENTRY_SYMBOL)", file: path)
        }
        CrashGuard.recordRanges(of: entryAddress, site: site)
        let entry = unsafeBitCast(entryAddress, to: missive_plugin_entry_fn.self)
        guard let descriptor = CrashGuard.run(site, .entry, { host.withPointer { entry($0) } }) else {
            throw MissiveError(.missingEntry, "\(MISSIVE_ENTRY_SYMBOL) returned no descriptor (the plugin refused this host)", file: path)
        }
        let raw = UnsafeRawPointer(descriptor)
        // Only the first two fields may be read before they are checked.
        let abiVersion = raw.load(fromByteOffset: 0, as: UInt32.self)
        let major = abiVersion >> 16, minor = abiVersion & 0xFFFF
        guard major == UInt32(MISSIVE_ABI_MAJOR), minor <= UInt32(MISSIVE_ABI_MINOR) else {
            throw MissiveError(
                .unsupportedABI, "descriptor reports ABI \(major).\(minor); this host supports ABI \(MISSIVE_ABI_MAJOR).0 to \(MISSIVE_ABI_MAJOR).\(MISSIVE_ABI_MINOR)",
                file: path)
        }
        let structSize = raw.load(fromByteOffset: 4, as: UInt32.self)
        guard structSize >= MISSIVE_PLUGIN_SIZE_1_0 else {
            throw MissiveError(
                .invalidDescriptor, "plugin descriptor is \(structSize) bytes; ABI \(major).0 needs at least \(MISSIVE_PLUGIN_SIZE_1_0)",
                file: path)
        }
        // No byte past struct_size is read: a 1.0 descriptor ends before the 1.1 fields, which stay zero here.
        var plugin = missive_plugin()
        withUnsafeMutableBytes(of: &plugin) { copy in
            copy.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: min(Int(structSize), copy.count)))
        }
        func text(_ pointer: UnsafePointer<CChar>?, _ known: String?) -> String? {
            guard let pointer, pointer.pointee != 0 else { return nil }
            return PluginType.string(pointer, sharing: known)
        }
        guard plugin.type_count == 0 || plugin.types != nil else {
            throw MissiveError(.invalidDescriptor, "the descriptor lists \(plugin.type_count) types but no array", file: path)
        }
        guard plugin.container_count == 0 || plugin.containers != nil else {
            throw MissiveError(.invalidDescriptor, "the descriptor lists \(plugin.container_count) containers but no array", file: path)
        }
        let partial = PluginProbe(
            path: path, abiVersion: abiVersion, name: text(plugin.name, declared?.name), version: text(plugin.version, declared?.version),
            vendor: text(plugin.vendor, declared?.vendor),
            containers: [], types: [], actions: [], library: library, site: site)
        var containers: [Result<MessageContainer, MissiveError>] = []
        for index in 0..<Int(plugin.container_count) {
            containers.append(Result { () throws(MissiveError) in try readContainer(plugin.containers[index], index: index, path: path) })
        }
        var types: [Result<PluginType, MissiveError>] = []
        types.reserveCapacity(Int(plugin.type_count))
        // One for all the types: a change after a call of one refuses them all.
        let watch = ProcessWatch()
        // Made once for all the types: each carries it.
        let info = partial.info
        for index in 0..<Int(plugin.type_count) {
            guard let type = plugin.types[index] else {
                throw MissiveError(.invalidDescriptor, "type \(index) of the descriptor is NULL", file: path)
            }
            types.append(Result { () throws(MissiveError) in
                try PluginType(type, plugin: info, sites: sites, watch: watch, declared: declared?.types ?? [], position: index)
            })
        }
        return PluginProbe(
            path: path, abiVersion: abiVersion, name: partial.name, version: partial.version, vendor: partial.vendor, containers: containers,
            types: types, actions: CrashGuard.run(site, .entry) { PluginActions.read(plugin, path: path) }, library: library, site: site)
    }

    /// Reads one container descriptor: its size first, then its fields.
    private static func readContainer(_ pointer: UnsafePointer<missive_container>?, index: Int, path: String) throws(MissiveError) -> MessageContainer {
        guard let pointer else { throw MissiveError(.invalidDescriptor, "container \(index) of the descriptor is NULL", file: path) }
        let size = UnsafeRawPointer(pointer).load(as: UInt32.self)
        guard size >= MemoryLayout<missive_container>.size else {
            throw MissiveError(.invalidDescriptor, "container descriptor is \(size) bytes; ABI 1.1 needs \(MemoryLayout<missive_container>.size)", file: path)
        }
        let container = pointer.pointee
        guard let name = container.object_name, let key = container.key else {
            throw MissiveError(.invalidDescriptor, "container \(index) lacks an object_name or a key", file: path)
        }
        let kinds: [UInt32: MessageContainer.KeyKind] = [UInt32(MISSIVE_KEY_STRING): .string, UInt32(MISSIVE_KEY_INTEGER): .integer]
        guard let kind = kinds[container.key_kind] else {
            throw MissiveError(.invalidDescriptor, "container \(String(cString: name)) has key_kind \(container.key_kind), which is not MISSIVE_KEY_STRING or MISSIVE_KEY_INTEGER",
                               file: path, objectName: String(cString: name))
        }
        return MessageContainer(objectName: String(cString: name), key: String(cString: key), keyKind: kind)
    }

    /// Why the metadata and the descriptor disagree, or `nil` when they agree.
    package static func disagreement(
        metadata: PluginMetadata, info: PluginInfo, containers: [MessageContainer], types: [PluginType]
    ) -> String? {
        // The common case, agreement, is decided without copying, sorting or formatting anything: the types as
        // multisets (each descriptor type matched with an unmatched declared one; the linker decides the order of
        // the records), the containers as sets.
        if metadata.name == info.name && metadata.version == info.version && metadata.vendor == info.vendor
            && metadata.types.count == types.count && types.count <= 64
            && metadata.containers.allSatisfy(containers.contains) && containers.allSatisfy(metadata.containers.contains)
        {
            var matched: UInt64 = 0
            var agree = true
            for actual in types {
                var found = false
                for (index, declared) in metadata.types.enumerated() where matched & (1 << UInt64(index)) == 0 {
                    if declared.objectName == actual.objectName && declared.businessID == actual.businessID && declared.container == actual.container
                        && declared.persistenceValue == actual.persistenceValue && declared.isMedia == actual.isMedia
                    {
                        matched |= 1 << UInt64(index)
                        found = true
                        break
                    }
                }
                if !found {
                    agree = false
                    break
                }
            }
            if agree { return nil }
        }
        // Otherwise (or past 64 types) compared as sorted lists, which gives the differences too.
        let declaredTypes = metadata.types.map { TypeFacts($0.objectName, $0.businessID, $0.container, $0.persistenceValue, $0.isMedia) }.sorted()
        let actualTypes = types.map { TypeFacts($0.objectName, $0.businessID, $0.container, $0.persistenceValue, $0.isMedia) }.sorted()
        let declaredContainers = Set(metadata.containers), actualContainers = Set(containers)
        if metadata.name == info.name && metadata.version == info.version && metadata.vendor == info.vendor && declaredTypes == actualTypes
            && declaredContainers == actualContainers
        {
            return nil
        }
        var differences: [String] = []
        if metadata.name != info.name { differences.append("name '\(metadata.name)' vs '\(info.name)'") }
        if metadata.version != info.version { differences.append("version '\(metadata.version)' vs '\(info.version)'") }
        if metadata.vendor != info.vendor { differences.append("vendor '\(metadata.vendor)' vs '\(info.vendor)'") }
        // Compared as sets: the linker decides the order of records in the section.
        let declaredNames = Set(metadata.types.map(\.objectName)), actualNames = Set(types.map(\.objectName))
        let onlyDeclared = declaredNames.subtracting(actualNames).sorted(), onlyActual = actualNames.subtracting(declaredNames).sorted()
        if !onlyDeclared.isEmpty {
            differences.append(
                "the metadata declares \(onlyDeclared.joined(separator: ", ")), which the descriptor lacks "
                    + "(with the Swift SDK: list every @MissiveMessage type in #MissivePlugin's types)")
        }
        if !onlyActual.isEmpty { differences.append("the descriptor has \(onlyActual.joined(separator: ", ")), which the metadata does not declare") }
        // Of the types both sides name, the facts that differ.
        let declared = declaredTypes.filter { actualNames.contains($0.objectName) }, actual = actualTypes.filter { declaredNames.contains($0.objectName) }
        if declared != actual {
            differences.append("types [\(declared.map(\.description).joined(separator: ", "))] vs [\(actual.map(\.description).joined(separator: ", "))] (objectName|container/value|persistence|media)")
        }
        if declaredContainers != actualContainers {
            func list(_ set: Set<MessageContainer>) -> String { set.map(\.description).sorted().joined(separator: ", ") }
            differences.append("containers [\(list(declaredContainers))] vs [\(list(actualContainers))]")
        }
        guard !differences.isEmpty else { return nil }
        return "metadata disagrees with the runtime descriptor (metadata vs descriptor): \(differences.joined(separator: "; "))"
    }

    /// What the metadata and the descriptor must agree on for one type.
    private struct TypeFacts: Comparable, CustomStringConvertible {
        let objectName: String, businessID: String?, container: String?, persistence: UInt32, isMedia: Bool
        var description: String {
            "\(objectName)|\(businessID.map { "\(container ?? MessageContainer.custom.objectName)/\($0)" } ?? "-")|\(persistence)|\(isMedia)"
        }
        init(_ objectName: String, _ businessID: String?, _ container: String?, _ persistence: UInt32, _ isMedia: Bool) {
            (self.objectName, self.businessID, self.container, self.persistence, self.isMedia) = (objectName, businessID, container, persistence, isMedia)
        }
        static func < (a: TypeFacts, b: TypeFacts) -> Bool {
            (a.objectName, a.businessID ?? "", a.container ?? "", a.persistence) < (b.objectName, b.businessID ?? "", b.container ?? "", b.persistence)
        }
    }

    private static func checkAgreement(
        metadata: PluginMetadata, info: PluginInfo, containers: [MessageContainer], types: [PluginType]
    ) throws(MissiveError) {
        if let problem = disagreement(metadata: metadata, info: info, containers: containers, types: types) {
            throw MissiveError(.metadataMismatch, problem, file: info.path)
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
