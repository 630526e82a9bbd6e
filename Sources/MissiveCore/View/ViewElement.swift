/// One element of a message's portable view: the tree a type describes, and a host measures, lays out and
/// draws (in a terminal, in HTML, or natively).
///
/// The set of kinds is small and fixed (``Kind``); each has a documented JSON form, which is what a plugin
/// writes through the `missive.view.v1` extension (see `docs/VIEWS.md`). Trees a host holds are
/// *sanitized* (``ViewSanitizer``): every string is cleaned of control characters and escape sequences,
/// every URL is http or https, sizes are not negative, and the tree is within ``ViewLimits``.
public indirect enum ViewElement: Sendable, Hashable {
    /// Text with a role, an emphasis and an optional line limit.
    case text(ViewText)
    /// A link: text and an http or https URL.
    case link(ViewLink)
    /// An image, by URL, with its pixel size and alternative text.
    case image(ViewImage)
    /// Children stacked vertically or horizontally.
    case stack(ViewStack)
    /// Label and value pairs.
    case facts([ViewFact])
    /// A labelled fraction, such as a poll option's share of the votes.
    case progress(ViewProgress)
    /// A button that names an action of the type (actions are run by the host).
    case button(ViewButton)
    /// A horizontal rule.
    case divider
    /// A short label, such as a status.
    case badge(ViewBadge)

    /// The kinds of element, with their JSON names (the `"type"` member).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case text, link, image, stack, facts, progress, button, divider, badge
    }

    /// The element's kind.
    public var kind: Kind {
        switch self {
        case .text: .text
        case .link: .link
        case .image: .image
        case .stack: .stack
        case .facts: .facts
        case .progress: .progress
        case .button: .button
        case .divider: .divider
        case .badge: .badge
        }
    }

    /// The number of elements in the tree, this one included.
    public var elementCount: Int {
        if case .stack(let stack) = self { return 1 + stack.children.reduce(0) { $0 + $1.elementCount } }
        return 1
    }

    /// The depth of the tree: 1 for an element without children.
    public var depth: Int {
        if case .stack(let stack) = self { return 1 + (stack.children.map(\.depth).max() ?? 0) }
        return 1
    }
}

/// What a text element is for; renderers give each role its own look.
public enum TextRole: String, Sendable, Hashable, CaseIterable {
    /// Running text (the default).
    case body
    /// A heading.
    case title
    /// Secondary, smaller text.
    case caption
    /// Code or other preformatted text, in a fixed-width font; its line breaks are kept exactly.
    case code
}

/// How a text element is emphasised.
public enum TextEmphasis: String, Sendable, Hashable, CaseIterable {
    /// No emphasis (the default).
    case none
    /// Bold.
    case strong
    /// Italic.
    case italic
}

/// A text element: the only element whose text may span several lines.
public struct ViewText: Sendable, Hashable {
    /// The text. Line breaks (`\n`) are kept; renderers also wrap it to the width.
    public var text: String
    /// What the text is for.
    public var role: TextRole
    /// How it is emphasised.
    public var emphasis: TextEmphasis
    /// The most lines it may take once wrapped, or `nil` for no limit. A cut text ends with `…`.
    public var maxLines: Int?

    /// Creates a text element.
    public init(_ text: String, role: TextRole = .body, emphasis: TextEmphasis = .none, maxLines: Int? = nil) {
        self.text = text
        self.role = role
        self.emphasis = emphasis
        self.maxLines = maxLines
    }
}

/// A link element. Only http and https URLs are kept; a sanitized tree shows any other as its text alone.
public struct ViewLink: Sendable, Hashable {
    /// The text shown, on one line.
    public var text: String
    /// The URL it opens.
    public var url: String

    /// Creates a link element.
    public init(_ text: String, url: String) {
        self.text = text
        self.url = url
    }
}

/// An image element. Hosts may show a placeholder of the image's size instead of fetching it.
public struct ViewImage: Sendable, Hashable {
    /// The image's http or https URL.
    public var url: String
    /// Its width in pixels, when known.
    public var width: Int?
    /// Its height in pixels, when known.
    public var height: Int?
    /// What the image shows, for people who cannot see it and for hosts that do not fetch it.
    public var alt: String

    /// Creates an image element.
    public init(url: String, width: Int? = nil, height: Int? = nil, alt: String) {
        self.url = url
        self.width = width
        self.height = height
        self.alt = alt
    }
}

/// A stack of elements.
public struct ViewStack: Sendable, Hashable {
    /// The direction children follow each other in.
    public enum Axis: String, Sendable, Hashable, CaseIterable {
        /// Top to bottom.
        case vertical
        /// Leading to trailing.
        case horizontal
    }

    /// The direction.
    public var axis: Axis
    /// The gap between children, in spacing units (0 to ``ViewLimits/maxSpacing``): one unit is a blank
    /// row (vertical) or a blank column (horizontal) in a terminal, and 8 CSS pixels in HTML.
    public var spacing: Int
    /// The children, in order.
    public var children: [ViewElement]

    /// Creates a stack.
    public init(axis: Axis, spacing: Int = 0, children: [ViewElement]) {
        self.axis = axis
        self.spacing = spacing
        self.children = children
    }
}

/// One row of a fact list.
public struct ViewFact: Sendable, Hashable {
    /// The label, on one line.
    public var label: String
    /// The value, on one line (renderers wrap it).
    public var value: String

    /// Creates a fact.
    public init(_ label: String, _ value: String) {
        self.label = label
        self.value = value
    }
}

