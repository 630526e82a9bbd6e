@_exported import MissiveCore

/// Declares a Swift type as a Missive message type.
///
/// Attach it to a struct at file scope that conforms to `MessageTextContent` (and, for a media type,
/// `MediaMessageContent`, declared on the struct itself) and implements the rest of `MessageCoding`
/// (for a `Codable` struct, only `MessageCoding.examples`):
///
/// ```swift
/// @MissiveMessage("demo:link", businessID: "text_link", persistence: .counted)
/// struct LinkMessage: Codable, MessageContentView {
///     var text: String
///     var link: String
///     static var examples: [LinkMessage] { [LinkMessage(text: "Missive", link: "https://example.com")] }
///     var digest: String { text }
/// }
/// ```
///
/// The macro adds the `objectName`, `businessID`, `container` and `persistence` requirements and writes the
/// type's record into the plugin's `missive_meta` ELF section, so a host can read it without running the
/// plugin. Every argument must be a literal.
///
/// `businessID` is the value its container dispatches on to reach the type: by default the container is
/// `MS:Custom`, whose content carries a `businessID` member. To register under a container the plugin
/// declares in ``MissivePlugin(name:version:vendor:containers:types:dataFiles:)``, name it:
///
/// ```swift
/// @MissiveMessage("matrix:text", container: "m.room.message", businessID: "m.text", persistence: .counted)
/// ```
///
/// For a `Codable` struct, the macro also generates the decoding and encoding of its stored properties over
/// `MissiveJSONReader` and `MissiveJSONWriter` (`MissiveJSONValue`), so that content skips
/// `JSONDecoder`'s and `JSONEncoder`'s container machinery: see ``MissiveCoding()`` for what is generated and
/// what keeps the `Codable` path. A hand-written `init(decoding:)` in the type's body that validates after
/// decoding reaches the same fast path with `self = try MissiveJSON.decode(Self.self, from: content)`; without
/// one, hosts decode the type's content from their own buffer, with no copy.
///
/// The type's actions are the methods in its body that carry ``MissiveAction(_:title:icon:priority:examples:)``;
/// the macro writes their metadata records too.
@attached(
    extension, conformances: MessageCoding, MessagePersistence, MissiveActionProviding, MissiveJSONValue, MissiveDecodesInPlace,
    names: named(objectName), named(businessID), named(container), named(persistence), named(_missiveActions), named(init),
    named(writeMissiveJSON))
@attached(peer, names: prefixed(_missiveMetadata_))
public macro MissiveMessage(_ objectName: String, container: String? = nil, businessID: String? = nil, persistence: Persistence) =
    #externalMacro(module: "MissiveMacros", type: "MissiveMessageMacro")

/// Exports a plugin: its identity, its message types, the `missive_plugin_entry_v1` entry symbol and the
/// plugin record of its metadata.
///
/// Write it once, at file scope, in the plugin's target:
///
/// ```swift
/// #MissivePlugin(name: "DemoMessages", version: "1.0.0", vendor: "Missive Samples",
///                types: [LinkMessage.self, PollMessage.self])
/// ```
///
/// `name`, `version` and `vendor` must be string literals. Every type listed must carry
/// ``MissiveMessage(_:container:businessID:persistence:)``, and every type that carries it must be listed;
/// the host refuses a plugin whose metadata and types disagree.
///
/// A plugin that brings types of a container other than `MS:Custom` declares it, with literal arguments:
///
/// ```swift
/// #MissivePlugin(name: "MatrixBridge", version: "1.0.0", vendor: "Missive Samples",
///                containers: [MessageContainer(objectName: "m.room.message", key: "msgtype", keyKind: .string)],
///                types: [MatrixText.self, MatrixNotice.self])
/// ```
///
/// A plugin that reads files of its own (a dictionary, a font) declares each one, as a string literal
/// relative to the folder of the plugin's `.so` file:
///
/// ```swift
/// #MissivePlugin(name: "WordGame", version: "1.0.0", vendor: "Acme", types: [WordMessage.self],
///                dataFiles: ["data/words.txt"])
/// ```
///
/// A host that runs the plugin isolated lets it read these files, read-only, and no other file. A path is in
/// its normal spelling: not absolute, without `.`, `..` or empty components; the macro refuses any other, as
/// the host would. Ship the files beside the plugin; `missive check` checks that they are there.
@freestanding(
    declaration, names: named(_missiveMetadata_plugin), named(_missivePluginExport), named(_missivePluginEntry), named(_missiveMetadata_containers),
    named(_missiveMetadata_files))
