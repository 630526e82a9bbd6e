#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Missive

/// The metadata reader's invariants, for one input.
///
/// The first byte chooses how the rest is used: even, it is the contents of a `missive_meta` section, which
/// the target wraps in a minimal ELF shared object (``ELFWriter``); odd, it is the whole file. Either way the
/// file is written to disk and read with `PluginMetadata.read(fromFile:)`, the path a host takes.
///
/// 1. Reading gives metadata or throws a `MissiveError` naming the file, with one of the codes a reader
///    documents: `not-a-plugin`, `wrong-machine`, `missing-metadata` or `invalid-metadata`. `io-failure`
///    would mean that it read past the end of the file, whose size it checks every offset against.
/// 2. For a wrapped section, reading the file gives what parsing the section's bytes gives: the ELF reader
///    hands the parser exactly the section.
/// 3. Metadata it returns is complete: a plugin name, version and vendor, an ABI minor from 0 to 65535, a
///    Swift version that parses, every type and action with its required names, containers with a key.
/// 4. Metadata written back as records parses to the same metadata, byte for byte.
/// 5. Registering it (from the metadata alone, as a lazy host does) registers only names that pass the name
///    grammar, with no reserved prefix, and refuses the others with errors that name the file.
public enum MetadataChecks {
    /// A private folder for the plugin file, in memory where the system has /dev/shm.
    static let directory: String = {
        for base in ["/dev/shm", "/tmp"] {
            var template = Array("\(base)/missive-fuzz-XXXXXX".utf8CString)
            if template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil {
                return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        fatalError("cannot create a folder for the fuzzed plugin file")
    }()

    static let path = directory + "/libfuzzed.so"

    static let readerCodes: [MissiveError.Code] = [.notAPlugin, .wrongMachine, .missingMetadata, .invalidMetadata]

    public static func check(_ input: UnsafeBufferPointer<UInt8>) {
        guard let mode = input.first else { return }
        let body = UnsafeBufferPointer(rebasing: input[1...])
        let section: [UInt8]? = mode & 1 == 0 ? Array(body) : nil
        write(section.map { ELFWriter.sharedObject(section: PluginMetadata.sectionName, contents: $0) } ?? Array(body))

        let read = Result { () throws(MissiveError) in try PluginMetadata.read(fromFile: path) }
        if case .failure(let error) = read {
            guard readerCodes.contains(error.code) else { violated("reading failed with \(error.code)", error.description) }
            guard error.file == path else { violated("a reading error does not name the file", error.description) }
        }
        if let section {
            let parsed = Result { () throws(MissiveError) in try PluginMetadata.parse(section) }
            switch (read, parsed) {
            case (.success(let fromFile), .success(let fromSection)):
                guard MetadataRecords.section(fromFile) == MetadataRecords.section(fromSection) else {
                    violated("the file's metadata differs from its section's", "section: \(show(section))")
                }
            case (.failure(let fileError), .failure(let sectionError)):
                guard fileError.code == .invalidMetadata, fileError.message == "bad metadata: \(sectionError.message)" else {
                    violated("the file's error differs from its section's", "file: \(fileError)\nsection: \(sectionError)")
                }
            default:
                violated("the file and its section do not agree on whether the metadata is valid", "file: \(read)\nsection: \(parsed)")
            }
        }
        guard case .success(let metadata) = read else { return }
        checkComplete(metadata)
        checkRoundTrip(metadata)
        checkRegistration(metadata)
    }

    static func checkComplete(_ metadata: PluginMetadata) {
        for (field, value) in [("name", metadata.name), ("version", metadata.version), ("vendor", metadata.vendor)] where value.isEmpty {
            violated("metadata with an empty plugin \(field)")
        }
        guard (0...0xFFFF).contains(metadata.abiMinor) else { violated("metadata with ABI minor \(metadata.abiMinor)") }
        if let swift = metadata.swiftVersion, SwiftCompiler.majorMinor(swift) == nil {
            violated("metadata with a Swift version that does not parse", swift)
        }
        for container in metadata.containers where container.objectName.isEmpty || container.key.isEmpty {
            violated("a container without an objectName or a key", "\(container)")
        }
        for type in metadata.types {
            guard !type.objectName.isEmpty else { violated("a type without an objectName") }
            if type.container != nil && type.businessID == nil { violated("a type in a container without a value", type.objectName) }
        }
        for action in metadata.actions {
            for (field, value) in [("objectName", action.objectName), ("id", action.id), ("title", action.title), ("icon", action.icon),
                                   ("signature", action.signature)] where value.isEmpty {
                violated("an action with an empty \(field)", action.id)
            }
            if action.kind == .composer && action.yields != .content { violated("a composer action that yields \(action.yields)", action.id) }
            if action.symbol?.isEmpty == true { violated("an action with an empty symbol", action.id) }
        }
    }

    static func checkRoundTrip(_ metadata: PluginMetadata) {
        let written = MetadataRecords.section(metadata)
        let again: PluginMetadata
        do {
            again = try PluginMetadata.parse(written)
        } catch {
            violated("metadata written back as records does not parse", "\(error)\nrecords: \(show(written))")
        }
        guard MetadataRecords.section(again) == written else {
            violated("metadata written back as records parses to other metadata", "records: \(show(written))")
        }
    }

    static func checkRegistration(_ metadata: PluginMetadata) {
        let searchPath = PluginSearchPath(entries: [.init(directory: directory, source: .explicit)])
        let result = MessageRegistry.discover(searchPath: searchPath, includeBuiltIns: true, loading: .lazy)
        for rejection in result.rejections where rejection.file == nil {
            violated("a refusal that names no file", rejection.description)
        }
        let declared = Set(metadata.types.map(\.objectName) + metadata.containers.map(\.objectName))
        let registry = result.registry
        for type in registry.types {
            guard case .plugin = type.origin else { continue }
            let name = type.objectName
            guard declared.contains(name) else { violated("a registered name that the metadata does not declare", name) }
            if let problem = NameGrammar.objectNameProblem(name) { violated("a registered objectName breaks the grammar", problem) }
            if NameGrammar.isReservedObjectName(name) { violated("a plugin registered a reserved objectName", name) }
            if let container = type.declaredContainer, let problem = NameGrammar.containerKeyProblem(container.key) {
                violated("a registered container key breaks the grammar", problem)
            }
            guard let value = type.businessID else { continue }
            guard let containerName = type.container, let container = registry.type(objectName: containerName)?.declaredContainer else {
                violated("a type registered in a container that is not registered", name)
            }
            if let problem = NameGrammar.containerValueProblem(value, kind: container.keyKind) {
                violated("a registered container value breaks the grammar", problem)
            }
            if container == .custom && NameGrammar.isReservedBusinessID(value) { violated("a plugin registered a reserved businessID", value) }
            guard registry.type(container: containerName, value: value)?.objectName == name else {
                violated("a registered type cannot be found by its container value", "\(name) in \(containerName) under \(value)")
            }
        }
    }

    private static func write(_ bytes: [UInt8]) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { fatalError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + done, bytes.count - done) }
            guard wrote > 0 else { fatalError("cannot write \(path): \(String(cString: strerror(errno)))") }
            done += wrote
        }
    }
}
