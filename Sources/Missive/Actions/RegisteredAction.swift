/// An action in a ``MessageRegistry``: its declaration and where its function comes from.
struct RegisteredAction: Sendable {
    /// Where the function is.
    enum Source: Sendable {
        /// A loaded plugin's action.
        case loaded(LoadedAction)
        /// An action of a plugin registered from its metadata, loaded on first use.
        case deferred(DeferredPlugin)
        /// An action of a plugin that runs in a worker process of its own, run there.
        case isolated(IsolatedPlugin)
    }

    /// The declaration.
    let info: ActionDeclaration
    let source: Source

    /// The loaded action, loading its plugin on first use.
    func loaded() throws(MissiveError) -> LoadedAction {
        switch source {
        case .loaded(let action): return action
        case .deferred(let plugin): return try plugin.action(info).get()
        case .isolated(let plugin):
            throw MissiveError(.noSuchAction, "the plugin runs isolated, so its action runs in its worker, never in the host",
                               file: plugin.path, objectName: info.objectName, action: info.id)
        }
    }

    /// The key of a message action: its type and id.
    struct MessageKey: Hashable {
        let objectName: String
        let id: String
    }
}

extension ActionDeclaration {
    /// The declaration of a metadata record, or why the loader would refuse it.
    init(_ entry: PluginMetadata.ActionEntry, plugin: PluginInfo) throws(MissiveError) {
        func refuse(_ message: String) -> MissiveError {
            MissiveError(.invalidAction, message, file: plugin.path, objectName: entry.objectName, action: entry.id)
        }
        let signature: ActionSignature
        do {
            signature = try ActionSignature(parsing: entry.signature)
        } catch {
            throw refuse("its signature '\(entry.signature)' is refused: \(error.description)")
        }
        if let problem = signature.problem(for: entry.kind) { throw refuse("its signature \(signature) is refused: \(problem)") }
        for problem in [NameGrammar.actionIDProblem(entry.id), NameGrammar.actionIconProblem(entry.icon), NameGrammar.actionTitleProblem(entry.title),
                        NameGrammar.objectNameProblem(entry.objectName)] {
            if let problem { throw refuse(problem) }
        }
        self.init(kind: entry.kind, id: entry.id, objectName: entry.objectName, title: entry.title, icon: entry.icon, priority: entry.priority,
                  yields: entry.yields, signature: signature, plugin: plugin)
    }
}
