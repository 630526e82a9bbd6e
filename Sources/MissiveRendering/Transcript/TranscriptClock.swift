import Foundation

/// Days and times of a transcript, in one time zone (UTC unless told otherwise), spelled the same way
/// on every machine: `Thursday, 1 January 2026` and `09:05`.
public struct TranscriptClock: Sendable {
    /// A calendar day.
    public struct Day: Hashable, Sendable {
        public let year: Int
        public let month: Int
        public let day: Int
    }

    /// The time zone.
    public let timeZone: TimeZone
    private let calendar: Calendar

    /// A clock in `timeZone`.
    public init(timeZone: TimeZone = TimeZone(identifier: "UTC")!) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    private func components(_ milliseconds: Int64) -> DateComponents {
        calendar.dateComponents([.year, .month, .day, .weekday, .hour, .minute], from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// The calendar day of a time in milliseconds since the epoch.
    public func day(of milliseconds: Int64) -> Day {
        let parts = components(milliseconds)
        return Day(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0)
    }

    /// `Thursday, 1 January 2026`.
    public func dayTitle(of milliseconds: Int64) -> String {
        let parts = components(milliseconds)
        let weekday = Self.weekdays[((parts.weekday ?? 1) - 1) % 7]
        let month = Self.months[((parts.month ?? 1) - 1) % 12]
        return "\(weekday), \(parts.day ?? 0) \(month) \(parts.year ?? 0)"
    }

    /// `09:05`, on a 24-hour clock.
    public func time(of milliseconds: Int64) -> String {
        let parts = components(milliseconds)
        func two(_ value: Int?) -> String { let value = value ?? 0; return value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.hour)):\(two(parts.minute))"
    }

    private static let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]
}
