import CMissivePlugin
import MissiveCore

/// One `missive_action` as a plugin's `missive.actions.v1` extension gives it, copied out of plugin memory
/// and not judged yet. Its function pointer is plugin code, which stays loaded for the life of the process.
package struct ActionDescriptor: @unchecked Sendable {
    package let kind: ActionKind
    package let id: String
    package let objectName: String
    package let title: String
    package let icon: String
    package let priority: Int32
    package let yields: ActionYield
    package let signature: String
    package let symbol: String?
    /// The `function` field, or `nil` when it is NULL.
    package let function: UnsafeRawPointer?
    /// The `examples` field as written, or `nil` when it is NULL.
    package let examples: [UInt8]?
}

/// Reading and checking the actions a plugin declares (missive_plugin.h, "The actions extension").
enum PluginActions {
    /// The most actions one extension may list.
    static let maxCount = 4096

    /// Reads the plugin's `missive.actions.v1` extension: one result per action, or a single failure when the
    /// extension itself cannot be read. None when the plugin offers no such extension.
    static func read(_ plugin: missive_plugin, path: String) -> [Result<ActionDescriptor, MissiveError>] {
        // A 1.1 plugin gives plugin-wide extensions with its context; a 1.1 host asks the 1.0 function only
        // when the 1.1 one is NULL (missive_plugin.h, "Extensions").
        let pointer: UnsafeRawPointer?
        if let getPluginExtension = plugin.get_plugin_extension {
            pointer = getPluginExtension(plugin.context, MISSIVE_ACTIONS_EXTENSION)
        } else {
            pointer = plugin.get_extension?(MISSIVE_ACTIONS_EXTENSION)
        }
        guard let pointer else { return [] }
        func refused(_ message: String) -> [Result<ActionDescriptor, MissiveError>] {
            [.failure(MissiveError(.invalidAction, "its \(MISSIVE_ACTIONS_EXTENSION) extension \(message)", file: path))]
        }
        // Only struct_size may be read before it is checked.
        let size = pointer.load(as: UInt32.self)
        guard size >= MemoryLayout<missive_actions_v1>.size else {
            return refused("is \(size) bytes; its fields need \(MemoryLayout<missive_actions_v1>.size)")
        }
        let table = pointer.assumingMemoryBound(to: missive_actions_v1.self).pointee
        guard table.action_count <= maxCount else { return refused("lists \(table.action_count) actions; at most \(maxCount) are allowed") }
        guard table.action_count == 0 || table.actions != nil else { return refused("lists \(table.action_count) actions but no array") }
        return (0..<Int(table.action_count)).map { index in
            Result { () throws(MissiveError) in try descriptor(table.actions[index], index: index, path: path) }
        }
    }

    /// Reads one `missive_action`: its size first, then its fields.
    private static func descriptor(_ pointer: UnsafePointer<missive_action>?, index: Int, path: String) throws(MissiveError) -> ActionDescriptor {
        guard let pointer else { throw MissiveError(.invalidAction, "action \(index) of its \(MISSIVE_ACTIONS_EXTENSION) extension is NULL", file: path) }
        let size = UnsafeRawPointer(pointer).load(as: UInt32.self)
        guard size >= MemoryLayout<missive_action>.size else {
            throw MissiveError(.invalidAction, "action \(index) is \(size) bytes; missive_action needs \(MemoryLayout<missive_action>.size)", file: path)
        }
        let action = pointer.pointee
        func text(_ field: UnsafePointer<CChar>?, _ name: String, required: Bool = true) throws(MissiveError) -> String? {
            guard let field else {
                if required { throw MissiveError(.invalidAction, "action \(index) has no \(name)", file: path) }
                return nil
            }
            guard let value = String(validatingCString: field) else {
                throw MissiveError(.invalidAction, "action \(index)'s \(name) is not valid UTF-8", file: path)
            }
            return value
        }
        let id = try text(action.id, "id")!
        func invalid(_ message: String) -> MissiveError { MissiveError(.invalidAction, message, file: path, action: id) }
        let kind: ActionKind
        switch action.kind {
        case UInt32(MISSIVE_ACTION_MESSAGE): kind = .message
        case UInt32(MISSIVE_ACTION_COMPOSER): kind = .composer
        default: throw invalid("kind is \(action.kind), which is not MISSIVE_ACTION_MESSAGE or MISSIVE_ACTION_COMPOSER")
        }
        let yields: ActionYield
        switch action.yields {
        case UInt32(MISSIVE_YIELDS_CONTENT): yields = .content
        case UInt32(MISSIVE_YIELDS_URL) where kind == .message: yields = .url
        default: throw invalid("yields is \(action.yields), which is not MISSIVE_YIELDS_CONTENT" + (kind == .message ? " or MISSIVE_YIELDS_URL" : " (a composer action yields content)"))
        }
        let examples = try text(action.examples, "examples", required: false)
        return ActionDescriptor(
            kind: kind, id: id, objectName: try text(action.object_name, "object_name")!, title: try text(action.title, "title")!,
            icon: try text(action.icon, "icon")!, priority: action.priority, yields: yields, signature: try text(action.signature, "signature")!,
            symbol: try text(action.symbol, "symbol", required: false), function: action.function.map { unsafeBitCast($0, to: UnsafeRawPointer.self) },
            examples: examples.map { Array($0.utf8) })
    }

