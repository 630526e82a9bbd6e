import ArgumentParser
import Missive

extension MissiveCommand {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a plugin file's metadata, read from the file without loading or running it.",
            discussion: "A file that is not a Missive plugin gets an error and exit code 1.")

        @Argument(help: "The plugin's shared object (.so).")
        var file: String

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        func run() throws {
            let metadata: PluginMetadata
            do {
                metadata = try PluginMetadata.read(fromFile: file)
            } catch {
                Console.error("\(file): [\(error.code)] \(error.message)")
                throw ExitCode(1)
            }
            switch format {
            case .json:
                var json = JSONWriter()
                json.beginObject()
                json.key("schemaVersion")
                json.integer(1)
                json.key("file")
                json.string(file)
                json.key("name")
                json.string(metadata.name)
                json.key("version")
                json.string(metadata.version)
                json.key("vendor")
                json.string(metadata.vendor)
                json.key("abi")
                json.integer(metadata.abiMajor)
                json.key("types")
                json.beginArray()
                for type in metadata.types {
                    json.beginObject()
                    json.key("objectName")
                    json.string(type.objectName)
                    json.key("businessID")
                    json.string(type.businessID)
                    json.key("persistence")
                    if let flag = type.persistence { json.persistence(flag) } else { json.integer(type.persistenceValue) }
                    json.key("media")
                    json.bool(type.isMedia)
                    json.endObject()
                }
                json.endArray()
                json.endObject()
                Console.out(bytes: json.bytes)
            case .text:
                Console.out("\(metadata.name) \(metadata.version) by \(metadata.vendor), plugin ABI \(metadata.abiMajor)")
                Console.out("file: \(file)")
                let rows = metadata.types.map { type in
                    [type.objectName, type.businessID ?? "-", type.persistence?.description ?? "invalid (\(type.persistenceValue))",
                     type.isMedia ? "media" : "-"]
                }
                Console.out("Types (\(rows.count)):")
                Console.out(table([["OBJECTNAME", "BUSINESSID", "PERSISTENCE", "MEDIA"]] + rows))
            }
        }
    }
}
