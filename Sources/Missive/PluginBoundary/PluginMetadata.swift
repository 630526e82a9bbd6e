import CMissivePlugin
import Foundation
import MissiveCore

/// What a plugin file says about itself in its `missive_meta` ELF section, read without running any of
/// its code.
public struct PluginMetadata: Sendable, Hashable {
    /// One message type the plugin declares.
    public struct TypeEntry: Sendable, Hashable {
        /// The type's objectName.
        public var objectName: String
        /// The type's business identifier, if any.
        public var businessID: String?
        /// The persistence flag as written, which may be a value Missive does not know.
        public var persistenceValue: UInt32
        /// Whether the type is a media type.
        public var isMedia: Bool

        /// Creates an entry.
        public init(objectName: String, businessID: String?, persistenceValue: UInt32, isMedia: Bool) {
            self.objectName = objectName
            self.businessID = businessID
            self.persistenceValue = persistenceValue
            self.isMedia = isMedia
        }

        /// The persistence flag, if ``persistenceValue`` is one of 0, 1, 3 and 16.
        public var persistence: Persistence? { Persistence(rawValue: persistenceValue) }
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
    /// The message types, in the order the section lists them.
    public var types: [TypeEntry]

    /// Reads the metadata of the plugin file at `path`.
    ///
    /// - Throws: ``MissiveError`` with code `notAPlugin`, `wrongMachine`, `missingMetadata`, `invalidMetadata`
    ///   or `ioFailure`.
    public static func read(fromFile path: String) throws(MissiveError) -> PluginMetadata {
        guard let section = try ELFSection.read(sectionName, from: path) else {
            throw MissiveError(.missingMetadata, "not a Missive plugin: the shared object has no \(sectionName) section", file: path)
        }
        do {
            return try parse(section)
        } catch {
            throw MissiveError(.invalidMetadata, "bad metadata: \(error.message)", file: path)
        }
    }

    /// Parses the contents of a metadata section: JSON records separated by NUL bytes.
    public static func parse(_ section: [UInt8]) throws(MissiveError) -> PluginMetadata {
        var plugin: (name: String, version: String, vendor: String, abi: Int)?
        var types: [TypeEntry] = []
        for chunk in section.split(separator: 0) where !chunk.allSatisfy({ $0 == 0x20 || $0 == 0x0A }) {
            guard let record = try? JSONSerialization.jsonObject(with: Data(chunk)) as? [String: Any] else {
                throw MissiveError(.invalidMetadata, "a record is not a JSON object: \(String(decoding: chunk.prefix(80), as: UTF8.self))")
            }
            switch record["record"] as? String {
            case "plugin":
                guard plugin == nil else { throw MissiveError(.invalidMetadata, "more than one plugin record") }
                guard let abi = record["abi"] as? Int else { throw MissiveError(.invalidMetadata, "plugin record has no integer 'abi'") }
                plugin = (
                    try requiredString("name", in: record), try requiredString("version", in: record),
                    try requiredString("vendor", in: record), abi
                )
            case "type":
                let objectName = try requiredString("objectName", in: record)
                let businessID = record["businessID"]
                guard businessID == nil || businessID is String else {
                    throw MissiveError(.invalidMetadata, "type \(objectName): 'businessID' is not a string")
                }
                guard let persistence = record["persistence"] as? Int, let value = UInt32(exactly: persistence) else {
                    throw MissiveError(.invalidMetadata, "type \(objectName): 'persistence' is not a non-negative integer")
                }
                let flags = record["flags"] as? Int ?? 0
                types.append(
                    TypeEntry(objectName: objectName, businessID: businessID as? String, persistenceValue: value,
                              isMedia: flags & Int(MISSIVE_TYPE_MEDIA) != 0))
            default:
                throw MissiveError(.invalidMetadata, "a record has no known 'record' kind")
            }
        }
        guard let plugin else { throw MissiveError(.invalidMetadata, "no plugin record") }
        return PluginMetadata(name: plugin.name, version: plugin.version, vendor: plugin.vendor, abiMajor: plugin.abi, types: types)
    }

    private static func requiredString(_ key: String, in record: [String: Any]) throws(MissiveError) -> String {
        guard let value = record[key] as? String, !value.isEmpty else {
            throw MissiveError(.invalidMetadata, "record lacks a non-empty string '\(key)'")
        }
        return value
    }
}
