import Foundation

/// Resident memory and CPU time of a process, from `/proc`.
enum ProcessStats {
    /// `VmRSS` of process `pid` (`self` for this one), in MiB.
    static func residentMiB(_ pid: String = "self") -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return .nan }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Double($0) } ?? .nan
            return kilobytes / 1024
        }
        return .nan
    }

    /// User plus system CPU time of process `pid` (`self` for this one), in seconds.
    static func cpuSeconds(_ pid: String = "self") -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return .nan }
        // After the command's name in parentheses: state is field 3, utime field 14, stime field 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The monotonic clock, in nanoseconds: the same clock for a send and its receipts (one process).
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

/// Raises this process's soft limit of open files to its hard limit: 1,000 connections need 1,000 descriptors on
/// each side, and a soft limit of 1,024 is common. Returns the limit now in force.
@discardableResult
func raiseFileLimit() -> UInt64 {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return UInt64(limit.rlim_cur)
}
