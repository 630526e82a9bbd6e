import MissiveCore
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// An action method as `@MissiveAction` declares it: what the metadata record, the signature and the C
/// function that calls it are made from.
struct ActionDeclaration {
    /// One parameter of the method.
    struct Parameter {
        /// The argument label, or `nil` for `_`.
        var label: String?
        /// The signature's type.
        var type: ActionSignature.ParameterType
        /// The Swift type written (`Int`, `Int32`, ...), for the conversion from the C value.
        var swiftType: String
        /// The name in the signature: the parameter's name in snake case.
        var name: String
    }

    var kind: ActionKind
    var id: String
    var title: String
    var icon: String
    var priority: Int
    var yields: ActionYield
    var examples: String?
    var method: String
    var parameters: [Parameter]
    var isThrowing: Bool
    var signature: ActionSignature

    /// The Swift types a parameter may have, and the signature's type for each.
    static let parameterTypes: [String: ActionSignature.ParameterType] = [
        "Int32": .int32, "Int64": .int64, "Int": .int64, "Double": .double, "Bool": .bool, "String": .string,
    ]

    /// The declaration of `function`, whose `@MissiveAction` attribute is `attribute`, in the type `typeName`.
    init(_ attribute: AttributeSyntax, function: FunctionDeclSyntax, typeName: String) throws {
        guard case .argumentList(let list) = attribute.arguments else {
            throw MacroUsageError("@MissiveAction needs an id, a title and an icon: @MissiveAction(\"vote\", title: \"Vote\", icon: \"checkmark\")")
        }
        let arguments = MacroArguments(list)
        id = try MacroArguments.string(arguments.unlabeled.first, "the action's id")
        title = try MacroArguments.string(arguments["title"], "title")
        icon = try MacroArguments.string(arguments["icon"], "icon")
        priority = try Self.integer(arguments["priority"]) ?? 0
        examples = arguments["examples"].map { $0.trimmedDescription }
        for problem in [NameGrammar.actionIDProblem(id), NameGrammar.actionTitleProblem(title), NameGrammar.actionIconProblem(icon)] {
            if let problem { throw MacroUsageError(problem) }
        }
        guard Int32(exactly: priority) != nil else { throw MacroUsageError("priority \(priority) does not fit an Int32") }

        method = function.name.text
        let modifiers = Set(function.modifiers.map(\.name.text))
        let isStatic = modifiers.contains("static") || modifiers.contains("class")
        if modifiers.contains("mutating") { throw MacroUsageError("an action returns new content; it cannot be mutating") }
        if function.genericParameterClause != nil { throw MacroUsageError("an action cannot be generic") }
        let effects = function.signature.effectSpecifiers
        if effects?.asyncSpecifier != nil { throw MacroUsageError("an action cannot be async: the host calls it as a C function") }
        isThrowing = effects?.throwsClause != nil
        let returned = function.signature.returnClause.map { Self.plainType($0.type.trimmedDescription) } ?? ""
        let returnsSelf = returned == "Self" || returned == typeName
        if isStatic {
            guard returnsSelf else {
                throw MacroUsageError("a static @MissiveAction is a composer action and returns the new message: \(typeName) (or Self)")
            }
            kind = .composer
            yields = .content
        } else {
            kind = .message
            if returnsSelf {
                yields = .content
            } else if returned == "URL" || returned == "Foundation.URL" {
                yields = .url
            } else {
                throw MacroUsageError("a message action returns the message's new content (\(typeName)) or a URL to open")
            }
        }

        var parameters: [Parameter] = []
        var names: Set<String> = []
        for parameter in function.signature.parameterClause.parameters {
            let written = Self.plainType(parameter.type.trimmedDescription)
            let internalName = (parameter.secondName ?? parameter.firstName).text
            guard let type = Self.parameterTypes[written] else {
                throw MacroUsageError("parameter '\(internalName)' is a \(written); an action's parameters are Int32, Int64, Int, Double, Bool or String")
            }
            if parameter.defaultValue != nil { throw MacroUsageError("parameter '\(internalName)' has a default value; the host passes every argument") }
            let name = Self.snakeCase(internalName)
            guard names.insert(name).inserted else { throw MacroUsageError("two parameters are both named \(name) in the signature") }
            parameters.append(Parameter(label: parameter.firstName.text == "_" ? nil : parameter.firstName.text, type: type, swiftType: written, name: name))
        }
        self.parameters = parameters
        func unused(_ base: String) -> String {
            var name = base
            while names.contains(name) { name += "_" }
            return name
        }
        var signatureParameters = parameters.map { ActionSignature.Parameter($0.type, $0.name) }
        if kind == .message { signatureParameters.insert(ActionSignature.Parameter(.message, unused("message")), at: 0) }
        signatureParameters.append(ActionSignature.Parameter(.sink, unused("out")))
        signature = ActionSignature(signatureParameters)
        if let problem = signature.problem(for: kind) { throw MacroUsageError(problem) }
        if let problem = signatureParameters.lazy.compactMap({ ActionSignature.nameProblem($0.name) }).first { throw MacroUsageError(problem) }
    }

    /// The metadata record: the action as `objectName`'s.
    func record(objectName: String) -> String {
        var fields: [(String, Any)] = [("record", "action"), ("kind", kind.rawValue), ("objectName", objectName), ("id", id), ("title", title),
                                       ("icon", icon), ("priority", priority)]
        if kind == .message { fields.append(("yields", yields.rawValue)) }
        fields.append(("signature", signature.description))
        return jsonRecord(fields)
    }