    /// Judges the actions a loaded plugin declares: each must appear alike in the metadata and the extension,
    /// follow the grammars, name one of the plugin's types when it acts on messages, and have a function. An
    /// action that fails is refused with the reason; the others load.
    static func resolve(
        _ declared: [Result<ActionDescriptor, MissiveError>], metadata: PluginMetadata, types: [PluginType], library: DynamicLibrary, info: PluginInfo,
        site: CrashGuard.Site
    ) -> (actions: [LoadedAction], rejections: [MissiveError]) {
        var rejections: [MissiveError] = []
        var actions: [LoadedAction] = []
        var unmatched = metadata.actions
        var seen: Set<String> = []
        for result in declared {
            let descriptor: ActionDescriptor
            switch result {
            case .success(let value): descriptor = value
            case .failure(let error):
                rejections.append(error)
                continue
            }
            let key = "\(descriptor.kind.rawValue) \(descriptor.kind == .message ? descriptor.objectName : "") \(descriptor.id)"
            let entryIndex = unmatched.firstIndex { $0.kind == descriptor.kind && $0.id == descriptor.id && ($0.kind == .composer || $0.objectName == descriptor.objectName) }
            let entry = entryIndex.map { unmatched.remove(at: $0) }
            do throws(MissiveError) {
                guard seen.insert(key).inserted else {
                    throw MissiveError(.duplicateName, "the plugin declares this \(descriptor.kind.rawValue) action twice; the first is kept",
                                       file: info.path, objectName: descriptor.objectName, action: descriptor.id)
                }
                actions.append(try resolve(descriptor, entry: entry, types: types, library: library, info: info, site: site))
            } catch {
                rejections.append(error)
            }
        }
        for entry in unmatched {
            rejections.append(
                MissiveError(.metadataMismatch, "the metadata declares this \(entry.kind.rawValue) action, but the plugin's \(MISSIVE_ACTIONS_EXTENSION) extension does not",
                             file: info.path, objectName: entry.objectName, action: entry.id))
        }
        return (actions, rejections)
    }

