/// Stops the process when an invariant does not hold, naming it, so that libFuzzer keeps the input that
/// broke it (as `crash-…` in the artifacts folder) and prints this message above its report.
public func violated(_ invariant: String, _ details: @autoclosure () -> String = "") -> Never {
    let more = details()
    fatalError("invariant violated: \(invariant)\(more.isEmpty ? "" : "\n\(more)")")
}

/// Bytes for a report: UTF-8 text where it is valid, with the length.
func show(_ bytes: some Collection<UInt8>) -> String {
    "\(bytes.count) bytes: \(String(decoding: bytes.prefix(600), as: UTF8.self))\(bytes.count > 600 ? "…" : "")"
}

extension String {
    /// Whether two strings have the same UTF-8 bytes. Swift's `==` compares canonical equivalence, which
    /// would let a parser that changes `é` into `e` + U+0301 pass.
    func sameBytes(as other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}

extension Optional<String> {
    func sameBytes(as other: String?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case (let a?, let b?): a.sameBytes(as: b)
        default: false
        }
    }
}
