import MissiveMacrosSupport
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

// The compiler plugin, and nothing else: the macros' expansions are in MissiveMacrosSupport, an ordinary library
// that `MissiveMacrosTests` tests. A test target that depended on this macro target would make SwiftPM build every
// test target of the package, and everything they depend on, a second time for the host (docs/TESTING.md).
//
// The compiler asks the plugin for a macro by the module and type names `#externalMacro(module: "MissiveMacros",
// type: ...)` gives, and the plugin finds it by its type's full name, so each type the SDK names is declared in
// this module and hands every requirement on to the implementation of the same name.

@main
struct MissiveMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [MissiveMessageMacro.self, MissivePluginMacro.self, MissiveActionMacro.self, MissiveCodingMacro.self]
}

/// `@MissiveMessage`: MissiveMacrosSupport's `MissiveMessageMacro`.
public struct MissiveMessageMacro: ExtensionMacro, PeerMacro {
    typealias Implementation = MissiveMacrosSupport.MissiveMessageMacro

    public static var formatMode: FormatMode { Implementation.formatMode }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try Implementation.expansion(of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try Implementation.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// `#MissivePlugin`: MissiveMacrosSupport's `MissivePluginMacro`.
public struct MissivePluginMacro: DeclarationMacro {
    typealias Implementation = MissiveMacrosSupport.MissivePluginMacro

    public static var formatMode: FormatMode { Implementation.formatMode }
    public static var propagateFreestandingMacroAttributes: Bool { Implementation.propagateFreestandingMacroAttributes }
    public static var propagateFreestandingMacroModifiers: Bool { Implementation.propagateFreestandingMacroModifiers }

    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try Implementation.expansion(of: node, in: context)
    }
}

/// `@MissiveAction`: MissiveMacrosSupport's `MissiveActionMacro`.
public struct MissiveActionMacro: PeerMacro {
    typealias Implementation = MissiveMacrosSupport.MissiveActionMacro

    public static var formatMode: FormatMode { Implementation.formatMode }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try Implementation.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// `@MissiveCoding`: MissiveMacrosSupport's `MissiveCodingMacro`.
public struct MissiveCodingMacro: ExtensionMacro {
    typealias Implementation = MissiveMacrosSupport.MissiveCodingMacro

    public static var formatMode: FormatMode { Implementation.formatMode }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try Implementation.expansion(of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }
}
