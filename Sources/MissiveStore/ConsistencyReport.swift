/// What ``MessageStore/checkConsistency()`` found.
public struct ConsistencyReport: Sendable, Hashable {
    /// Each counter that differs from a recount, or problem the database reported, in words.
    public var problems: [String]

    /// Creates a report.
    public init(problems: [String]) {
        self.problems = problems
    }

    /// Whether every counter equals its recount and the database checks passed.
    public var isConsistent: Bool { problems.isEmpty }
}
