import Foundation

extension ServerLimits {
    /// The limits by the names `missive serve --limit NAME=VALUE` takes (each property's name), with the kind of
    /// value each holds: a whole number, a number, or seconds.
    public static let settableNames: [String] = settable.map(\.name)

    /// Sets the limit `name` (a property's name, as ``settableNames`` lists) to `value`: a whole number for a count
    /// or a size in bytes, a number for a rate, seconds (fractions allowed) for a time.
    ///
    /// - Throws: ``ServerLimitError`` naming the limit and what it takes, for an unknown name or a value that is
    ///   not a positive number of the limit's kind.
    public mutating func set(_ name: String, to value: String) throws(ServerLimitError) {
        guard let limit = Self.settable.first(where: { $0.name == name }) else {
            throw ServerLimitError("no limit named '\(name)'; the limits: \(Self.settableNames.joined(separator: ", "))")
        }
        try limit.apply(&self, value)
    }

    private struct Settable: Sendable {
        let name: String
        let apply: @Sendable (inout ServerLimits, String) throws(ServerLimitError) -> Void

        static func count(_ name: String, _ path: any WritableKeyPath<ServerLimits, Int> & Sendable) -> Settable {
            Settable(name: name) { limits, text throws(ServerLimitError) in
                guard let number = Int(text), number > 0 else { throw ServerLimitError("\(name) takes a whole number above 0, not '\(text)'") }
                limits[keyPath: path] = number
            }
        }

        static func rate(_ name: String, _ path: any WritableKeyPath<ServerLimits, Double> & Sendable) -> Settable {
            Settable(name: name) { limits, text throws(ServerLimitError) in
                guard let number = Double(text), number.isFinite, number > 0 else { throw ServerLimitError("\(name) takes a number above 0, not '\(text)'") }
                limits[keyPath: path] = number
            }
        }

        static func time(_ name: String, _ path: any WritableKeyPath<ServerLimits, Duration> & Sendable) -> Settable {
            Settable(name: name) { limits, text throws(ServerLimitError) in
                guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 31_536_000 else {
                    throw ServerLimitError("\(name) takes seconds, above 0 and at most 31536000 (a year), not '\(text)'")
                }
                let milliseconds = Int64((seconds * 1000).rounded())
                guard milliseconds >= 1 else { throw ServerLimitError("\(name) takes at least 0.001 seconds, not '\(text)'") }
                limits[keyPath: path] = .milliseconds(milliseconds)
            }
        }
    }

    private static let settable: [Settable] = [
        .count("maxRequestBytes", \.maxRequestBytes), .count("maxContentBytes", \.maxContentBytes), .count("maxUploadBytes", \.maxUploadBytes),
        .count("burst", \.burst), .rate("requestsPerSecond", \.requestsPerSecond),
        .count("failedAuthBurst", \.failedAuthBurst), .rate("failedAuthPerSecond", \.failedAuthPerSecond),
        .count("maxConnectionsPerAddress", \.maxConnectionsPerAddress), .count("maxEventStreamsPerMember", \.maxEventStreamsPerMember),
        .time("requestHeadTimeout", \.requestHeadTimeout), .time("requestBodyTimeout", \.requestBodyTimeout), .time("uploadTimeout", \.uploadTimeout),
        .count("eventQueueLength", \.eventQueueLength), .count("maxUnsentBytes", \.maxUnsentBytes),
        .time("stalledWriteTimeout", \.stalledWriteTimeout), .time("tokenCheckInterval", \.tokenCheckInterval),
        .count("maxUploadedBytesPerMember", \.maxUploadedBytesPerMember), .count("maxUploadedFilesPerMember", \.maxUploadedFilesPerMember),
        .time("unreferencedMediaGrace", \.unreferencedMediaGrace),
    ]
}

/// A limit that cannot be set as asked: its reason names the limit and what it takes.
public struct ServerLimitError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
