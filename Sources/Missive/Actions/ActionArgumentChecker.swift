import MissiveCore

/// Checking a caller's arguments against an action's signature, and converting them to the C values its
/// function takes. Nothing reaches the plugin until every argument passes.
@_spi(Benchmarks)
public enum ActionArgumentChecker {
    /// The C values of `arguments` for `action`'s value parameters, in order.
    ///
    /// - Throws: ``MissiveError`` with code `invalid-argument`, naming the action and the parameter, when
    ///   the count differs from the signature's, or an argument is not one JSON value of the parameter's kind,
    ///   an integer is out of its type's range, a number is not finite, or a string holds a NUL or invalid
    ///   UTF-8 (a lone surrogate included) or is longer than ``ActionSignature/maxStringBytes``.
    public static func values(_ arguments: [ActionArgument], for action: ActionDeclaration) throws(MissiveError) -> [ActionValue] {
        let parameters = action.parameters
        func refuse(_ message: String, _ parameter: String?) -> MissiveError {
            MissiveError(.invalidArgument, message, file: action.plugin.path, objectName: action.objectName, action: action.id, parameter: parameter)
        }
        guard arguments.count == parameters.count else {
            let takes = "\(action.id) takes \(count(parameters.count, "argument"))"
                + (parameters.isEmpty ? "" : " (\(parameters.map(\.description).joined(separator: ", ")))")
            if arguments.count < parameters.count {
                let missing = parameters[arguments.count]
                throw refuse("\(takes); \(arguments.count) given, so \(missing.name) is missing", missing.name)
            }
            throw refuse("\(takes); \(arguments.count) given", nil)
        }
        var values: [ActionValue] = []
        values.reserveCapacity(parameters.count)
        for (index, (argument, parameter)) in zip(arguments, parameters).enumerated() {
            do throws(Problem) {
                values.append(try value(argument, for: parameter.type))
            } catch {
                throw refuse("\(action.id): argument \(index + 1) (\(parameter)): \(error.description)", parameter.name)
            }
        }
        return values
    }

    /// Why one argument does not fit its parameter.
    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A JSON value as given: numbers written in JSON keep their spelling, so that ranges are judged exactly;
    /// Swift's typed numbers are taken as they are.
    private enum Given {
        case integer(Int64)
        case double(Double)
        case number(String)
        case string(String)
        case bool(Bool)
        case null
        case array
        case object

        init(_ argument: ActionArgument) throws(Problem) {
            switch argument {
            case .integer(let number): self = .integer(number)
            case .number(let number): self = .double(number)
            case .string(let text): self = .string(text)
            case .bool(let flag): self = .bool(flag)
            case .null: self = .null
            case .json(let bytes):
                let value: JSONValue
                do {
                    value = try JSONValue.parse(bytes, maxDepth: 16, loneSurrogates: .refuse)
                } catch {
                    let hint = bytes.first.map { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "t") || $0 == UInt8(ascii: "f") || $0 == UInt8(ascii: "n") } == false
                        ? " (a string is written in quotes: \"text\")" : ""
                    throw Problem("not one JSON value: \(error)\(hint)")
                }
                switch value {
                case .number(_, let spelling): self = .number(spelling)
                case .string(let text): self = .string(text)
                case .bool(let flag): self = .bool(flag)
                case .null: self = .null
                case .array: self = .array
                case .object: self = .object
                }
            }
        }

        /// The value in words: `the number 2.5`, `the string "abc"`, `true`, `an array`.
        var description: String {
            switch self {
            case .integer(let number): "the number \(number)"
            case .double(let number): "the number \(number)"
            case .number(let spelling): "the number \(spelling)"
            case .string(let text): "the string \"\(TextHygiene.cut(TextHygiene.line(text), toCodePoints: 40))\""
            case .bool(let flag): "\(flag)"
            case .null: "null"
            case .array: "an array"
            case .object: "an object"
            }
        }
    }

    /// The C value of one argument for a parameter of `type`.
    private static func value(_ argument: ActionArgument, for type: ActionSignature.ParameterType) throws(Problem) -> ActionValue {
        let given = try Given(argument)
        func wrong() -> Problem { Problem("expected \(type.expectedArgument); got \(given.description)") }
        switch type {
        case .int32, .int64:
            let number: Int64
            switch given {
            case .integer(let value): number = value
            case .number(let spelling) where isIntegerSpelling(spelling):
                guard let value = Int64(spelling) else { throw outOfRange(spelling, type) }
                number = value
            case .number, .double: throw Problem("expected an integer (no fraction or exponent); got \(given.description)")
            default: throw wrong()
            }
            if type == .int64 { return .int64(number) }
            guard let small = Int32(exactly: number) else { throw outOfRange(String(number), type) }
            return .int32(small)
        case .double:
            let number: Double
            switch given {
            case .integer(let value): number = Double(value)
            case .double(let value): number = value
            case .number(let spelling): number = Double(spelling) ?? .infinity
            default: throw wrong()
            }
            guard number.isFinite else { throw Problem("\(given.description.dropFirst("the number ".count)) is out of range: a double must be finite") }
            return .double(number)
        case .bool:
            guard case .bool(let flag) = given else { throw wrong() }
            return .bool(flag)
        case .string:
            guard case .string(let text) = given else { throw wrong() }
            let bytes = text.utf8
            if let nul = bytes.firstIndex(of: 0) {
                throw Problem("the string holds U+0000 (NUL) at byte \(bytes.distance(from: bytes.startIndex, to: nul)), which a C string cannot carry")
            }
            if bytes.count > ActionSignature.maxStringBytes {
                throw Problem("the string is \(bytes.count) bytes; at most \(ActionSignature.maxStringBytes) are allowed")
            }
            return .string(ActionString(bytes))
        case .message, .sink:
            // Not value parameters: the caller never gives them.
            throw wrong()
        }
    }

    /// The refusal of an integer outside its type's range.
    private static func outOfRange(_ spelling: String, _ type: ActionSignature.ParameterType) -> Problem {
        Problem("\(spelling) is out of range: \(type.rawValue) takes \(type.expectedArgument.dropFirst("an integer ".count))")
    }

    /// Whether a JSON number is written as an integer: an optional minus and digits.
    private static func isIntegerSpelling(_ spelling: String) -> Bool {
        let digits = spelling.utf8.drop { $0 == UInt8(ascii: "-") }
        return !digits.isEmpty && digits.count + 1 >= spelling.utf8.count && digits.allSatisfy { (0x30...0x39).contains($0) }
    }

    private static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
}

/// The old name of ``ActionArgumentChecker``.
@_spi(Benchmarks)
@available(*, deprecated, renamed: "ActionArgumentChecker")
public typealias ActionArguments = ActionArgumentChecker
