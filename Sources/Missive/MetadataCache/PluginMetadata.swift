import CMissivePlugin
import MissiveCore

/// What a plugin file says about itself in its `missive_meta` ELF section, read without running any of
/// its code.
public struct PluginMetadata: Sendable, Hashable {
    /// One message type the plugin declares.
    public struct TypeEntry: Sendable, Hashable {
        /// The type's objectName.
        public var objectName: String
        /// The value its container dispatches on to reach it (for `MS:Custom`, the business identifier), if any.
        public var businessID: String?
        /// The container ``businessID`` belongs to when it is not `MS:Custom` (the record's `container`, whose
        /// `containerValue` is then the ``businessID``).
        public var container: String?
        /// The persistence flag as written, which may be a value Missive does not know.
        public var persistenceValue: UInt32
        /// Whether the type is a media type.
        public var isMedia: Bool

        /// Creates an entry.
        public init(objectName: String, businessID: String?, container: String? = nil, persistenceValue: UInt32, isMedia: Bool) {
            self.objectName = objectName
            self.businessID = businessID
            self.container = container
            self.persistenceValue = persistenceValue
            self.isMedia = isMedia
        }

        /// The persistence flag, if ``persistenceValue`` is one of 0, 1, 3 and 16.
        public var persistence: Persistence? { Persistence(rawValue: persistenceValue) }
    }

    /// One action the plugin declares (an `action` record; missive_plugin.h, "The actions extension").
    ///
    /// The record's members are read as written; the loader checks the signature and the names against
    /// their grammars, and refuses an action that breaks them, or whose extension disagrees with this.
    public struct ActionEntry: Sendable, Hashable {
        /// A message action or a composer action.
        public var kind: ActionKind
        /// The type acted on (message) or created (composer).
        public var objectName: String
        /// The action's id.
        public var id: String
        /// What a menu or button shows.
        public var title: String
        /// The icon's name.
        public var icon: String
        /// Higher comes first.
        public var priority: Int32
        /// What a message action gives back; `.content` for composer actions.
        public var yields: ActionYield
        /// The C signature, as written.
        public var signature: String
        /// The exported name of the function, when the record gives one.
        public var symbol: String?

        /// Creates an entry.
        public init(
            kind: ActionKind, objectName: String, id: String, title: String, icon: String, priority: Int32, yields: ActionYield = .content,
            signature: String, symbol: String? = nil
        ) {
            (self.kind, self.objectName, self.id, self.title, self.icon) = (kind, objectName, id, title, icon)
            (self.priority, self.yields, self.signature, self.symbol) = (priority, yields, signature, symbol)
        }
    }

    /// The ELF section that holds the metadata.
    public static let sectionName = MISSIVE_METADATA_SECTION

    /// The plugin's name.
    public var name: String
    /// The plugin's version.
    public var version: String
    /// Who made the plugin.
    public var vendor: String
    /// The ABI major version the plugin was built for.
    public var abiMajor: Int
    /// The ABI minor version the plugin was built for; 0 when the metadata does not say (plugins built
    /// before the metadata recorded it, all for ABI 1.0).
    public var abiMinor: Int
    /// The version of the Swift compiler that built the plugin, `major.minor.patch`, recorded by the Swift
    /// SDK; `nil` for plugins written in C or another language, which do not depend on the Swift runtime.
    public var swiftVersion: String?
    /// The containers the plugin declares, in the order the section lists them.
    public var containers: [MessageContainer]
    /// The message types, in the order the section lists them.
    public var types: [TypeEntry]
    /// The actions, in the order the section lists them.
    public var actions: [ActionEntry]
    /// The data files the plugin reads (a dictionary, a font), in the order the section lists its `file`
    /// records: each a path relative to the folder of the plugin file, read-only, in its normal spelling (no
    /// `..`, `.` or empty component; no leading `/`). A host that confines the plugin lets it read these and
    /// no other file; ``read(fromFile:)`` refuses metadata that declares an invalid path.
    public var dataFiles: [String] = []

    /// The ABI version as `major.minor`, for example `1.0`: the one spelling Missive shows everywhere.
    public var abiVersion: String { "\(abiMajor).\(abiMinor)" }

    /// Creates metadata.
    public init(
        name: String, version: String, vendor: String, abiMajor: Int, abiMinor: Int = 0, swiftVersion: String? = nil,
        containers: [MessageContainer] = [], types: [TypeEntry], actions: [ActionEntry] = []
    ) {
        self.containers = containers
        self.actions = actions
        self.name = name
        self.version = version
        self.vendor = vendor
        self.abiMajor = abiMajor
        self.abiMinor = abiMinor
        self.swiftVersion = swiftVersion
        self.types = types
    }

    /// Reads the metadata of the plugin file at `path`.
    ///
    /// - Throws: ``MissiveError`` with code `notAPlugin`, `wrongMachine`, `missingMetadata`, `invalidMetadata`
    ///   or `ioFailure`.
    public static func read(fromFile path: String) throws(MissiveError) -> PluginMetadata {
        try read(fromFile: path, knownSize: nil)
    }

