import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// The JSON coding `@MissiveMessage` and `@MissiveCoding` generate over `MissiveJSONReader` and
/// `MissiveJSONWriter`, when a type's declaration shows everything the `Codable` synthesis would use.
///
/// A struct gets it when it declares `Codable` in its inheritance clause, has no `CodingKeys`, no
/// `init(from:)` and no `encode(to:)`, is not generic, and each stored property is a single name with a written
/// type, no property wrapper, not `lazy`, and not a `let` with an initial value (which `Codable` encodes but
/// does not decode). Any other struct keeps the `Codable` path entirely. Members are decoded by overload:
/// a property whose type has generated coding (`MissiveJSONValue`) uses it, any other type goes through
/// `JSONDecoder` and `JSONEncoder` for that member alone.
struct CodingPlan: Equatable {
    struct Property: Equatable {
        var name: String
        var type: String
    }

    enum Shape: Equatable {
        case object([Property])
        case rawValue
    }

    var shape: Shape
    /// Whether the type's body declares its own `init(decoding:)`.
    var hasOwnDecodingInit: Bool

    /// The plan for `declaration`, or `nil` when it keeps the `Codable` path.
    static func plan(for declaration: some DeclGroupSyntax) -> CodingPlan? {
        let inherited = declaration.inheritanceClause?.inheritedTypes.map { $0.type.trimmedDescription } ?? []
        func inherits(_ name: String) -> Bool { inherited.contains { $0 == name || $0.hasSuffix(".\(name)") } }
        guard inherits("Codable") || (inherits("Decodable") && inherits("Encodable")) else { return nil }
        let members = declaration.memberBlock.members.map(\.decl)
        var hasOwnDecodingInit = false
        for member in members {
            if let named = member.asProtocol((any NamedDeclSyntax).self), named.name.text == "CodingKeys" { return nil }
            if let initializer = member.as(InitializerDeclSyntax.self) {
                let label = initializer.signature.parameterClause.parameters.first?.firstName.text
                if label == "from" { return nil }
                if label == "decoding" { hasOwnDecodingInit = true }
            }
            if let function = member.as(FunctionDeclSyntax.self), function.name.text == "encode",
                function.signature.parameterClause.parameters.first?.firstName.text == "to"
            {
                return nil
            }
        }
        if let enumeration = declaration.as(EnumDeclSyntax.self) {
            let rawTypes: Set = ["String", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float", "Bool"]
            guard enumeration.genericParameterClause == nil, let first = inherited.first, rawTypes.contains(first) else { return nil }
            return CodingPlan(shape: .rawValue, hasOwnDecodingInit: hasOwnDecodingInit)
        }
        guard let structure = declaration.as(StructDeclSyntax.self), structure.genericParameterClause == nil else { return nil }
        var properties: [Property] = []
        for member in members {
            guard let variable = member.as(VariableDeclSyntax.self) else { continue }
            let modifiers = variable.modifiers.map(\.name.text)
            if modifiers.contains("static") || modifiers.contains("class") { continue }
            guard let binding = variable.bindings.first else { continue }
            if let accessors = binding.accessorBlock {
                switch accessors.accessors {
                case .getter: continue
                case .accessors(let list):
                    let kinds = list.map(\.accessorSpecifier.text)
                    if !kinds.allSatisfy({ $0 == "willSet" || $0 == "didSet" }) { continue }
                }
            }
            guard variable.bindings.count == 1, variable.attributes.isEmpty, !modifiers.contains("lazy"),
                let pattern = binding.pattern.as(IdentifierPatternSyntax.self), let type = binding.typeAnnotation?.type,
                !type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self),
                !(variable.bindingSpecifier.text == "let" && binding.initializer != nil)
            else { return nil }
            let name = pattern.identifier.text.filter { $0 != "`" }
            guard name.unicodeScalars.allSatisfy(\.isASCII) else { return nil }
            properties.append(Property(name: name, type: type.trimmedDescription))
        }
        return CodingPlan(shape: .object(properties), hasOwnDecodingInit: hasOwnDecodingInit)
    }

    /// The members of the `MissiveJSONValue` conformance: `init(missiveJSON:)` and `writeMissiveJSON(to:)`.
    func members() -> String {
        let kit = "MissivePluginKit"
        switch shape {
        case .rawValue:
            return """
                public init(missiveJSON reader: inout \(kit).MissiveJSONReader) throws {
                    let raw = try reader.decode(RawValue.self)
                    guard let value = Self(rawValue: raw) else { throw reader.fail("no case has the raw value \\(raw)") }
                    self = value
                }
                public func writeMissiveJSON(to writer: inout \(kit).MissiveJSONWriter) throws {
                    try writer.encode(rawValue)
                }
                """
        case .object(let properties):
            let locals = properties.map { "    var _missive_\($0.name): (\($0.type))? = nil\n" }.joined()
            let branches = properties.map { property in
                """
                if key.matches(\(quoted(property.name))) {
                            guard _missive_\(property.name) == nil else { throw reader.duplicate(key) }
                            _missive_\(property.name) = try reader.decode((\(property.type)).self)
                        } else 
                """
            }.joined()
            let assignments = properties.map { property in
                """
                    if let value = _missive_\(property.name) {
                        self.\(property.name) = value
                    } else {
                        self.\(property.name) = try \(kit).MissiveJSONReader.absent((\(property.type)).self, key: \(quoted(property.name)))
                    }

                """
            }.joined()
            let writes = properties.sorted { $0.name < $1.name }.map { "    try writer.member(\(quoted($0.name)), self.\($0.name))\n" }.joined()
            return """
                public init(missiveJSON reader: inout \(kit).MissiveJSONReader) throws {
                \(locals)    var cursor = try reader.beginObject()
                    while let key = try reader.nextKey(&cursor) {
                        \(branches){
                            try reader.skipValue()
                        }
                    }
                \(assignments)}
                public func writeMissiveJSON(to writer: inout \(kit).MissiveJSONWriter) throws {
                    writer.beginObject()
                \(writes)    writer.endObject()
                }
                """
        }
    }

    /// The extension that adds the conformance, and `MissiveDecodesInPlace` when `inPlace`.
    func extensionDecl(for type: some TypeSyntaxProtocol, inPlace: Bool) -> ExtensionDeclSyntax {
        let conformances = "MissivePluginKit.MissiveJSONValue" + (inPlace && !hasOwnDecodingInit ? ", MissivePluginKit.MissiveDecodesInPlace" : "")
        let decl: DeclSyntax = """
            extension \(type.trimmed): \(raw: conformances) {
            \(raw: members())
            }
            """
        return decl.cast(ExtensionDeclSyntax.self)
    }

    private func quoted(_ name: String) -> String { "\"\(name)\"" }
}

/// `@MissiveCoding`: the generated JSON coding alone, for the value types a message type holds and for types
/// outside plugins.
struct MissiveCodingMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let plan = CodingPlan.plan(for: declaration) else {
            throw MacroUsageError(
                "@MissiveCoding needs a Codable struct without CodingKeys, init(from:) or encode(to:), whose stored properties have written types, or a Codable enum with a raw type")
        }
        return [plan.extensionDecl(for: type, inPlace: false)]
    }
}
