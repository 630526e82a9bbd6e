@_exported import MissiveCore

/// Declares a Swift type as a Missive message type.
///
/// Attach it to a struct at file scope that conforms to ``MessageContentView`` (and, for a media type,
/// ``MediaMessageContent``, declared on the struct itself) and implements the rest of ``MessageCoding``
/// (for a `Codable` struct, only ``MessageCoding/examples``):
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
/// The macro adds the `objectName`, `businessID` and `persistence` requirements and writes the type's
/// record into the plugin's `missive_meta` ELF section, so a host can read it without running the plugin.
/// Every argument must be a literal.
@attached(extension, conformances: MessageCoding, MessagePersistence, names: named(objectName), named(businessID), named(persistence))
@attached(peer, names: prefixed(_missiveMetadata_))
public macro MissiveMessage(_ objectName: String, businessID: String? = nil, persistence: Persistence) =
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
/// ``MissiveMessage(_:businessID:persistence:)``, and every type that carries it must be listed; the host
/// refuses a plugin whose metadata and types disagree.
@freestanding(declaration, names: named(_missiveMetadata_plugin), named(_missivePluginExport), named(_missivePluginEntry))
public macro MissivePlugin(name: String, version: String, vendor: String, types: [any MessageType.Type]) =
    #externalMacro(module: "MissiveMacros", type: "MissivePluginMacro")
