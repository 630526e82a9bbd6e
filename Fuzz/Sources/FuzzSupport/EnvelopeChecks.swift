import Missive

/// The envelope parser's invariants, for one input.
///
/// 1. Parsing either gives an envelope or throws `malformed-envelope`.
/// 2. An envelope that parses re-encodes to a line that parses to the same envelope, byte for byte in
///    every field (not only equal as Swift strings), with `content` and the unknown members kept as received.
/// 3. Encoding is byte-stable: the second encoding is the first.
/// 4. An input without a newline byte encodes to a line without one, so JSON Lines stays one envelope a line.
public enum EnvelopeChecks {
    public static func check(_ input: UnsafeBufferPointer<UInt8>) {
        // The parser reads the fuzzer's own buffer (exactly the input's size), so that AddressSanitizer sees
        // a read past its end.
        let first: Envelope
        do {
            first = try Envelope(parsing: input)
        } catch {
            guard error.code == .malformedEnvelope else { violated("parsing failed with \(error.code), not malformed-envelope", error.description) }
            return
        }
        let line = first.encoded()
        let second: Envelope
        do {
            second = try Envelope(parsing: line)
        } catch {
            violated("an envelope that parsed re-encodes to a line that does not parse", "\(error)\nline: \(show(line))")
        }
        if let difference = difference(first, second) {
            violated("the re-encoded line parses to another envelope (\(difference))", "input: \(show(input))\nline: \(show(line))")
        }
        let again = second.encoded()
        guard again == line else { violated("encoding is not byte-stable", "first: \(show(line))\nsecond: \(show(again))") }
        if !input.contains(0x0A) && line.contains(0x0A) {
            violated("a line without a newline re-encodes to one with a newline", "line: \(show(line))")
        }
    }

    /// The first field in which two envelopes differ, comparing strings by their bytes.
    public static func difference(_ a: Envelope, _ b: Envelope) -> String? {
        if !a.id.sameBytes(as: b.id) { return "id" }
        if !a.conversationID.sameBytes(as: b.conversationID) { return "conversationID" }
        if !a.senderID.sameBytes(as: b.senderID) { return "senderID" }
        if a.sentAt != b.sentAt { return "sentAt" }
        if !a.objectName.sameBytes(as: b.objectName) { return "objectName" }
        if a.content != b.content { return "content" }
        if !a.parentID.sameBytes(as: b.parentID) { return "parentID" }
        if a.persistence != b.persistence { return "persistence" }
        if !a.fallbackText.sameBytes(as: b.fallbackText) { return "fallbackText" }
        if !a.pushContent.sameBytes(as: b.pushContent) { return "pushContent" }
        guard a.additionalFields.count == b.additionalFields.count else { return "the number of unknown members" }
        for (x, y) in zip(a.additionalFields, b.additionalFields) where !x.name.sameBytes(as: y.name) || x.rawValue != y.rawValue {
            return "unknown member '\(x.name)'"
        }
        return nil
    }
}