/// A progress element.
public struct ViewProgress: Sendable, Hashable {
    /// What the fraction measures, on one line.
    public var label: String
    /// The fraction, from 0 to 1.
    public var fraction: Double
    /// A short detail shown with it, such as `3 votes`, or `nil`.
    public var detail: String?

    /// Creates a progress element.
    public init(_ label: String, fraction: Double, detail: String? = nil) {
        self.label = label
        self.fraction = fraction
        self.detail = detail
    }
}

/// A button element. Its action is the id of a message action the message's type declares
/// (`missive.actions.v1`); its arguments are the action's first arguments, and the host supplies the rest
/// (a form, the current user's id) when it performs the action.
public struct ViewButton: Sendable, Hashable {
    /// The title, on one line.
    public var title: String
    /// The action's id, for example `vote`: ASCII letters, digits, `.`, `_` and `-`.
    public var action: String
    /// The action's arguments as one JSON array (for example `[1]`), or `nil` for none.
    public var arguments: String?

    /// Creates a button element.
    public init(_ title: String, action: String, arguments: String? = nil) {
        self.title = title
        self.action = action
        self.arguments = arguments
    }
}

/// One argument of a button's action, for ``ViewElement/button(_:action:values:)``: an ``ActionArgument``.
public typealias ViewArgument = ActionArgument

/// A badge element.
public struct ViewBadge: Sendable, Hashable {
    /// The badge's colour family.
    public enum Tone: String, Sendable, Hashable, CaseIterable {
        case neutral, info, success, warning, danger
    }

    /// The text, on one line.
    public var text: String
    /// The tone.
    public var tone: Tone

    /// Creates a badge.
    public init(_ text: String, tone: Tone = .neutral) {
        self.text = text
        self.tone = tone
    }
}

// MARK: - Writing views in Swift

extension ViewElement {
    /// A text element.
    public static func text(_ text: String, role: TextRole = .body, emphasis: TextEmphasis = .none, maxLines: Int? = nil) -> ViewElement {
        .text(ViewText(text, role: role, emphasis: emphasis, maxLines: maxLines))
    }

    /// A link element.
    public static func link(_ text: String, url: String) -> ViewElement { .link(ViewLink(text, url: url)) }

    /// An image element.
    public static func image(url: String, width: Int? = nil, height: Int? = nil, alt: String) -> ViewElement {
        .image(ViewImage(url: url, width: width, height: height, alt: alt))
    }

    /// A vertical stack of what `content` lists.
    public static func vstack(spacing: Int = 0, @ViewBuilder _ content: () -> [ViewElement]) -> ViewElement {
        .stack(ViewStack(axis: .vertical, spacing: spacing, children: content()))
    }

    /// A horizontal stack of what `content` lists.
    public static func hstack(spacing: Int = 1, @ViewBuilder _ content: () -> [ViewElement]) -> ViewElement {
        .stack(ViewStack(axis: .horizontal, spacing: spacing, children: content()))
    }

    /// A fact list.
    public static func facts(_ pairs: KeyValuePairs<String, String>) -> ViewElement {
        .facts(pairs.map { ViewFact($0.key, $0.value) })
    }

    /// A progress element.
    public static func progress(_ label: String, fraction: Double, detail: String? = nil) -> ViewElement {
        .progress(ViewProgress(label, fraction: fraction, detail: detail))
    }

    /// A button element, with its arguments as one JSON array written out (for example `"[2]"`).
    public static func button(_ title: String, action: String, arguments: String? = nil) -> ViewElement {
        .button(ViewButton(title, action: action, arguments: arguments))
    }

    /// A button element, with typed arguments: written as a JSON array, strings escaped.
    public static func button(_ title: String, action: String, values: [ActionArgument]) -> ViewElement {
        .button(ViewButton(title, action: action, arguments: ActionArgument.jsonArray(values)))
    }

    /// A badge element.
    public static func badge(_ text: String, tone: ViewBadge.Tone = .neutral) -> ViewElement {
        .badge(ViewBadge(text, tone: tone))
    }
}

/// Builds a list of view elements from statements: elements, `if`, `if let`, `switch` and `for` loops.
///
/// ```swift
/// var view: ViewElement {
///     .vstack(spacing: 1) {
///         ViewElement.text(question, role: .title)
///         for option in options { ViewElement.progress(option.name, fraction: option.share) }
///     }
/// }
/// ```
@resultBuilder
public enum ViewBuilder {
    public static func buildExpression(_ element: ViewElement) -> [ViewElement] { [element] }
    public static func buildExpression(_ elements: [ViewElement]) -> [ViewElement] { elements }
    public static func buildBlock(_ parts: [ViewElement]...) -> [ViewElement] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [ViewElement]?) -> [ViewElement] { part ?? [] }
    public static func buildEither(first part: [ViewElement]) -> [ViewElement] { part }
    public static func buildEither(second part: [ViewElement]) -> [ViewElement] { part }
    public static func buildArray(_ parts: [[ViewElement]]) -> [ViewElement] { parts.flatMap { $0 } }
    public static func buildLimitedAvailability(_ part: [ViewElement]) -> [ViewElement] { part }
}

extension ViewElement {
    /// The view a host shows for a type that describes none: the digest as body text, and for a media type
    /// its media (an image for `image/*` with an http or https URL, else a link to the media).
    public static func defaultView(digest: String, media: MediaReference?) -> ViewElement {
        guard let media, let url = media.remoteURL, ViewSanitizer.isAllowedURL(url) else { return .text(digest) }
        if media.mimeType.lowercased().hasPrefix("image/") {
            return .image(url: url, alt: digest)
        }
        return .vstack {
            ViewElement.text(digest)
            ViewElement.link("Open \(media.mimeType)", url: url)
        }
    }
}
