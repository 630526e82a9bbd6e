import SwiftCompilerPlugin
import SwiftSyntaxMacros

// The compiler plugin. The compiler asks it for a macro by the module and type names `#externalMacro(module:
// "MissiveMacros", type: ...)` gives; the plugin finds it by its type's full name among these. Each macro's
// expansion is in the file of its name; MissiveMacrosTests drives them through the compiler, with this plugin.
@main
struct MissiveMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [MissiveMessageMacro.self, MissivePluginMacro.self, MissiveActionMacro.self, MissiveCodingMacro.self]
}
