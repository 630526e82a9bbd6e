import CMissivePlugin
import MissiveCore

/// What one call of an action's function gave.
package struct ActionFunctionOutput: Sendable, Hashable {
    /// The status it returned, as returned.
    package let status: Int32
    /// What it wrote (before the reason mark, when it failed).
    package let bytes: [UInt8]
    /// The reason it gave after the mark, if any.
    package let reason: String?

    /// Whether it returned `MISSIVE_OK`.
    package var succeeded: Bool { status == MISSIVE_OK }
    /// Whether it refused the arguments (`MISSIVE_INVALID_CONTENT`).
    package var refusedArguments: Bool { status == MISSIVE_INVALID_CONTENT }
    /// The status in words: `status 3 (MISSIVE_FAILED)`.
    package var statusDescription: String { PluginType.describe(status) }

    init(_ result: (status: Int32, bytes: [UInt8], reason: String?)) {
        (status, bytes, reason) = result
    }
}

/// A plugin action that loaded: its declaration, its function prepared for libffi, the type whose handles
/// it takes (message actions) and the example arguments it declares for the conformance suite.
package final class LoadedAction: Sendable {
    /// The declaration, as hosts see it.
    package let info: ActionDeclaration
    /// The function and its prepared call interface.
    package let function: ActionFunction
    /// For a message action, the plugin's type it acts on; a message of another type is never passed.
    package let type: PluginType?
    /// The exported name the function was found by, if any.
    package let symbol: String?
    /// The example argument lists, each argument as written.
    package let examples: [[ActionArgument]]
    /// Why the examples could not all be read, if they could not.
    package let examplesProblem: String?

    /// What the crash guard records while the function runs: its type's, or the plugin's for a composer action.
    let site: CrashGuard.Site
    /// For a composer action, a type of the same plugin, whose first action call is compared with the process
    /// state as its own (``PluginType/watched(_:_:)``); `nil` when the plugin has no type.
    private let watcher: PluginType?

    init(
        info: ActionDeclaration, function: ActionFunction, type: PluginType?, symbol: String?, examples: [[ActionArgument]], examplesProblem: String?,
        site: CrashGuard.Site, watcher: PluginType? = nil
    ) {
        (self.info, self.function, self.type, self.symbol, self.examples, self.examplesProblem) = (info, function, type, symbol, examples, examplesProblem)
        self.site = site
        self.watcher = watcher
    }

    /// Runs a composer action, which takes no message, through `function` (its own, or a counting one in
    /// front of it): the status, what it wrote and the reason after the mark.
    package func compose(through function: ActionFunction? = nil, _ values: [ActionValue]) -> ActionFunctionOutput {
        let function = function ?? self.function
        func call() -> (status: Int32, bytes: [UInt8], reason: String?) {
            CrashGuard.run(site, .action) {
                PluginSinks.collectingBytes { sink in function.call(message: nil, values: values, sink: UnsafeRawPointer(sink)) }
            }
        }
        guard let watcher else { return ActionFunctionOutput(call()) }
        return ActionFunctionOutput(watcher.watched(.action, call))
    }
}