    /// The name of the generated `ActionExport`.
    var exportName: String { "_missiveAction_\(method)" }

    /// The generated `ActionExport`, whose C function converts the C values and calls the method.
    func exportDeclaration(typeName: String) -> DeclSyntax {
        var closureParameters: [String] = []
        var cTypes: [String] = []
        if kind == .message {
            closureParameters.append("message: OpaquePointer?")
            cTypes.append("OpaquePointer?")
        }
        var callArguments: [String] = []
        for (index, parameter) in parameters.enumerated() {
            let cType: String
            let value: String
            switch parameter.swiftType {
            case "String":
                cType = "UnsafePointer<CChar>?"
                value = "MissivePluginKit.ActionExport.string(p\(index))"
            case "Int":
                cType = "Int64"
                value = "Int(p\(index))"
            default:
                cType = parameter.swiftType
                value = "p\(index)"
            }
            closureParameters.append("p\(index): \(cType)")
            cTypes.append(cType)
            callArguments.append((parameter.label.map { "\($0): " } ?? "") + value)
        }
        closureParameters.append("out: UnsafeRawPointer?")
        cTypes.append("UnsafeRawPointer?")
        let call = "\(isThrowing ? "try " : "")\(kind == .composer ? typeName : "value").\(method)(\(callArguments.joined(separator: ", ")))"
        let body: String
        switch (kind, yields) {
        case (.composer, _): body = "MissivePluginKit.ActionExport.compose(out) { \(call) }"
        case (.message, .content): body = "MissivePluginKit.ActionExport.performEdit(message, out, as: \(typeName).self) { value in \(call) }"
        case (.message, .url): body = "MissivePluginKit.ActionExport.performURL(message, out, as: \(typeName).self) { value in \(call) }"
        }
        let function = "{ (\(closureParameters.joined(separator: ", "))) -> Int32 in \(body) } as @convention(c) (\(cTypes.joined(separator: ", "))) -> Int32"
        return """
            static let \(raw: exportName) = MissivePluginKit.ActionExport(
                kind: .\(raw: kind.rawValue), id: \(literal: id), title: \(literal: title), icon: \(literal: icon), priority: \(raw: priority),
                yields: .\(raw: yields.rawValue), signature: \(literal: signature.description), examples: \(raw: examples ?? "[]"),
                function: MissivePluginKit.ActionExport.address(of: \(raw: function)))
            """
    }

    /// The `@MissiveAction` methods among a type's members, with their attributes.
    static func actionMethods(in members: MemberBlockItemListSyntax) -> [(AttributeSyntax, FunctionDeclSyntax)] {
        members.compactMap { member in
            guard let function = member.decl.as(FunctionDeclSyntax.self), let attribute = actionAttribute(of: function.attributes) else { return nil }
            return (attribute, function)
        }
    }

    /// The `@MissiveAction` attribute among `attributes`.
    static func actionAttribute(of attributes: AttributeListSyntax) -> AttributeSyntax? {
        attributes.lazy.compactMap { $0.as(AttributeSyntax.self) }.first {
            let name = $0.attributeName.trimmedDescription
            return name == "MissiveAction" || name.hasSuffix(".MissiveAction")
        }
    }

    /// A type name without the `Swift.` module prefix.
    private static func plainType(_ written: String) -> String {
        written.hasPrefix("Swift.") ? String(written.dropFirst("Swift.".count)) : written
    }

    /// `voterID` → `voter_id`, `URL` → `url`: a Swift name as a signature's parameter name.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        let characters = Array(name)
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) { out += "_" }
            }
            out += character.lowercased()
        }
        return out
    }

    /// An integer literal, possibly negative, or `nil` when the argument is absent.
    private static func integer(_ expression: ExprSyntax?) throws -> Int? {
        guard let expression else { return nil }
        if let literal = expression.as(IntegerLiteralExprSyntax.self), let value = Int(literal.literal.text.filter { $0 != "_" }) {
            return value
        }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-",
            let literal = prefix.expression.as(IntegerLiteralExprSyntax.self), let value = Int(literal.literal.text.filter { $0 != "_" })
        {
            return -value
        }
        throw MacroUsageError("priority must be an integer literal")
    }
}

/// `@MissiveAction("vote", title: "Vote", icon: "checkmark", priority: 10, examples: [[0, "alice"]])` on a
/// method of a `@MissiveMessage` type.
struct MissiveActionMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let function = declaration.as(FunctionDeclSyntax.self) else {
            throw MacroUsageError("@MissiveAction applies to a method of a @MissiveMessage type")
        }
        guard let typeName = enclosingMessageType(context.lexicalContext) else {
            throw MacroUsageError("declare @MissiveAction methods in the body of their @MissiveMessage type, where the macro can read its objectName")
        }
        return [try ActionDeclaration(node, function: function, typeName: typeName).exportDeclaration(typeName: typeName)]
    }

    /// The name of the innermost enclosing type when it carries `@MissiveMessage`.
    private static func enclosingMessageType(_ lexicalContext: [Syntax]) -> String? {
        guard let group = lexicalContext.first?.asProtocol((any DeclGroupSyntax).self), let named = lexicalContext.first?.asProtocol((any NamedDeclSyntax).self)
        else { return nil }
        let marked = group.attributes.contains {
            guard let name = $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription else { return false }
            return name == "MissiveMessage" || name.hasSuffix(".MissiveMessage")
        }
        return marked ? named.name.text : nil
    }
}