public macro MissivePlugin(
    name: String, version: String, vendor: String, containers: [MessageContainer] = [], types: [any MessageType.Type], dataFiles: [String] = []
) = #externalMacro(module: "MissiveMacros", type: "MissivePluginMacro")

/// Declares a method of a `@MissiveMessage` type as an action the host can call (missive_plugin.h, "The
/// actions extension"). Write it in the type's body, where `@MissiveMessage` sees it:
///
/// ```swift
/// /// Records a vote: a message action, shown as a "Vote" button.
/// @MissiveAction("vote", title: "Vote", icon: "checkmark.circle", priority: 10, examples: [[0, "alice"]])
/// func vote(option: Int32, voter: String) throws -> PollMessage { ... }
///
/// /// Creates a poll: a composer action, shown in the composer's menu.
/// @MissiveAction("demo.poll.create", title: "Poll", icon: "chart.bar", priority: 50, examples: [["Lunch?", "Pizza\nSushi"]])
/// static func create(question: String, options: String) throws -> PollMessage { ... }
/// ```
///
/// - An instance method is a **message action** on messages of the type. It returns the message's new
///   content (the type, or `Self`), or a `URL` to open.
/// - A static method is a **composer action**: it returns new content of the type.
/// - Parameters are `Int32`, `Int64`, `Int` (as `int64`), `Double`, `Bool` and `String`, without default
///   values; the signature names them in snake case (`voterID` is `voter_id`). The host checks every
///   argument against them before calling.
/// - Throw ``ActionRefusal`` to refuse arguments that make no sense for the message (`invalid-argument`);
///   any other error is a failure, with its description as the reason.
/// - `id`, `title`, `icon` and `priority` must be literals; `examples` lists argument lists the conformance
///   suite runs the action with (an action without parameters runs with none).
@attached(peer, names: prefixed(_missiveAction_))
public macro MissiveAction(_ id: String, title: String, icon: String, priority: Int32 = 0, examples: [[ActionArgument]] = []) =
    #externalMacro(module: "MissiveMacros", type: "MissiveActionMacro")

/// Generates a type's JSON coding over `MissiveJSONReader` and `MissiveJSONWriter`: its conformance to
/// `MissiveJSONValue`, for the value types a message type holds and for types outside plugins.
/// `@MissiveMessage` generates the same for the message type itself.
///
/// ```swift
/// @MissiveCoding
/// struct Money: Codable, Sendable {
///     var amount: String
///     var currency: String
/// }
/// ```
///
/// - A `Codable` struct gets it when it declares `Codable` in its inheritance clause, has no `CodingKeys`, no
///   `init(from:)` and no `encode(to:)`, is not generic, and each stored property is one name with a written
///   type, without a property wrapper, not `lazy`, and not a `let` with an initial value. A `Codable` enum
///   gets it when its first inherited type is its raw type (`String`, an integer type, `Double`, `Float` or
///   `Bool`).
/// - Members whose type has generated coding use it: `String`, `Bool`, the integer types up to 64 bits,
///   `Double`, `Float`, optionals, arrays, `[String: T]` dictionaries of those, and types that carry
///   `@MissiveCoding`. A member of any other type goes through `JSONDecoder` and `JSONEncoder` alone.
/// - The result agrees with `Codable`: the same values, the same refusals and reasons (content the fast path
///   refuses is decoded again by `JSONDecoder`, which decides), the same bytes as `MissiveJSON.encoder`.
///   Unknown members are skipped.
///
/// A type the macro cannot generate for is a compile error; `@MissiveMessage` instead keeps the `Codable`
/// path quietly.
@attached(extension, conformances: MissiveJSONValue, names: named(init), named(writeMissiveJSON))
public macro MissiveCoding() = #externalMacro(module: "MissiveMacros", type: "MissiveCodingMacro")