    /// ``read(fromFile:)`` for a file whose size discovery already took (see ``ELFSection/read(_:from:knownSize:)``).
    static func read(fromFile path: String, knownSize: Int64?) throws(MissiveError) -> PluginMetadata {
        guard let section = try ELFSection.read(sectionName, from: path, knownSize: knownSize) else {
            throw MissiveError(.missingMetadata, "not a Missive plugin: the shared object has no \(sectionName) section", file: path)
        }
        do {
            return try parse(section)
        } catch {
            throw MissiveError(.invalidMetadata, "bad metadata: \(error.message)", file: path)
        }
    }

    /// Parses the contents of a metadata section: JSON records separated by NUL bytes.
    ///
    /// Members a record does not need, and records of kinds it does not know, are ignored, so that later
    /// versions can add some.
    public static func parse(_ section: [UInt8]) throws(MissiveError) -> PluginMetadata {
        var plugin: (name: String, version: String, vendor: String, abi: Int, abiMinor: Int, swift: String?)?
        var types: [TypeEntry] = []
        var containers: [MessageContainer] = []
        var actions: [ActionEntry] = []
        var dataFiles: [String] = []
        for chunk in records(in: section) {
            let record = try Record(chunk)
            guard record.kind != nil else { throw MissiveError(.invalidMetadata, "a record has no string 'record' naming its kind") }
            switch record.kind {
            case "plugin":
                guard plugin == nil else { throw MissiveError(.invalidMetadata, "more than one plugin record") }
                guard let abi = record.abi else { throw MissiveError(.invalidMetadata, "plugin record has no integer 'abi'") }
                if record.abiMinorPresent && record.abiMinor.map({ $0 >= 0 && $0 <= 0xFFFF }) != true {
                    throw MissiveError(.invalidMetadata, "plugin record's 'abiMinor' is not an integer from 0 to 65535")
                }
                if record.swiftPresent && record.swift.flatMap(SwiftCompiler.majorMinor) == nil {
                    throw MissiveError(.invalidMetadata, "plugin record's 'swift' is not a version like \"6.3.1\"")
                }
                plugin = (try required(record.name, "name"), try required(record.version, "version"), try required(record.vendor, "vendor"),
                          Int(abi), Int(record.abiMinor ?? 0), record.swift)
            case "type":
                let objectName = try required(record.objectName, "objectName")
                if record.businessIDPresent && record.businessID == nil {
                    throw MissiveError(.invalidMetadata, "type \(objectName): 'businessID' is not a string")
                }
                if record.containerPresent != record.containerValuePresent || (record.containerPresent && (record.container == nil || record.containerValue == nil)) {
                    throw MissiveError(.invalidMetadata, "type \(objectName): 'container' and 'containerValue' must both be strings, or both left out")
                }
                if record.containerPresent && record.businessIDPresent {
                    throw MissiveError(.invalidMetadata, "type \(objectName): a type has 'businessID' or 'container', not both")
                }
                guard let persistence = record.persistence, let value = UInt32(exactly: persistence) else {
                    throw MissiveError(.invalidMetadata, "type \(objectName): 'persistence' is not a non-negative integer")
                }
                types.append(
                    TypeEntry(objectName: objectName, businessID: record.containerValue ?? record.businessID, container: record.container,
                              persistenceValue: value, isMedia: (record.flags ?? 0) & Int64(MISSIVE_TYPE_MEDIA) != 0))
            case "container":
                let objectName = try required(record.objectName, "objectName")
                let key = try required(record.key, "key")
                guard let kind = record.keyKind.flatMap(MessageContainer.KeyKind.init(rawValue:)) else {
                    throw MissiveError(.invalidMetadata, "container \(objectName): 'keyKind' is not \"string\" or \"integer\"")
                }
                containers.append(MessageContainer(objectName: objectName, key: key, keyKind: kind))
            case "action":
                actions.append(try actionEntry(record))
            case "file":
                guard let path = record.path else { throw MissiveError(.invalidMetadata, "a file record has no string 'path'") }
                dataFiles.append(path)
            default:
                // A record kind of a later version: ignored, as unknown members are.
                continue
            }
        }
        guard let plugin else { throw MissiveError(.invalidMetadata, "no plugin record") }
        if let problem = DataFileGrammar.problem(in: dataFiles) { throw MissiveError(.invalidMetadata, problem) }
        var metadata = PluginMetadata(name: plugin.name, version: plugin.version, vendor: plugin.vendor, abiMajor: plugin.abi,
                                      abiMinor: plugin.abiMinor, swiftVersion: plugin.swift, containers: containers, types: types, actions: actions)
        metadata.dataFiles = dataFiles
        return metadata
    }

