/// One argument of an action, as the JSON value it stands for.
///
/// Arguments reach a host as JSON: a view button's `arguments` array, a UI event, the command line. The
/// host checks each against the action's signature before any call (count, JSON kind, integer range, UTF-8,
/// no NUL in a string) and converts it to the C value the function takes. Typed cases are for Swift code;
/// ``json(_:)`` carries a value exactly as written, so that what a Swift value cannot hold (invalid UTF-8,
/// a lone surrogate, a number beyond `Int64`) is checked, and refused, the same way.
public enum ActionArgument: Sendable, Hashable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral
{
    /// A JSON integer.
    case integer(Int64)
    /// A JSON number; not finite numbers are written as `null`.
    case number(Double)
    /// A JSON string.
    case string(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`, which no parameter type takes.
    case null
    /// One JSON value as written, checked when the action is called.
    case json([UInt8])

    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// One JSON value as written, such as a command-line argument: `0`, `"alice"`, `true`.
    public init(json text: String) { self = .json(Array(text.utf8)) }

    /// The arguments as one JSON array, strings escaped: what a button's `arguments` holds.
    public static func jsonArray(_ arguments: [ActionArgument]) -> String {
        var json = "["
        for (index, argument) in arguments.enumerated() {
            if index > 0 { json += "," }
            argument.write(to: &json)
        }
        return json + "]"
    }

    /// The argument as JSON text. A ``json(_:)`` value is written as it came, invalid bytes replaced.
    public var jsonText: String {
        var text = ""
        write(to: &text)
        return text
    }

    private func write(to json: inout String) {
        switch self {
        case .integer(let number): json += String(number)
        case .number(let number): json += number.isFinite ? "\(number)" : "null"
        case .string(let text): JSONValue.quote(text, into: &json)
        case .bool(let flag): json += flag ? "true" : "false"
        case .null: json += "null"
        case .json(let bytes): json += String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The elements of a JSON array, such as a view button's `arguments`, each kept as written.
    ///
    /// - Throws: ``MissiveJSONError`` when the text is not one JSON array.
    public static func list(fromJSONArray text: String) throws(MissiveJSONError) -> [ActionArgument] {
        let bytes = Array(text.utf8)
        guard case .array(let values) = try JSONValue.parse(bytes, maxDepth: 64, loneSurrogates: .refuse) else {
            throw MissiveJSONError(offset: 0, message: "the arguments are not a JSON array")
        }
        return values.map { .json(Array($0.serialized.utf8)) }
    }
}
