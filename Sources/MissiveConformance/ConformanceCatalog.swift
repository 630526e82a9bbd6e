/// Every conformance check, in the order they run. A check comes after the checks it requires.
package enum ConformanceCatalog {
    /// All checks.
    package static let checks: [ConformanceCheck] =
        LoadingChecks.all + DataFileChecks.all + ProcessChecks.all + IsolationChecks.all + DeclarationChecks.all + BehaviourChecks.all + TextChecks.all + ContentChecks.all + ViewChecks.all + ActionChecks.all
            + GarbageChecks.all + ResourceChecks.all

    /// The check with this id.
    package static func check(_ id: String) -> ConformanceCheck? {
        checks.first { $0.id == id }
    }
}
