import Foundation

/// Repeated measurements of one quantity.
struct Samples {
    var values: [Double]

    var median: Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    var min: Double { values.min() ?? 0 }
    var max: Double { values.max() ?? 0 }

    /// `median (min–max)` with `digits` decimals.
    func summary(_ digits: Int = 1) -> String {
        "\(format(median, digits)) (\(format(min, digits))–\(format(max, digits)))"
    }
}

func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

/// Seconds since an arbitrary point, from the monotonic clock.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// This process's resident set and its peak, in MiB, from /proc/self/status.
func residentMemory() -> (current: Double, peak: Double) {
    guard let handle = FileHandle(forReadingAtPath: "/proc/self/status"), let data = try? handle.readToEnd() else { return (0, 0) }
    var current = 0.0, peak = 0.0
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
        let fields = line.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 2, let kilobytes = Double(fields[1]) else { continue }
        if fields[0] == "VmRSS:" { current = kilobytes / 1024 }
        if fields[0] == "VmHWM:" { peak = kilobytes / 1024 }
    }
    return (current, peak)
}
