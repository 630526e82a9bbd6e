import MissivePluginKit

/// DemoMessages' types, compiled into the benchmark from the plugin's own source file, for the host to
/// register as native Swift types: the decode benchmark's floor.
public let compiledDemoMessagesTypes: [any MessageType.Type] = [LinkMessage.self, PollMessage.self, TypingMessage.self]
