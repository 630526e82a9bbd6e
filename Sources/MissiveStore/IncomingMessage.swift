import Missive

/// A message to ingest, with the envelope bytes to store for it.
public struct IncomingMessage: Sendable {
    /// The decoded message.
    public var message: Message
    /// The envelope as it is stored: the line received, byte for byte, when there was one.
    public var envelopeBytes: [UInt8]

    /// A message whose envelope is stored as `Envelope.encoded()` writes it: its content byte for byte,
    /// its other members in the envelope's order.
    public init(_ message: Message) {
        self.message = message
        self.envelopeBytes = message.envelope.encoded()
    }

    /// A message whose envelope is stored as `envelopeBytes`: the line it was parsed from, byte for byte. For a host
    /// that decodes many lines in one call (`MessageRegistry.decode(_:views:)`, which sends an isolated plugin's
    /// messages to its worker in one batch).
    public init(_ message: Message, envelopeBytes: [UInt8]) {
        self.message = message
        self.envelopeBytes = envelopeBytes
    }

    /// One received line (one envelope of JSON Lines), decoded through `registry` and stored exactly as
    /// received.
    ///
    /// - Throws: `MissiveError` with the code `malformed-envelope` when the line is not a valid envelope.
    public init(line: some Collection<UInt8>, registry: MessageRegistry) throws(MissiveError) {
        let bytes = Array(line)
        self.message = try registry.decode(line: bytes)
        self.envelopeBytes = bytes
    }
}

extension MessageStore {
    /// Ingests decoded messages, storing each envelope as ``Envelope/encoded()`` writes it.
    public func ingest(_ messages: [Message]) async throws(StoreError) -> IngestReport {
        try await ingest(messages.map(IncomingMessage.init))
    }

    /// Decodes `envelopes` through `registry` and ingests them, in one transaction.
    public func ingest(_ envelopes: [Envelope], registry: MessageRegistry) async throws(StoreError) -> IngestReport {
        try await ingest(registry.decode(envelopes).map(IncomingMessage.init))
    }
}
