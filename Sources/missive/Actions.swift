import ArgumentParser
import Foundation
import MissiveCommandLine
import Logging
import Missive

extension MissiveCommand {
    struct Actions: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the composer actions and the message actions of every plugin, with their C signatures.",
            discussion: """
                Composer actions come in menu order (higher priority first, then by title), message actions by \
                type. Actions the loader refused, and plugin files that registered nothing, are listed with \
                their reasons. Exits 0 even when some were refused.
                """)

        @OptionGroup var plugins: PluginOptions

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        @OptionGroup var logging: LoggingOptions

        func run() throws {
            // The refusals are part of the listing, so they are logged only when asked for (-v).
            let result = try plugins.discover(logger: logging.logger(defaultLevel: .error))
            let registry = result.registry
            // Refused actions, and files that registered nothing (so none of their actions is offered).
            var registeredFiles = Set<String>()
            for type in registry.types {
                if case .plugin(let info) = type.origin { registeredFiles.insert(info.path) }
            }
            let refused = result.rejections.filter { $0.action != nil || $0.file.map { !registeredFiles.contains($0) } ?? false }
            switch format {
            case .json:
                try Console.out(json: ActionsJSON(
                    composerActions: registry.composerActions.map(ActionJSON.init), messageActions: registry.messageActions.map(ActionJSON.init),
                    rejected: refused.map(RejectionJSON.init)))
            case .text:
                let composer = registry.composerActions
                Console.out("Composer actions (\(composer.count)):")
                if !composer.isEmpty {
                    Console.out(table([["ID", "TITLE", "ICON", "PRIORITY", "CREATES", "SIGNATURE", "PLUGIN"]] + composer.map { action in
                        [action.id, action.title, action.icon, "\(action.priority)", action.objectName, action.signature.description, action.plugin.name]
                    }))
                }
                let message = registry.messageActions
                Console.out("\nMessage actions (\(message.count)):")
                if !message.isEmpty {
                    Console.out(table([["TYPE", "ID", "TITLE", "ICON", "PRIORITY", "YIELDS", "SIGNATURE", "PLUGIN"]] + message.map { action in
                        [action.objectName, action.id, action.title, action.icon, "\(action.priority)", action.yields.rawValue, action.signature.description,
                         action.plugin.name]
                    }))
                }
                if !refused.isEmpty {
                    Console.out("\nRejected (\(refused.count)):")
                    for error in refused {
                        Console.out("  \(error.file ?? "-")\n    [\(error.code)] \(error.objectName.map { "\($0): " } ?? "")"
                            + "\(error.action.map { "action '\($0)': " } ?? "")\(error.message)")
                    }
                }
            }
        }
    }
}

/// The `--arg` options of `act` and `compose`: one JSON value per argument of the action, in order.
struct ActionArgumentOptions: ParsableArguments {
    @Option(
        name: .customLong("arg"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("One argument of the action, as a JSON value: 2, -5, true, '\"alice\"'. Repeat it for each, in order.", valueName: "json"))
    var values: [String] = []

    /// The arguments, each exactly as the command line gave it: bytes that are not valid UTF-8 reach the
    /// argument check as they are (and are refused there), rather than as the U+FFFD a `String` would hold.
    var arguments: [ActionArgument] {
        let raw = Self.rawValues()
        guard raw.count == values.count else { return values.map { ActionArgument(json: $0) } }
        return raw.map { .json($0) }
    }

    /// The bytes of every `--arg` value in the process's own arguments.
    private static func rawValues() -> [[UInt8]] {
        let argv = CommandLine.unsafeArgv
        var values: [[UInt8]] = []
        var index = 1
        while index < Int(CommandLine.argc) {
            guard let pointer = argv[index] else { break }
            let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
            if bytes.elementsEqual("--".utf8) { break }
            if bytes.elementsEqual("--arg".utf8), index + 1 < Int(CommandLine.argc), let value = argv[index + 1] {
                values.append(Array(UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: strlen(value))))
                index += 2
                continue
            }
            if bytes.starts(with: "--arg=".utf8) { values.append(Array(bytes.dropFirst(6))) }
            index += 1
        }
        return values
    }
}

extension MissiveError {
    /// For an action that is not registered because its declaration was refused when its plugin loaded, the
    /// same error with that refusal's reason and file: "no such action" alone would hide why.
    func explainingRefusal(in rejections: [MissiveError]) -> MissiveError {
        guard code == .noSuchAction, let action,
            let refusal = rejections.first(where: { $0.action == action && (objectName == nil || $0.objectName == objectName) })
        else { return self }
        var explained = self
        explained.message += "; the action was refused when its plugin loaded: \(refusal.message)"
        explained.file = explained.file ?? refusal.file
        return explained
    }
}

/// Reports an action's error: on standard error, and as a JSON object on standard output for `--format json`.
func reportActionError(_ error: MissiveError, format: OutputFormat) throws {
    Console.error("[\(error.code)] \(error.objectName.map { "\($0): " } ?? "")\(error.message)" + (error.file.map { " (\($0))" } ?? ""))
    guard format == .json else { return }
    try Console.out(json: ActionErrorJSON(error: .init(
        code: error.code.description, message: error.message, file: error.file, objectName: error.objectName, action: error.action,
        parameter: error.parameter)))
}

/// `missive actions --format json`.
struct ActionsJSON: CLIJSON {
    static let documentedAs = "actions"
    let schemaVersion = 1
    var composerActions: [ActionJSON]
    var messageActions: [ActionJSON]
    var rejected: [RejectionJSON]
}

/// **action**: an action's declaration, with the plugin that declares it.
struct ActionJSON: CLIJSON {
    static let documentedAs = "action"
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
    var parameters: [Parameter]
    var plugin: PluginJSON

    /// A value parameter, that a caller gives an argument for.
    struct Parameter: Encodable {
        var name: String
        var type: String
        var cType: String
    }
}

extension ActionJSON {
    init(_ action: ActionDeclaration) {
        self.init(
            kind: action.kind.rawValue, id: action.id, objectName: action.objectName, title: action.title, icon: action.icon, priority: action.priority,
            yields: action.yields.rawValue, signature: action.signature.description,
            parameters: action.parameters.map { Parameter(name: $0.name, type: $0.type.rawValue, cType: $0.type.cType) }, plugin: PluginJSON(action.plugin))
    }
}

/// The error of `missive act` and `missive compose` with `--format json`.
struct ActionErrorJSON: CLIJSON {
    static let documentedAs = "action-error"
    let schemaVersion = 1
    var error: Details

    /// The error's fields.
    struct Details: Encodable {
        var code: String
        var message: String
        var file: String?
        var objectName: String?
        var action: String?
        var parameter: String?
    }
}

/// `missive act --format json` for an action that edits the message.
struct ActEditJSON: CLIJSON {
    static let documentedAs = "act"
    let schemaVersion = 1
    var action: String
    let result = "content"
    var id: String
    var objectName: String
    var digest: String
    /// The whole envelope, as ``Envelope/encoded()`` writes it.
    var envelope: RawJSON
}

/// `missive act --format json` for an action that opens a URL.
struct ActURLJSON: CLIJSON {
    static let documentedAs = "act-url"
    let schemaVersion = 1
    var action: String
    let result = "url"
    var url: String
}

/// `missive compose --format json`: the message made.
struct ComposeJSON: CLIJSON {
    static let documentedAs = "compose"
    let schemaVersion = 1
    var action: String
    var id: String
    var objectName: String
    var digest: String
    /// The whole envelope, as ``Envelope/encoded()`` writes it.
    var envelope: RawJSON
}