    /// The entry of an `action` record, whose members must be present and of the right JSON kind.
    private static func actionEntry(_ record: Record) throws(MissiveError) -> ActionEntry {
        let id = try required(record.id, "id")
        func invalid(_ problem: String) -> MissiveError { MissiveError(.invalidMetadata, "action \(id): \(problem)") }
        guard let kind = record.actionKind.flatMap(ActionKind.init(rawValue:)) else { throw invalid("'kind' is not \"message\" or \"composer\"") }
        var yields = ActionYield.content
        if record.yieldsPresent {
            guard let value = record.yields.flatMap(ActionYield.init(rawValue:)) else { throw invalid("'yields' is not \"content\" or \"url\"") }
            guard kind == .message || value == .content else { throw invalid("a composer action yields content, not \(value.rawValue)") }
            yields = value
        }
        guard let priority = record.priority.flatMap(Int32.init(exactly:)) else {
            throw invalid("'priority' is not an integer from -2147483648 to 2147483647")
        }
        if record.symbolPresent && record.symbol?.isEmpty != false { throw invalid("'symbol' is not a non-empty string") }
        do {
            return ActionEntry(
                kind: kind, objectName: try required(record.objectName, "objectName"), id: id, title: try required(record.title, "title"),
                icon: try required(record.icon, "icon"), priority: priority, yields: yields, signature: try required(record.signature, "signature"),
                symbol: record.symbol)
        } catch {
            throw invalid(error.message)
        }
    }

    /// The members of one record, read with Missive's own scanner into typed fields: hosts read every
    /// plugin's metadata at startup, so this is on the startup path. Unknown members are ignored.
    private struct Record {
        var kind: String?, name: String?, version: String?, vendor: String?, objectName: String?, businessID: String?, swift: String?
        var container: String?, containerValue: String?, key: String?, keyKind: String?
        var abi: Int64?, abiMinor: Int64?, persistence: Int64?, flags: Int64?
        var businessIDPresent = false, abiMinorPresent = false, swiftPresent = false, containerPresent = false, containerValuePresent = false
        // Action records.
        var actionKind: String?, id: String?, title: String?, icon: String?, yields: String?, signature: String?, symbol: String?
        var priority: Int64?
        // File records.
        var path: String?
        var yieldsPresent = false, symbolPresent = false

        init(_ bytes: ArraySlice<UInt8>) throws(MissiveError) {
            let parsed = bytes.withUnsafeBufferPointer { buffer -> Result<Record, MissiveJSONError> in
                var record = Record()
                var scanner = JSONScanner(buffer)
                let reader = JSONValueReader(buffer)
                do throws(MissiveJSONError) {
                    try scanner.scanObject { (key, range) throws(MissiveJSONError) in
                        switch key {
                        case "record": record.kind = reader.stringValue(range)
                        case "name": record.name = reader.stringValue(range)
                        case "version": record.version = reader.stringValue(range)
                        case "vendor": record.vendor = reader.stringValue(range)
                        case "objectName": record.objectName = reader.stringValue(range)
                        case "businessID":
                            record.businessIDPresent = true
                            record.businessID = reader.stringValue(range)
                        case "abi": record.abi = reader.decodeInt64(range)
                        case "abiMinor":
                            record.abiMinorPresent = true
                            record.abiMinor = reader.decodeInt64(range)
                        case "swift":
                            record.swiftPresent = true
                            record.swift = reader.stringValue(range)
                        case "container":
                            record.containerPresent = true
                            record.container = reader.stringValue(range)
                        case "containerValue":
                            record.containerValuePresent = true
                            record.containerValue = reader.stringValue(range)
                        case "key": record.key = reader.stringValue(range)
                        case "keyKind": record.keyKind = reader.stringValue(range)
                        case "persistence": record.persistence = reader.decodeInt64(range)
                        case "flags": record.flags = reader.decodeInt64(range)
                        case "kind": record.actionKind = reader.stringValue(range)
                        case "id": record.id = reader.stringValue(range)
                        case "title": record.title = reader.stringValue(range)
                        case "icon": record.icon = reader.stringValue(range)
                        case "priority": record.priority = reader.decodeInt64(range)
                        case "signature": record.signature = reader.stringValue(range)
                        case "yields":
                            record.yieldsPresent = true
                            record.yields = reader.stringValue(range)
                        case "symbol":
                            record.symbolPresent = true
                            record.symbol = reader.stringValue(range)
                        case "path": record.path = reader.stringValue(range)
                        default: break
                        }
                    }
                } catch {
                    return .failure(error)
                }
                return .success(record)
            }
            switch parsed {
            case .success(let record): self = record
            case .failure(let error):
                let preview = String(decoding: bytes.prefix(80), as: UTF8.self)
                throw MissiveError(.invalidMetadata, "a record is not a JSON object (\(error)): \(preview)")
            }
        }

        private init() {}
    }

    /// The NUL-separated records of a section, skipping empty ones (the linker may pad with NULs).
    private static func records(in section: [UInt8]) -> [ArraySlice<UInt8>] {
        var records: [ArraySlice<UInt8>] = []
        var start = section.startIndex
        while start < section.endIndex {
            let end = section[start...].firstIndex(of: 0) ?? section.endIndex
            if section[start..<end].contains(where: { $0 != 0x20 && $0 != 0x0A }) { records.append(section[start..<end]) }
            start = end + 1
        }
        return records
    }

    private static func required(_ value: String?, _ key: String) throws(MissiveError) -> String {
        guard let value, !value.isEmpty else { throw MissiveError(.invalidMetadata, "record lacks a non-empty string '\(key)'") }
        return value
    }
}
