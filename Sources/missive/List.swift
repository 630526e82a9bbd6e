import ArgumentParser
import Foundation
import MissiveCommandLine
import Logging
import Missive
import MissiveRendering

extension MissiveCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every registered message type, and every plugin file that was refused.",
            discussion: "Exits 0 even when some files were refused; they are listed with their reasons.")

        @OptionGroup var plugins: PluginOptions

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        @OptionGroup var logging: LoggingOptions

        func run() throws {
            // The refusals are part of the listing, so they are logged only when asked for (-v).
            let result = try plugins.discover(logger: logging.logger(defaultLevel: .error))
            switch format {
            case .json: try printJSON(result)
            case .text: try printText(result)
            }
        }

        private func printJSON(_ result: DiscoveryResult) throws {
            let isolated = Set(result.discovery.isolatedPlugins.map(\.path))
            try Console.out(json: ListJSON(
                types: result.registry.types.map { ListJSON.TypeEntry($0, isolated: isolated) },
                plugins: result.plugins.map { PluginJSON($0.info) },
                isolatedPlugins: result.discovery.isolatedPlugins.map(PluginJSON.init),
                workerConfinement: result.discovery.isolatedPlugins.isEmpty ? nil : try plugins.effectiveConfinement().rawValue,
                rejected: result.rejections.map(RejectionJSON.init)))
        }

        private func printText(_ result: DiscoveryResult) throws {
            let isolated = Set(result.discovery.isolatedPlugins.map(\.path))
            let confinement = try plugins.effectiveConfinement()
            let unconfined = !isolated.isEmpty && confinement == .none
            let isolatedNote = unconfined ? ", isolated WITHOUT namespaces" : ", isolated"
            let rows = result.registry.types.map { type -> [String] in
                let source: String
                switch type.origin {
                case .builtIn: source = "built-in"
                case .application: source = "application"
                case .plugin(let info): source = "\(info.name) \(info.version)\(isolated.contains(info.path) ? isolatedNote : "")"
                }
                let file: String
                if case .plugin(let info) = type.origin { file = info.path } else { file = "-" }
                return [type.objectName, dispatch(type, in: result.registry), type.declaredContainer == nil ? type.persistence.description : "-", type.isMedia ? "media" : "-", source, file]
            }
            Console.out("Registered types (\(rows.count)):")
            Console.out(table([["OBJECTNAME", "BUSINESSID / CONTAINER", "PERSISTENCE", "MEDIA", "SOURCE", "FILE"]] + rows))
            if unconfined {
                Console.out(
                    "\nIsolated plugins run WITHOUT namespaces (--worker-confinement or MISSIVE_WORKER_CONFINEMENT): their workers can read what "
                        + "this user can read (docs/PROTECTION.md).")
            }
            // A shadowed copy is how a user's copy overrides the system's: listed apart from real refusals.
            let shadowed = result.rejections.filter { $0.code == .shadowed }
            let refused = result.rejections.filter { $0.code != .shadowed }
            for (title, errors) in [("Rejected", refused), ("Skipped: shadowed by a file of the same name earlier in the search path", shadowed)]
            where !errors.isEmpty {
                Console.out("\n\(title) (\(errors.count)):")
                for error in errors {
                    Console.out("  \(error.file ?? "-")\n    [\(error.code)] \(error.objectName.map { "\($0): " } ?? "")"
                        + "\(error.action.map { "action '\($0)': " } ?? "")\(error.message)")
                }
            }
        }

        /// How a registry entry is reached besides its objectName: `text_link` (an MS:Custom businessID),
        /// `m.room.message msgtype=m.text`, or for a container what it dispatches on.
        private func dispatch(_ type: RegisteredType, in registry: MessageRegistry) -> String {
            if let container = type.declaredContainer { return "container on '\(container.key)' (\(container.keyKind.rawValue))" }
            guard let value = type.businessID else { return "-" }
            guard let name = type.container, name != MessageRegistry.customObjectName else { return value }
            return "\(name) \(registry.type(objectName: name)?.declaredContainer?.key ?? "key")=\(value)"
        }
    }
}

/// `missive list --format json`.
struct ListJSON: CLIJSON {
    static let documentedAs = "list"
    let schemaVersion = 1
    var types: [TypeEntry]
    /// The plugins loaded into this process.
    var plugins: [PluginJSON]
    /// The plugins loaded in a worker process of their own (`--isolation`).
    var isolatedPlugins: [PluginJSON]
    /// The walls isolated plugins' workers run behind (`namespaces` or `none`), or `nil` when none runs isolated.
    var workerConfinement: String?
    var rejected: [RejectionJSON]

    /// One registered type.
    struct TypeEntry: Encodable {
        var objectName: String
        var businessID: String?
        var container: String?
        var dispatchesOn: ContainerJSON?
        var persistence: PersistenceJSON
        var media: Bool
        /// `builtin`, `application` or `plugin`.
        var origin: String
        var plugin: PluginJSON?
        /// Whether the type's plugin runs in a worker process of its own.
        var isolated: Bool
    }
}

extension ListJSON.TypeEntry {
    init(_ type: RegisteredType, isolated: Set<String>) {
        let origin: String, plugin: PluginJSON?
        switch type.origin {
        case .builtIn: (origin, plugin) = ("builtin", nil)
        case .application: (origin, plugin) = ("application", nil)
        case .plugin(let info): (origin, plugin) = ("plugin", PluginJSON(info))
        }
        self.init(
            objectName: type.objectName, businessID: type.businessID, container: type.container, dispatchesOn: .of(type.declaredContainer),
            persistence: PersistenceJSON(type.persistence), media: type.isMedia, origin: origin, plugin: plugin,
            isolated: plugin.map { isolated.contains($0.file) } ?? false)
    }
}

/// Left-aligned columns separated by two spaces, measured in terminal cells (a CJK character or an emoji
/// takes two).
func table(_ rows: [[String]]) -> String {
    guard let width = rows.first?.count else { return "" }
    let widths = (0..<width).map { column in rows.map { TerminalWidth.of($0[column]) }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { index, cell in
            index == width - 1 ? cell : cell + String(repeating: " ", count: max(0, widths[index] - TerminalWidth.of(cell)))
        }.joined(separator: "  ")
    }.map { "  " + $0 }.joined(separator: "\n")
}
