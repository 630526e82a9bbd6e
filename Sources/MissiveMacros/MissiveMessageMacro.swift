import MissiveCore
import SwiftParser
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// A compile-time error in a macro's use.
struct MacroUsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The section the metadata records go in; must match `MISSIVE_METADATA_SECTION` in missive_plugin.h.
let metadataSection = "missive_meta"

/// The persistence values, by case name; they match `MISSIVE_PERSISTENCE_*`.
let persistenceValues = ["none": 0, "persisted": 1, "counted": 3, "status": 16]

/// Reads a macro's labelled literal arguments.
struct MacroArguments {
    private var values: [String: ExprSyntax] = [:]
    private(set) var unlabeled: [ExprSyntax] = []

    init(_ list: LabeledExprListSyntax?) {
        for element in list ?? [] {
            if let label = element.label?.text { values[label] = element.expression } else { unlabeled.append(element.expression) }
        }
    }

    subscript(label: String) -> ExprSyntax? { values[label] }

    static func string(_ expression: ExprSyntax?, _ what: String) throws -> String {
        guard let literal = expression?.as(StringLiteralExprSyntax.self), let value = literal.representedLiteralValue else {
            throw MacroUsageError("\(what) must be a string literal")
        }
        return value
    }
}

/// `{"key":"value",...}`, its strings written by the JSON layer's one writer (as `JSONEncoder` escapes them).
func jsonRecord(_ fields: [(String, Any)]) -> String {
    func quoted(_ text: String) -> String { String(decoding: MissiveJSONWriter.quoted(text), as: UTF8.self) }
    let members = fields.map { key, value in
        "\(quoted(key)):" + ((value as? String).map(quoted) ?? "\(value)")
    }
    return "{" + members.joined(separator: ",") + "}"
}

/// A global constant in the metadata section holding `records`, each followed by a NUL.
func metadataDeclaration(named name: String, record: String...) -> DeclSyntax {
    metadataDeclaration(named: name, records: record)
}

/// A global constant in the metadata section holding `records`, each followed by a NUL.
func metadataDeclaration(named name: String, records: [String]) -> DeclSyntax {
    let bytes: [UInt8] = records.flatMap { record -> [UInt8] in Array(record.utf8) + [0] }
    let type = Array(repeating: "UInt8", count: bytes.count).joined(separator: ", ")
    let values = bytes.map(String.init).joined(separator: ", ")
    return "@section(\(literal: metadataSection)) @used let \(raw: name): (\(raw: type)) = (\(raw: values))"
}

/// `@MissiveMessage("name", businessID: "id", persistence: .counted)`.
struct MissiveMessageMacro: ExtensionMacro, PeerMacro {
    struct Declared {
        var objectName: String
        var businessID: String?
        var container: String?
        var persistence: String
    }

