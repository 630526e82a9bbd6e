import Missive

/// Shared steps of the checks.
extension CheckContext {
    /// Runs `body` on the callable types, turning an early ``CheckFailure`` into its outcome.
    func withTypes(_ body: ([PluginType]) throws(CheckFailure) -> CheckOutcome) -> CheckOutcome {
        switch callableTypes() {
        case .failure(let failure): return failure.outcome
        case .success(let types):
            do {
                return try body(types)
            } catch {
                return error.outcome
            }
        }
    }

    /// ``withTypes(_:)`` on a thread with a 256 KiB stack (``SmallStack``), as hosts decode. The plugin is
    /// opened first, on this thread, so that only the check's calls run on the small stack.
    func withTypesOnSmallStack(_ body: ([PluginType]) throws(CheckFailure) -> CheckOutcome) -> CheckOutcome {
        _ = callableTypes()
        return SmallStack.run { withTypes(body) }
    }
}

extension PluginType {
    /// Decodes bytes through the plugin.
    func decode(bytes: [UInt8]) -> Result<PluginContent, MissiveError> {
        bytes.withUnsafeBufferPointer { decode($0) }
    }

    /// Decodes every example, failing the check on the first that does not decode.
    func decodedExamples() throws(CheckFailure) -> [(example: [UInt8], content: PluginContent)] {
        var decoded: [(example: [UInt8], content: PluginContent)] = []
        for (index, example) in examples.enumerated() {
            InputTrail.note("\(objectName), example \(index): \(preview(example, limit: 64))")
            switch decode(bytes: example) {
            case .success(let content): decoded.append((example, content))
            case .failure(let error):
                InputTrail.clear()
                throw CheckFailure(.failed(expected: "\(objectName) example \(index) to decode", seen: "error: \(error.message)"))
            }
        }
        // What follows uses every example's message; a crash there is not one example's.
        InputTrail.clear()
        return decoded
    }
}

extension PluginContent {
    /// What a failing function's status means, with the reason the plugin gave after the reason mark:
    /// `encode failed with status 3 (MISSIVE_FAILED): the buffer is full`. Calls the function again.
    func failure(of function: String, status: Int32) -> String {
        do {
            switch function {
            case "encode": _ = try typeEncodedContent()
            case "digest": _ = try checkedDigest()
            case "push_content": _ = try checkedPushContent()
            case "searchable_words": _ = try checkedSearchableWords()
            case "view": _ = try checkedView()
            default: break
            }
        } catch {
            return error.message
        }
        return "\(function) returned status \(status)"
    }
}

/// A short, printable rendering of bytes for messages.
func preview(_ bytes: [UInt8], limit: Int = 80) -> String {
    let text = String(decoding: bytes.prefix(limit), as: UTF8.self).debugDescription
    return bytes.count > limit ? "\(text)… (\(bytes.count) bytes)" : text
}

/// Whether bytes are valid UTF-8.
func isValidUTF8(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) } != nil
}

/// `passed`, or `failed` listing the problems found.
func outcome(expected: String, problems: [String]) -> CheckOutcome {
    problems.isEmpty ? .passed : .failed(expected: expected, seen: problems.prefix(5).joined(separator: "; ") + (problems.count > 5 ? "; and \(problems.count - 5) more" : ""))
}

/// The time a check that repeats work may spend (``ResourceChecks/repetitionBudget``), from when it was made.
/// A slow plugin gets fewer repetitions instead of a timeout; the inputs come in a seeded order, so the ones
/// tried are the same on every run with the seed.
struct RepetitionDeadline {
    let budget = ResourceChecks.repetitionBudget
    let end: ContinuousClock.Instant

    init() { end = ContinuousClock.now + budget }

    /// Whether the time is up.
    var isPast: Bool { ContinuousClock.now >= end }

    /// `outcome(expected:problems:)`; when the time ran out after `tried` of `total` inputs and nothing
    /// failed, a warning that says so.
    func outcome(expected: String, problems: [String], tried: Int, of total: Int, inputs: String = "inputs") -> CheckOutcome {
        guard problems.isEmpty, tried < total else { return MissiveConformance.outcome(expected: expected, problems: problems) }
        return .warning("tried \(tried) of \(total) \(inputs): the plugin is slow, and the check stops after \(CheckOutcome.format(seconds(budget))) s")
    }
}

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
