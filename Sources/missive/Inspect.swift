import ArgumentParser
import Missive

extension MissiveCommand {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a plugin file's metadata (identity, containers, types and actions), read from the file without loading or running it.",
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
                json.field("schemaVersion", 1)
                json.field("file", file)
                json.field("name", metadata.name)
                json.field("version", metadata.version)
                json.field("vendor", metadata.vendor)
                json.field("abi", metadata.abiMajor)
                json.field("abiVersion", metadata.abiVersion)
                json.field("swiftVersion", metadata.swiftVersion)
                json.key("containers")
                json.beginArray()
                for container in metadata.containers { json.container(container) }
                json.endArray()
                json.key("types")
                json.beginArray()
                for type in metadata.types {
                    json.beginObject()
                    json.field("objectName", type.objectName)
                    json.field("businessID", type.businessID)
                    json.field("container", type.businessID == nil ? nil : type.container ?? MessageRegistry.customObjectName)
                    json.key("persistence")
                    if let flag = type.persistence { json.persistence(flag) } else { json.integer(type.persistenceValue) }
                    json.field("media", type.isMedia)
                    json.endObject()
                }
                json.endArray()
                json.key("actions")
                json.beginArray()
                for action in metadata.actions {
                    json.beginObject()
                    json.field("kind", action.kind.rawValue)
                    json.field("id", action.id)
                    json.field("objectName", action.objectName)
                    json.field("title", action.title)
                    json.field("icon", action.icon)
                    json.field("priority", action.priority)
                    json.field("yields", action.yields.rawValue)
                    json.field("signature", action.signature)
                    json.field("symbol", action.symbol)
                    json.endObject()
                }
                json.endArray()
                json.endObject()
                Console.out(bytes: json.bytes)
            case .text:
                Console.out("\(metadata.name) \(metadata.version) by \(metadata.vendor)")
                Console.out("file:      \(file)")
                Console.out("ABI:       \(metadata.abiVersion)")
                Console.out("toolchain: " + (metadata.swiftVersion.map { "Swift \($0) (a host built by Swift \(SwiftCompiler.majorMinor($0) ?? $0).x loads it)" }
                    ?? "none recorded (no Swift runtime needed; loads in any host)"))
                if !metadata.containers.isEmpty {
                    Console.out("Containers (\(metadata.containers.count)):")
                    Console.out(table([["OBJECTNAME", "KEY", "KEY KIND"]] + metadata.containers.map { [$0.objectName, $0.key, $0.keyKind.rawValue] }))
                }
                let rows = metadata.types.map { type in
                    [type.objectName, type.businessID.map { value in type.container.map { "\($0) \(value)" } ?? value } ?? "-",
                     type.persistence?.description ?? "invalid (\(type.persistenceValue))", type.isMedia ? "media" : "-"]
                }
                Console.out("Types (\(rows.count)):")
                Console.out(table([["OBJECTNAME", "BUSINESSID / CONTAINER VALUE", "PERSISTENCE", "MEDIA"]] + rows))
                if !metadata.actions.isEmpty {
                    Console.out("Actions (\(metadata.actions.count)):")
                    Console.out(table([["KIND", "ID", "TYPE", "TITLE", "PRIORITY", "YIELDS", "SIGNATURE", "SYMBOL"]] + metadata.actions.map { action in
                        [action.kind.rawValue, action.id, action.objectName, action.title, "\(action.priority)",
                         action.kind == .message ? action.yields.rawValue : "-", action.signature, action.symbol ?? "-"]
                    }))
                }
            }
        }
    }
}
