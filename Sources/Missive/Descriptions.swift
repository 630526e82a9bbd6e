import MissiveCore

// Readable `print` output for the types a host handles, instead of their raw stored properties.

extension MessageRegistry: CustomStringConvertible {
    /// `MessageRegistry: 13 types (MS:Text, MS:Image, …)`.
    public var description: String {
        "MessageRegistry: \(types.count) types (\(types.map(\.objectName).joined(separator: ", ")))"
    }
}

extension RegisteredType: CustomStringConvertible {
    /// `demo:poll (businessID poll, counted (3)) from plugin DemoMessages 1.0.0 (/path/libDemoMessages.so)`.
    public var description: String {
        var facts = [persistence.description]
        if let businessID { facts.insert("businessID \(businessID)", at: 0) }
        if isMedia { facts.append("media") }
        return "\(objectName) (\(facts.joined(separator: ", "))) from \(ownerDescription)"
    }
}

extension PluginMetadata: CustomStringConvertible {
    /// `DemoMessages 1.0.0 by Missive Samples (ABI 1.0, Swift 6.3.1): demo:link, demo:poll`.
    public var description: String {
        "\(name) \(version) by \(vendor) (\(PluginInfo.buildDescription(abi: abiVersion, swift: swiftVersion))): "
            + types.map(\.objectName).joined(separator: ", ")
    }
}

extension Envelope: CustomStringConvertible {
    /// `m03 in c1 from alice at 1700000000000: demo:poll, 52 bytes of content`.
    public var description: String {
        "\(id) in \(conversationID) from \(senderID) at \(sentAt): \(objectName), \(content.count) bytes of content"
    }
}

extension Message: CustomStringConvertible {
    /// `m03 demo:poll "[Poll] Dessert?" (counted (3))`, with `unknown: reason` for unknown content.
    public var description: String {
        var text = "\(envelope.id) \(envelope.objectName) \"\(digest)\" (\(persistence))"
        if let unknown { text += " unknown: \(unknown.reason)" }
        return text
    }
}

extension UnknownMessage: CustomStringConvertible {
    /// `UnknownMessage acme:order, 42 bytes kept: no type is registered under this objectName`.
    public var description: String {
        "UnknownMessage \(objectName), \(rawContent.count) bytes kept: \(reason)"
    }
}

extension TypedContent: CustomStringConvertible {
    /// The value itself, as Swift prints it.
    public var description: String { String(describing: value) }
}

extension MessageRegistry.Builder: CustomStringConvertible {
    /// `MessageRegistry.Builder, so far MessageRegistry: 9 types (MS:Text, …)`.
    public var description: String { "MessageRegistry.Builder, so far \(build())" }
}
