import ArgumentParser
import Missive
import MissiveCommandLine

extension MissiveCommand {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a plugin file's metadata (identity, containers, types, actions and data files), read from the file without loading or running it.",
            discussion: "A file that is not a Missive plugin gets an error and exit code 1.")

        @Argument(help: "The plugin's shared object (.so).", transform: CommandLinePath.resolve)
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
                try Console.out(json: InspectJSON(file: file, metadata: metadata))
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
                if !metadata.dataFiles.isEmpty {
                    Console.out("Data files (\(metadata.dataFiles.count), read-only, relative to \(PluginMetadata.folder(ofPlugin: file))):")
                    for path in metadata.dataFiles { Console.out("  " + TextHygiene.line(path)) }
                }
            }
        }
    }
}

/// `missive inspect FILE --format json`.
struct InspectJSON: CLIJSON {
    static let documentedAs = "inspect"
    let schemaVersion = 1
    var file: String
    var name: String
    var version: String
    var vendor: String
    /// The ABI's major version alone, kept for scripts that read it.
    var abi: Int
    var abiVersion: String
    var swiftVersion: String?
    var containers: [ContainerJSON]
    var types: [TypeEntry]
    var actions: [ActionRecord]
    /// The data files the plugin declares, as written: paths relative to its folder.
    var dataFiles: [String]

    /// One type the metadata declares.
    struct TypeEntry: Encodable {
        var objectName: String
        var businessID: String?
        var container: String?
        var persistence: Flag
        var media: Bool
    }

    /// The **persistence** shape, or the bare value when it is none of the four flags.
    enum Flag: Encodable {
        case flag(PersistenceJSON)
        case invalid(UInt32)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .flag(let flag): try flag.encode(to: encoder)
            case .invalid(let value): try value.encode(to: encoder)
            }
        }
    }

    /// One action record, as written.
    struct ActionRecord: Encodable {
        /// `message` or `composer`.
        var kind: String
        var id: String
        var objectName: String
        var title: String
        var icon: String
        var priority: Int32
        /// `content` or `url`.
        var yields: String
        var signature: String
        var symbol: String?
    }
}

extension InspectJSON {
    init(file: String, metadata: PluginMetadata) {
        self.init(
            file: file, name: metadata.name, version: metadata.version, vendor: metadata.vendor, abi: metadata.abiMajor, abiVersion: metadata.abiVersion,
            swiftVersion: metadata.swiftVersion, containers: metadata.containers.map(ContainerJSON.init),
            types: metadata.types.map { type in
                TypeEntry(
                    objectName: type.objectName, businessID: type.businessID,
                    container: type.businessID == nil ? nil : type.container ?? MessageRegistry.customObjectName,
                    persistence: type.persistence.map { .flag(PersistenceJSON($0)) } ?? .invalid(type.persistenceValue), media: type.isMedia)
            },
            actions: metadata.actions.map { action in
                ActionRecord(
                    kind: action.kind.rawValue, id: action.id, objectName: action.objectName, title: action.title, icon: action.icon,
                    priority: action.priority, yields: action.yields.rawValue, signature: action.signature, symbol: action.symbol)
            },
            dataFiles: metadata.dataFiles)
    }
}
