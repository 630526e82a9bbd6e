import MissivePluginKit

/// DemoMedia's types, compiled into the benchmark from the plugin's own source file, for the host to
/// register as native Swift types: the decode benchmark's floor.
public let compiledDemoMediaTypes: [any MessageType.Type] = [StickerMessage.self]
