/// An action a plugin declares: on messages of one type (a vote, opening a link), or in a composer's menu
/// to create a message (a poll, a rating). Hosts list them, show them as buttons and menu items, and
/// perform them through ``MessageRegistry``.
///
/// Values describe the declaration only; they are equal when they declare the same action of the same
/// plugin file.
public struct ActionDeclaration: Sendable, Hashable, CustomStringConvertible {
    /// A message action or a composer action.
    public let kind: ActionKind
    /// The id: unique within its type for a message action (`vote`), unique in the host for a composer action
    /// (`demo.poll.create`).
    public let id: String
    /// The type the action acts on (message) or creates (composer).
    public let objectName: String
    /// What a menu or button shows, on one line.
    public let title: String
    /// An icon name from the host's set (`checkmark`, `chart.bar`); hosts without it show a generic icon.
    public let icon: String
    /// Higher comes first; equal priorities go by title.
    public let priority: Int32
    /// What a message action gives back: new content or a URL. Composer actions give content.
    public let yields: ActionYield
    /// The C signature the host calls the function by; its value parameters are the arguments a caller gives.
    public let signature: ActionSignature
    /// The plugin that declares it.
    public let plugin: PluginInfo

    /// Creates a description of an action.
    public init(
        kind: ActionKind, id: String, objectName: String, title: String, icon: String, priority: Int32, yields: ActionYield,
        signature: ActionSignature, plugin: PluginInfo
    ) {
        (self.kind, self.id, self.objectName, self.title, self.icon) = (kind, id, objectName, title, icon)
        (self.priority, self.yields, self.signature, self.plugin) = (priority, yields, signature, plugin)
        parameters = signature.valueParameters
    }

    /// The arguments a caller gives, in order: the signature's value parameters.
    public let parameters: [ActionSignature.Parameter]

    /// `vote on demo:poll: int32(message poll, int32 option, string voter, sink out)` or
    /// `demo.poll.create creates demo:poll: int32(...)`.
    public var description: String {
        "\(id) \(kind == .message ? "on" : "creates") \(objectName): \(signature)"
    }

    /// Whether `a` comes before `b` in a menu: higher priority first, then by title, then by id.
    public static func menuOrder(_ a: ActionDeclaration, _ b: ActionDeclaration) -> Bool {
        if a.priority != b.priority { return a.priority > b.priority }
        if a.title != b.title { return a.title < b.title }
        return a.id < b.id
    }
}

/// The old name of ``ActionDeclaration``.
@available(*, deprecated, renamed: "ActionDeclaration")
public typealias MessageAction = ActionDeclaration