    static func declared(_ node: AttributeSyntax) throws -> Declared {
        guard case .argumentList(let list) = node.arguments else {
            throw MacroUsageError("@MissiveMessage needs an objectName and a persistence")
        }
        let arguments = MacroArguments(list)
        let objectName = try MacroArguments.string(arguments.unlabeled.first, "the objectName")
        var businessID: String?
        if let expression = arguments["businessID"], !expression.is(NilLiteralExprSyntax.self) {
            businessID = try MacroArguments.string(expression, "businessID")
        }
        var container: String?
        if let expression = arguments["container"], !expression.is(NilLiteralExprSyntax.self) {
            container = try MacroArguments.string(expression, "container")
        }
        guard let member = arguments["persistence"]?.as(MemberAccessExprSyntax.self),
            persistenceValues[member.declName.baseName.text] != nil
        else {
            throw MacroUsageError("persistence must be written .none, .persisted, .counted or .status")
        }
        // The host would refuse these names at load time; say so while compiling.
        if let problem = NameGrammar.objectNameProblem(objectName) { throw MacroUsageError(problem) }
        if NameGrammar.isReservedObjectName(objectName) {
            throw MacroUsageError("objectName '\(objectName)' uses the prefix '\(NameGrammar.reservedPrefix)', reserved for Missive's built-in types")
        }
        if let container {
            guard businessID != nil else { throw MacroUsageError("a type in container \(container) needs the businessID (the key's value) that selects it") }
            if let problem = NameGrammar.objectNameProblem(container) { throw MacroUsageError("container: \(problem)") }
            if container == MessageContainer.custom.objectName { throw MacroUsageError("MS:Custom is the default container: leave container out") }
        }
        if let businessID {
            if container == nil {
                if let problem = NameGrammar.businessIDProblem(businessID) { throw MacroUsageError(problem) }
                if NameGrammar.isReservedBusinessID(businessID) { throw MacroUsageError("businessID '\(businessID)' uses a prefix reserved for Missive") }
            } else if let problem = NameGrammar.containerValueProblem(businessID, kind: .string),
                NameGrammar.containerValueProblem(businessID, kind: .integer) != nil
            {
                throw MacroUsageError(problem)
            }
        }
        return Declared(objectName: objectName, businessID: businessID, container: container, persistence: member.declName.baseName.text)
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let declared = try declared(node)
        let businessID: ExprSyntax = declared.businessID.map { "\(literal: $0)" } ?? "nil"
        let container: ExprSyntax = declared.container.map { "\(literal: $0)" } ?? "nil"
        // The actions the type's body declares; a method whose @MissiveAction is malformed is left out here,
        // and its own macro reports why.
        let typeName = type.trimmedDescription
        let actions = ActionDeclaration.actionMethods(in: declaration.memberBlock.members).compactMap { attribute, function in
            try? ActionDeclaration(attribute, function: function, typeName: typeName)
        }
        let actionList = actions.map { "Self.\($0.exportName)" }.joined(separator: ", ")
        let extensionDecl: DeclSyntax = """
            extension \(type.trimmed): MissivePluginKit.MessageCoding, MissivePluginKit.MessagePersistence, MissivePluginKit.MissiveActionProviding {
                public static var objectName: String { \(literal: declared.objectName) }
                public static var businessID: String? { \(businessID) }
                public static var container: String? { \(container) }
                public static var persistence: MissivePluginKit.Persistence { .\(raw: declared.persistence) }
                public static var _missiveActions: [MissivePluginKit.ActionExport] { [\(raw: actionList)] }
            }
            """
        var extensions = [extensionDecl.cast(ExtensionDeclSyntax.self)]
        // The generated coding, for a struct whose declaration shows all Codable would use; any other type
        // keeps the Codable path.
        if let plan = CodingPlan.plan(for: declaration), case .object = plan.shape {
            extensions.append(plan.extensionDecl(for: type, inPlace: true))
        }
        return extensions
    }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let declared = try declared(node)
        guard let group = declaration.asProtocol((any NamedDeclSyntax).self) else {
            throw MacroUsageError("@MissiveMessage applies to a struct, class or enum at file scope")
        }
        let inherited = declaration.asProtocol((any DeclGroupSyntax).self)?.inheritanceClause?.inheritedTypes.map {
            $0.type.trimmedDescription
        } ?? []
        let isMedia = inherited.contains { $0 == "MediaMessageContent" || $0.hasSuffix(".MediaMessageContent") }
        var fields: [(String, Any)] = [("record", "type"), ("objectName", declared.objectName)]
        if let businessID = declared.businessID {
            if let container = declared.container {
                fields.append(("container", container))
                fields.append(("containerValue", businessID))
            } else {
                fields.append(("businessID", businessID))
            }
        }
        fields.append(("persistence", persistenceValues[declared.persistence]!))
        fields.append(("flags", isMedia ? 1 : 0))
        // One record per @MissiveAction method of the type's body, as the extension lists them.
        let actions: [String] = declaration.asProtocol((any DeclGroupSyntax).self).map { group in
            ActionDeclaration.actionMethods(in: group.memberBlock.members).compactMap { attribute, function in
                (try? ActionDeclaration(attribute, function: function, typeName: groupName(group)))?.record(objectName: declared.objectName)
            }
        } ?? []
        return [metadataDeclaration(named: "_missiveMetadata_\(group.name.text)", records: [jsonRecord(fields)] + actions)]
    }
}

/// The name of a type declaration.
private func groupName(_ group: some DeclGroupSyntax) -> String {
    group.asProtocol((any NamedDeclSyntax).self)?.name.text ?? ""
}

