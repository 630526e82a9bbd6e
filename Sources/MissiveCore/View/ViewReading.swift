/// The limits a view must keep. A host cuts what goes past them; the conformance suite reports it.
public struct ViewLimits: Sendable, Hashable {
    /// The longest view document, in bytes.
    public var maxDocumentBytes = 64 * 1024
    /// The deepest nesting of stacks: a tree of one element has depth 1.
    public var maxDepth = 8
    /// The most elements in a tree.
    public var maxElements = 256
    /// The longest text of one element, in Unicode code points.
    public var maxTextCodePoints = 4096
    /// The largest line limit of a text element.
    public var maxLineLimit = 100
    /// The largest spacing of a stack.
    public var maxSpacing = 8
    /// The largest width or height of an image, in pixels.
    public var maxImageSide = 16384
    /// The longest URL, in bytes.
    public var maxURLBytes = 2048

    /// The limits of `missive.view.v1`.
    public static let standard = ViewLimits()

    /// Creates the standard limits.
    public init() {}
}

/// Something wrong with a view, found while reading or sanitizing it.
public struct ViewProblem: Sendable, Hashable, CustomStringConvertible {
    /// How serious it is.
    public enum Severity: String, Sendable, Hashable {
        /// A rule of `missive.view.v1` is broken: the host repaired or dropped the part.
        case invalid
        /// An element of a kind this host does not know was replaced by its declared fallback, as the
        /// format intends; not an error.
        case fallback
    }

    /// Where: `root`, `root.children[2]`, `root.children[0].fallback`.
    public let path: String
    /// What is wrong.
    public let message: String
    /// How serious it is.
    public let severity: Severity

    /// `path: message`.
    public var description: String { "\(path): \(message)" }

    /// Creates a problem.
    public init(path: String, message: String, severity: Severity = .invalid) {
        self.path = path
        self.message = message
        self.severity = severity
    }
}

/// A view read from its JSON form: the sanitized tree, or `nil` when nothing usable was left, and what
/// was wrong.
public struct ViewReading: Sendable {
    /// The sanitized tree.
    public var element: ViewElement?
    /// The problems, in document order.
    public var problems: [ViewProblem]

    /// Creates a reading.
    public init(element: ViewElement?, problems: [ViewProblem]) {
        self.element = element
        self.problems = problems
    }

    /// The problems that break a rule (not the fallbacks taken).
    public var violations: [ViewProblem] { problems.filter { $0.severity == .invalid } }
}