    private static func resolve(
        _ action: ActionDescriptor, entry: PluginMetadata.ActionEntry?, types: [PluginType], library: DynamicLibrary, info: PluginInfo,
        site: CrashGuard.Site
    ) throws(MissiveError) -> LoadedAction {
        func refuse(_ message: String, code: MissiveError.Code = .invalidAction) -> MissiveError {
            MissiveError(code, message, file: info.path, objectName: action.objectName, action: action.id)
        }
        let signature: ActionSignature
        do {
            signature = try ActionSignature(parsing: action.signature)
        } catch {
            throw refuse("its signature '\(action.signature)' is refused: \(error.description)")
        }
        guard let entry else {
            throw refuse("the \(MISSIVE_ACTIONS_EXTENSION) extension declares this action, but the metadata has no action record for it", code: .metadataMismatch)
        }
        if let difference = disagreement(action, signature, entry) {
            throw refuse("the metadata and the \(MISSIVE_ACTIONS_EXTENSION) extension disagree (metadata vs extension): \(difference)", code: .metadataMismatch)
        }
        if let problem = signature.problem(for: action.kind) { throw refuse("its signature \(signature) is refused: \(problem)") }
        for problem in [NameGrammar.actionIDProblem(action.id), NameGrammar.actionIconProblem(action.icon), NameGrammar.actionTitleProblem(action.title)] {
            if let problem { throw refuse(problem) }
        }
        var type: PluginType?
        switch action.kind {
        case .message:
            guard let own = types.first(where: { $0.objectName == action.objectName }) else {
                throw refuse("it acts on \(action.objectName), which is not a type of this plugin; a message action acts on the plugin's own types")
            }
            type = own
        case .composer:
            if let problem = NameGrammar.objectNameProblem(action.objectName) { throw refuse(problem) }
        }
        let symbol = action.symbol ?? entry.symbol
        let address: UnsafeRawPointer
        if let symbol {
            guard let found = library.symbol(symbol) else {
                throw refuse("its function \(symbol) is not exported by the library (declare it with MISSIVE_EXPORT)")
            }
            if let function = action.function, function != UnsafeRawPointer(found) {
                throw refuse("the symbol \(symbol) is another function than the extension's function pointer")
            }
            address = UnsafeRawPointer(found)
        } else if let function = action.function {
            address = function
        } else {
            throw refuse("it has neither a function nor a symbol to find it by")
        }
        let function: ActionFunction
        do {
            function = try ActionFunction(signature: signature, address: address)
        } catch {
            throw refuse(error.description)
        }
        let (examples, examplesProblem) = Self.examples(action.examples, signature: signature)
        let description = ActionDeclaration(
            kind: action.kind, id: action.id, objectName: action.objectName, title: action.title, icon: action.icon, priority: action.priority,
            yields: action.yields, signature: signature, plugin: info)
        return LoadedAction(info: description, function: function, type: type, symbol: symbol, examples: examples, examplesProblem: examplesProblem,
                            site: type?.site ?? site, watcher: type ?? types.first)
    }

    /// What differs between an action's metadata record and its extension entry, or `nil`.
    private static func disagreement(_ action: ActionDescriptor, _ signature: ActionSignature, _ entry: PluginMetadata.ActionEntry) -> String? {
        var differences: [String] = []
        if entry.objectName != action.objectName { differences.append("objectName '\(entry.objectName)' vs '\(action.objectName)'") }
        if entry.title != action.title { differences.append("title '\(entry.title)' vs '\(action.title)'") }
        if entry.icon != action.icon { differences.append("icon '\(entry.icon)' vs '\(action.icon)'") }
        if entry.priority != action.priority { differences.append("priority \(entry.priority) vs \(action.priority)") }
        if entry.yields != action.yields { differences.append("yields \(entry.yields.rawValue) vs \(action.yields.rawValue)") }
        // Compared as parsed, so that spacing does not matter.
        if (try? ActionSignature(parsing: entry.signature)) != signature { differences.append("signature '\(entry.signature)' vs '\(action.signature)'") }
        if let declared = entry.symbol, let given = action.symbol, declared != given { differences.append("symbol \(declared) vs \(given)") }
        return differences.isEmpty ? nil : differences.joined(separator: "; ")
    }

    /// The example argument lists of `examples` (a JSON array of arrays), each argument as written; with
    /// none given (NULL or `[]`), one empty list for an action without value parameters. Otherwise the reason
    /// they cannot be read.
    private static func examples(_ bytes: [UInt8]?, signature: ActionSignature) -> ([[ActionArgument]], String?) {
        guard let bytes else { return (signature.valueParameters.isEmpty ? [[]] : [], nil) }
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            guard case .array(let lists) = try JSONValue.parse(bytes, maxDepth: 16, loneSurrogates: .refuse) else {
                return ([], "examples is not a JSON array of argument arrays: \(text)")
            }
            var result: [[ActionArgument]] = []
            for list in lists {
                guard case .array(let arguments) = list else { return ([], "examples is not a JSON array of argument arrays: \(text)") }
                result.append(arguments.map { .json(Array($0.serialized.utf8)) })
            }
            return (result.isEmpty && signature.valueParameters.isEmpty ? [[]] : result, nil)
        } catch {
            return ([], "examples is not JSON (\(error)): \(text)")
        }
    }
}
