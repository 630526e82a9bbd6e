/// Every conformance check, in the order they run. A check comes after the checks it requires.
public enum ConformanceCatalog {
    /// All checks.
    public static let checks: [ConformanceCheck] =
        LoadingChecks.all + DeclarationChecks.all + BehaviourChecks.all + TextChecks.all + ContentChecks.all + ViewChecks.all + ActionChecks.all
            + GarbageChecks.all + ResourceChecks.all

    /// The check with this id.
    public static func check(_ id: String) -> ConformanceCheck? {
        checks.first { $0.id == id }
    }
}
