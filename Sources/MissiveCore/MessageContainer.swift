/// An objectName whose content names its real type in one top-level member, the dispatch key.
///
/// `MS:Custom` is the built-in container: its content's `businessID` names the type. A bridge plugin can
/// declare others, such as Matrix's `m.room.message`, whose `msgtype` (`m.text`, `m.image`, ...) names the
/// type, or a signalling container whose key holds an integer. Message types register under a container
/// with the value of its key that selects them (``MessageCoding/businessID``).
public struct MessageContainer: Sendable, Hashable, CustomStringConvertible {
    /// The JSON kind of a container key's values.
    public enum KeyKind: String, Sendable, Hashable, CaseIterable {
        /// A JSON string; it selects the type registered under exactly that text.
        case string
        /// A JSON integer (no fraction, no exponent) in the range of `Int64`; it selects the type registered
        /// under its decimal spelling, as in `"1001"` or `"-3"`.
        case integer
    }

    /// The built-in container: `MS:Custom`, dispatching on the string member `businessID`.
    public static let custom = MessageContainer(objectName: "MS:Custom", key: "businessID", keyKind: .string)

    /// The container's objectName, under which messages are sent.
    public var objectName: String
    /// The top-level member of the content whose value names the type.
    public var key: String
    /// The JSON kind of the key's values.
    public var keyKind: KeyKind

    /// Creates a container declaration.
    public init(objectName: String, key: String, keyKind: KeyKind = .string) {
        self.objectName = objectName
        self.key = key
        self.keyKind = keyKind
    }

    /// `m.room.message[msgtype: string]`.
    public var description: String { "\(objectName)[\(key): \(keyKind.rawValue)]" }
}
