import CMissivePlugin
import Foundation
import Missive
#if canImport(Glibc)
import Glibc
#endif

/// The peak of the resident set during one call, as Linux keeps it: `VmHWM` in `/proc/self/status`, reset
/// to the current resident set (`VmRSS`) by writing `5` to `/proc/self/clear_refs` (proc(5)).
///
/// A measure is: reset the peak, read the resident set (the baseline), make the call, read the peak. The
/// difference is what the call made resident at its highest, whatever it freed before returning, on every
/// thread of the process. The kernel updates the counters in steps of a few pages, so the measure is good to
/// a few hundred KiB: ample for a budget of megabytes. Memory allocated but never written is not resident,
/// and is not counted; memory that was resident before the call and reused by it is not counted twice.
enum PeakMemory {
    /// Why peaks cannot be measured in this process, or `nil` when they can: the files are missing (not
    /// Linux, or no `/proc`), or the peak cannot be reset (a kernel before 4.0).
    static let unavailableReason: String? = {
        guard reset() else { return "the peak resident set cannot be reset (/proc/self/clear_refs is not writable)" }
        guard sample() != nil else { return "/proc/self/status has no VmRSS and VmHWM" }
        return nil
    }()

    /// The resident set and its peak since the last reset, in bytes.
    struct Sample {
        let resident: Int
        let peak: Int
    }

    /// How far above the resident set before it the process's peak went while `body` ran, in bytes, or
    /// `nil` when it cannot be measured.
    static func peakGrowth(during body: () -> Void) -> Int? {
        guard reset(), let before = sample() else { return nil }
        body()
        guard let after = sample() else { return nil }
        return max(0, after.peak - before.resident)
    }

    /// Resets the peak to the current resident set.
    static func reset() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// `VmRSS` and `VmHWM`, read with system calls into a buffer on the stack, so that reading them allocates
    /// nothing that would count.
    static func sample() -> Sample? {
        let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer -> Sample? in
            var length = 0
            while length < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + length, buffer.count - length)
                if count <= 0 { break }
                length += count
            }
            let text = UnsafeBufferPointer(rebasing: buffer[..<length])
            guard let resident = kilobytes(after: "VmRSS:", in: text), let peak = kilobytes(after: "VmHWM:", in: text) else { return nil }
            return Sample(resident: resident << 10, peak: peak << 10)
        }
    }

    /// The number of kB on the line that starts with `label`.
    private static func kilobytes(after label: StaticString, in text: UnsafeBufferPointer<UInt8>) -> Int? {
        let key = UnsafeBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount)
        var lineStart = 0
        while lineStart + key.count <= text.count {
            if zip(key, text[lineStart...]).allSatisfy({ $0 == $1 }) {
                var value = 0, at = lineStart + key.count, digits = 0
                while at < text.count, text[at] == UInt8(ascii: " ") || text[at] == UInt8(ascii: "\t") { at += 1 }
                while at < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[at]) {
                    value = value * 10 + Int(text[at] - UInt8(ascii: "0"))
                    at += 1
                    digits += 1
                }
                return digits > 0 ? value : nil
            }
            guard let newline = text[lineStart...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            lineStart = newline + 1
        }
        return nil
    }
}

extension ResourceChecks {
    /// How far above the resident set before it one call may take the process's peak resident set.
    static let peakBudgetBytes = 64 << 20
    /// The size of the member added to each example for the large input of `memory.peak`: content of about
    /// 128 KiB, the most a message carries (the server limit the brief's references share).
    static let peakLargeMemberBytes = 128 << 10

    /// `memory.peak`: every call on the examples, and on each example made 128 KiB long, measured alone.
    static let peakCheck = ConformanceCheck(
        id: "memory.peak", level: 6,
        summary: "No single call (decode of an example or of a 128 KiB one, encode, digest, words, push, media, view, release, an example "
            + "action call) takes the peak resident set more than \(peakBudgetBytes >> 20) MiB above where it was.",
        requires: ["examples.decode"]
    ) { context in
        if let reason = PeakMemory.unavailableReason { return .skipped(reason) }
        if let sanitizer = Sanitizer.current { return .skipped("under \(sanitizer.rawValue) the resident set holds the sanitizer's shadow memory and quarantine") }
        return context.withTypes { (types) throws(CheckFailure) in
            var problems: [String] = []
            func measure(_ what: @autoclosure () -> String, _ call: () -> Void) {
                guard let growth = PeakMemory.peakGrowth(during: call), growth > peakBudgetBytes else { return }
                problems.append("\(what()) took the peak \(megabytes(growth)) MiB above where it was")
            }
            for type in types {
                for (index, example) in type.examples.enumerated() {
                    for (name, input) in [("example \(index)", example), ("example \(index) with a 128 KiB member", largeInput(example))] {
                        guard let input else { continue }
                        InputTrail.note("\(type.objectName), \(name): \(preview(input, limit: 64))")
                        var decoded: PluginContent?
                        measure("\(type.objectName) \(name): decode") { decoded = try? type.decode(bytes: input).get() }
                        guard let content = decoded else { continue }
                        measure("\(type.objectName) \(name): encode") { _ = content.rawEncode() }
                        measure("\(type.objectName) \(name): digest") { _ = content.rawDigest() }
                        measure("\(type.objectName) \(name): searchable_words") { _ = content.rawSearchableWords() }
                        measure("\(type.objectName) \(name): push_content") { _ = content.rawPushContent() }
                        if type.isMedia { measure("\(type.objectName) \(name): media") { _ = content.media } }
                        measure("\(type.objectName) \(name): view") { _ = content.rawView() }
                        measure("\(type.objectName) \(name): release") { decoded = nil }
                    }
                }
            }
            InputTrail.clear()
            if case .success(let registry) = context.actionRegistry {
                for action in registry.composerActions + registry.messageActions where action.plugin.path == context.path {
                    guard let loaded = try? registry.loadedAction(action) else { continue }
                    for call in ActionChecks.calls(of: loaded, registry: registry) {
                        measure("\(call.description(limit: 60))") { _ = call.run(registry) }
                    }
                }
            }
            return outcome(expected: "at most \(peakBudgetBytes >> 20) MiB more resident memory at the peak of any call", problems: problems)
        }
    }

    /// `example` with a string member of ``peakLargeMemberBytes`` added first (a member the type does not
    /// know, which it must accept: `content.unknown-members`), or `nil` when it is not a JSON object.
    static func largeInput(_ example: [UInt8]) -> [UInt8]? {
        guard example.first == UInt8(ascii: "{") else { return nil }
        let filler = Array(#"{"missiveCheckPadding":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: peakLargeMemberBytes) + Array(#"""#.utf8)
        let rest = example.dropFirst().drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
        return filler + (rest.first == UInt8(ascii: "}") ? [] : [UInt8(ascii: ",")]) + Array(rest)
    }

    /// Bytes in MiB, with one decimal.
    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / Double(1 << 20)) }
}
