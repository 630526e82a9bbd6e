import Hummingbird
import MissiveCore

// What the server takes from a request's path and query. Every value is percent-encoded UTF-8 without control
// characters, at most `RequestInput.maxValueBytes` bytes once decoded, and a query names each parameter once: any
// other value is refused with a `400` that names the parameter and the reason, before any store or plugin sees it.

enum RequestInput {
    /// The longest value a path segment or a query parameter may hold, decoded: 1 KiB.
    static let maxValueBytes = 1_024

    /// The value of the query parameter `name`, strictly decoded; `nil` when the query does not name it.
    ///
    /// - Throws: `400 malformed-query` when the query names it twice, or its value is not percent-encoded UTF-8, holds
    ///   a control character (NUL included), or is over ``maxValueBytes``.
    static func query(_ request: Request, _ name: String) throws(APIError) -> String? {
        guard let query = request.uri.query, !query.isEmpty else { return nil }
        var found: Substring?
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let key: Substring
            let value: Substring
            if let equals = pair.firstIndex(of: "=") {
                key = pair[..<equals]
                value = pair[pair.index(after: equals)...]
            } else {
                key = pair
                value = ""
            }
            guard (try? decode(key)) == name else { continue }
            if found != nil { throw APIError.badRequest("malformed-query", "the query gives \(name) more than once") }
            found = value
        }
        guard let found else { return nil }
        do throws(Problem) {
            return try decode(found)
        } catch {
            throw APIError.badRequest("malformed-query", "\(name): \(error.reason)")
        }
    }

    /// A path segment (`segment` as the router matched it, still percent-encoded), strictly decoded and not empty.
    ///
    /// - Throws: `400 malformed-request`, naming `what`, when it is empty or not a value ``query(_:_:)`` would take.
    static func pathSegment(_ segment: Substring, _ what: String) throws(APIError) -> String {
        do throws(Problem) {
            let value = try decode(segment)
            if value.isEmpty { throw Problem(reason: "it is empty") }
            return value
        } catch {
            throw APIError.badRequest("malformed-request", "the \(what) in the path: \(error.reason)")
        }
    }

    /// Why a value is refused.
    struct Problem: Error {
        let reason: String
    }

    /// `raw` with its percent escapes decoded, as UTF-8 without control characters, at most ``maxValueBytes``.
    static func decode(_ raw: Substring) throws(Problem) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.utf8.count)
        var input = raw.utf8.makeIterator()
        while let byte = input.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = input.next().flatMap(hexValue), let low = input.next().flatMap(hexValue) else {
                throw Problem(reason: "'%' is not followed by two hexadecimal digits")
            }
            bytes.append(high << 4 | low)
        }
        if bytes.count > maxValueBytes { throw Problem(reason: "it has \(bytes.count) bytes; at most \(maxValueBytes) are taken") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Problem(reason: "it is not UTF-8") }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw Problem(reason: "it holds a control character")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
