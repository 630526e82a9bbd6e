import Missive

/// Writes metadata back as the records of a `missive_meta` section (missive_plugin.h, "Metadata"): one JSON
/// object per record, each followed by a NUL byte, members in a fixed order. Written independently of
/// Missive's own writers, so that the round trip checks the reader against the format, not against itself.
public enum MetadataRecords {
    public static func section(_ metadata: PluginMetadata) -> [UInt8] {
        var out: [UInt8] = []
        var plugin = Object()
        plugin.string("record", "plugin")
        plugin.string("name", metadata.name)
        plugin.string("version", metadata.version)
        plugin.string("vendor", metadata.vendor)
        plugin.integer("abi", Int64(metadata.abiMajor))
        plugin.integer("abiMinor", Int64(metadata.abiMinor))
        if let swift = metadata.swiftVersion { plugin.string("swift", swift) }
        out += plugin.finish()
        for container in metadata.containers {
            var record = Object()
            record.string("record", "container")
            record.string("objectName", container.objectName)
            record.string("key", container.key)
            record.string("keyKind", container.keyKind.rawValue)
            out += record.finish()
        }
        for type in metadata.types {
            var record = Object()
            record.string("record", "type")
            record.string("objectName", type.objectName)
            if let container = type.container {
                record.string("container", container)
                record.string("containerValue", type.businessID ?? "")
            } else if let businessID = type.businessID {
                record.string("businessID", businessID)
            }
            record.integer("persistence", Int64(type.persistenceValue))
            record.integer("flags", type.isMedia ? 1 : 0)
            out += record.finish()
        }
        for action in metadata.actions {
            var record = Object()
            record.string("record", "action")
            record.string("kind", action.kind.rawValue)
            record.string("objectName", action.objectName)
            record.string("id", action.id)
            record.string("title", action.title)
            record.string("icon", action.icon)
            record.integer("priority", Int64(action.priority))
            record.string("yields", action.yields.rawValue)
            record.string("signature", action.signature)
            if let symbol = action.symbol { record.string("symbol", symbol) }
            out += record.finish()
        }
        return out
    }

    /// One record: a JSON object written with Missive's JSON writer.
    private struct Object {
        var writer: MissiveJSONWriter = {
            var writer = MissiveJSONWriter()
            writer.beginObject()
            return writer
        }()

        mutating func string(_ name: String, _ value: String) {
            writer.key(name)
            writer.string(value)
        }

        mutating func integer(_ name: String, _ value: Int64) {
            writer.key(name)
            writer.integer(value)
        }

        func finish() -> [UInt8] {
            var writer = writer
            writer.endObject()
            return writer.bytes + [0]
        }
    }
}
