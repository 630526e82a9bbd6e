import MissiveCore
// The API's shapes (`RemoteMessage`, `RemoteConversation`, `ReportedType`...) are the wire module's, which the
// server writes with: one declaration of each, for both sides.
@_exported import MissiveWire

/// What went wrong talking to a server: the API's own error (status, code and message, as docs/SERVER.md lists
/// them), a server that cannot be reached, or an answer the client cannot read.
public struct ServerClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status of the answer; `nil` when there was no answer.
    public var status: Int?
    /// The API's error code (`not-found`, `unknown-type`, ...), `unreachable`, or `malformed-answer`.
    public var code: String
    /// The message: the server's words for an API error, as they came.
    public var message: String

    /// An error with every field given.
    public init(status: Int?, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// A server that did not answer, with the reason.
    static func unreachable(_ reason: String) -> ServerClientError {
        ServerClientError(status: nil, code: "unreachable", message: reason)
    }

    /// An answer that is not what the API promises.
    static func malformedAnswer(_ reason: String) -> ServerClientError {
        ServerClientError(status: nil, code: "malformed-answer", message: reason)
    }

    /// `bytes` read as the wire type `T`, or a `malformed-answer` error that names the member at fault.
    static func reading<T: WireType>(_ type: T.Type, _ bytes: [UInt8]) throws(ServerClientError) -> T {
        do throws(WireDecodingError) {
            return try T.decoded(from: bytes)
        } catch {
            throw malformedAnswer(error.description)
        }
    }

    /// `message (code, status)`.
    public var description: String {
        "\(message) (\(code)\(status.map { ", \($0)" } ?? ""))"
    }
}

/// What the server did with a message sent to it.
public enum SendOutcome: Sendable, Hashable {
    /// It was stored (or had been, for a retry): the stored message.
    case stored(RemoteMessage)
    /// It was handed to the members without being kept (a `none` or `status` message).
    case delivered

    /// Reads the answer to a send: a ``StoredAnswer`` or a ``NotStoredAnswer``, told apart by `stored`.
    init(answer bytes: [UInt8]) throws(ServerClientError) {
        struct Flag: Codable, Sendable { var stored: Bool? }
        if (try? JSONReaderDecoder.decode(Flag.self, from: bytes))?.stored == false {
            _ = try ServerClientError.reading(NotStoredAnswer.self, bytes)
            self = .delivered
        } else {
            self = .stored(try ServerClientError.reading(StoredAnswer.self, bytes).message)
        }
    }
}

/// What a message action performed by the server gave.
public enum RemoteActionResult: Sendable, Hashable {
    /// The message's new version, stored.
    case edited(RemoteMessage)
    /// A URL to open; nothing changed.
    case url(String)

    /// Reads the answer to an action: an ``EditedAnswer`` or a ``URLAnswer``, told apart by `result`.
    init(answer bytes: [UInt8]) throws(ServerClientError) {
        struct Kind: Codable, Sendable { var result: String? }
        if (try? JSONReaderDecoder.decode(Kind.self, from: bytes))?.result == "url" {
            self = .url(try ServerClientError.reading(URLAnswer.self, bytes).url)
        } else {
            self = .edited(try ServerClientError.reading(EditedAnswer.self, bytes).message)
        }
    }
}