/// `#MissivePlugin(name:version:vendor:types:)`.
struct MissivePluginMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let arguments = MacroArguments(node.arguments)
        let name = try MacroArguments.string(arguments["name"], "name")
        let version = try MacroArguments.string(arguments["version"], "version")
        let vendor = try MacroArguments.string(arguments["vendor"], "vendor")
        guard let types = arguments["types"]?.as(ArrayExprSyntax.self) else {
            throw MacroUsageError("types must be an array literal of message types, like [LinkMessage.self]")
        }
        let containers = try containerDeclarations(arguments["containers"])
        // The macro is built by the same compiler as the plugin that uses it, in the same build, so the
        // compiler version it was built with is the plugin's.
        let record = jsonRecord([
            ("record", "plugin"), ("abi", 1), ("abiMinor", 1), ("name", name), ("version", version), ("vendor", vendor),
            ("swift", SwiftCompiler.version),
        ])
        let dataFiles = try dataFileDeclarations(arguments["dataFiles"])
        let containerList = arguments["containers"].map { "\($0.trimmed)" } ?? "[]"
        var declarations: [DeclSyntax] = [metadataDeclaration(named: "_missiveMetadata_plugin", record: record)]
        if !containers.isEmpty {
            let records = containers.map { container in
                jsonRecord([("record", "container"), ("objectName", container.objectName), ("key", container.key), ("keyKind", container.keyKind.rawValue)])
            }
            declarations.append(metadataDeclaration(named: "_missiveMetadata_containers", records: records))
        }
        if !dataFiles.isEmpty {
            let records = dataFiles.map { jsonRecord([("record", "file"), ("path", $0)]) }
            declarations.append(metadataDeclaration(named: "_missiveMetadata_files", records: records))
        }
        return declarations + [
            """
            let _missivePluginExport = MissivePluginKit.PluginExport(
                name: \(literal: name), version: \(literal: version), vendor: \(literal: vendor), containers: \(raw: containerList),
                types: \(types.trimmed))
            """,
            """
            @_cdecl("missive_plugin_entry_v1")
            public func _missivePluginEntry(_ host: UnsafeRawPointer?) -> UnsafeRawPointer? {
                _missivePluginExport.entry(host: host)
            }
            """,
        ]
    }

    /// The paths of a `dataFiles:` array literal of string literals, checked as the host will check them.
    static func dataFileDeclarations(_ expression: ExprSyntax?) throws -> [String] {
        guard let expression else { return [] }
        guard let array = expression.as(ArrayExprSyntax.self) else {
            throw MacroUsageError("dataFiles must be an array literal of string literals, like [\"data/words.txt\"]")
        }
        let paths = try array.elements.map { try MacroArguments.string($0.expression, "each data file") }
        if let problem = DataFileGrammar.problem(in: paths) { throw MacroUsageError(problem) }
        return paths
    }

    /// The containers of a `containers:` array literal of `MessageContainer(objectName:key:keyKind:)` calls
    /// with literal arguments, checked as the host will check them.
    static func containerDeclarations(_ expression: ExprSyntax?) throws -> [MessageContainer] {
        guard let expression else { return [] }
        guard let array = expression.as(ArrayExprSyntax.self) else {
            throw MacroUsageError("containers must be an array literal of MessageContainer(objectName:key:keyKind:) values")
        }
        return try array.elements.map { element in
            guard let call = element.expression.as(FunctionCallExprSyntax.self) else {
                throw MacroUsageError("each container must be written MessageContainer(objectName: \"...\", key: \"...\", keyKind: .string)")
            }
            let arguments = MacroArguments(call.arguments)
            let objectName = try MacroArguments.string(arguments["objectName"], "a container's objectName")
            let key = try MacroArguments.string(arguments["key"], "a container's key")
            var kind = MessageContainer.KeyKind.string
            if let expression = arguments["keyKind"] {
                guard let member = expression.as(MemberAccessExprSyntax.self),
                    let parsed = MessageContainer.KeyKind(rawValue: member.declName.baseName.text)
                else {
                    throw MacroUsageError("keyKind must be written .string or .integer")
                }
                kind = parsed
            }
            if let problem = NameGrammar.objectNameProblem(objectName) { throw MacroUsageError("container: \(problem)") }
            if NameGrammar.isReservedObjectName(objectName) {
                throw MacroUsageError("container '\(objectName)' uses the prefix '\(NameGrammar.reservedPrefix)', reserved for Missive")
            }
            if let problem = NameGrammar.containerKeyProblem(key) { throw MacroUsageError(problem) }
            return MessageContainer(objectName: objectName, key: key, keyKind: kind)
        }
    }
}
