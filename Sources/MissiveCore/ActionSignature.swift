/// What an action is for: acting on a message, or creating one from a composer's menu.
public enum ActionKind: String, Sendable, Hashable, CaseIterable {
    /// Acts on a message of one type (`MISSIVE_ACTION_MESSAGE`): a vote, opening a link.
    case message
    /// Creates new content of a type (`MISSIVE_ACTION_COMPOSER`): a composer's "more" item.
    case composer
}

/// What a message action gives back.
public enum ActionYield: String, Sendable, Hashable, CaseIterable {
    /// New content for the same message (`MISSIVE_YIELDS_CONTENT`); composer actions always yield content.
    case content
    /// A URL to open (`MISSIVE_YIELDS_URL`): http or https.
    case url
}

/// The C signature of a plugin action, in the grammar of `missive_plugin.h` ("The actions extension"):
/// `int32(message poll, int32 option, string voter, sink out)`.
///
/// The host calls an action's function through libffi by this signature, after checking the caller's
/// arguments against its value parameters (the ones of types `int32` to `string`, in order).
public struct ActionSignature: Sendable, Hashable, CustomStringConvertible {
    /// The type of one parameter, and the C type the function receives.
    public enum ParameterType: String, Sendable, Hashable, CaseIterable {
        /// `int32_t`: a JSON integer from -2^31 to 2^31 - 1.
        case int32
        /// `int64_t`: a JSON integer from -2^63 to 2^63 - 1.
        case int64
        /// `double`: a finite JSON number.
        case double
        /// `bool` from `<stdbool.h>`: `true` or `false`.
        case bool
        /// `const char *`: NUL-terminated UTF-8 without a NUL inside, never NULL.
        case string
        /// `const missive_message *`: the message a message action acts on. Not an argument.
        case message
        /// `const missive_sink *`: where the function writes its result. Not an argument.
        case sink

        /// Whether the caller gives a value for it (every type but `message` and `sink`).
        public var isValue: Bool { self != .message && self != .sink }

        /// The C parameter type, as a function declares it: `int32_t`, `const char *`, ...
        public var cType: String {
            switch self {
            case .int32: "int32_t"
            case .int64: "int64_t"
            case .double: "double"
            case .bool: "bool"
            case .string: "const char *"
            case .message: "const missive_message *"
            case .sink: "const missive_sink *"
            }
        }

        /// The JSON value an argument of this type takes, in words.
        public var expectedArgument: String {
            switch self {
            case .int32: "an integer from -2147483648 to 2147483647"
            case .int64: "an integer from -9223372036854775808 to 9223372036854775807"
            case .double: "a finite number"
            case .bool: "true or false"
            case .string: "a string"
            case .message, .sink: "no argument"
            }
        }
    }

    /// One parameter: its type and its name.
    public struct Parameter: Sendable, Hashable, CustomStringConvertible {
        /// The type.
        public let type: ParameterType
        /// The name: 1 to 32 of `a-z 0-9 _`, starting with a letter or `_`.
        public let name: String

        /// Creates a parameter.
        public init(_ type: ParameterType, _ name: String) {
            self.type = type
            self.name = name
        }

        /// `int32 option`.
        public var description: String { "\(type.rawValue) \(name)" }
    }

    /// Why a text is not a signature in the grammar.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, in one line.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The longest string argument, in bytes (`MISSIVE_ACTION_STRING_MAX`).
    public static let maxStringBytes = 1_048_576
    /// The most value parameters a signature may have (`MISSIVE_ACTION_MAX_VALUES`).
    public static let maxValueParameters = 16
    /// The longest parameter name.
    public static let maxNameLength = 32

    /// Every parameter, in order.
    public let parameters: [Parameter]

    /// The parameters the caller gives arguments for, in order.
    public var valueParameters: [Parameter] { parameters.filter(\.type.isValue) }

    /// Whether the function takes the message acted on.
    public var takesMessage: Bool { parameters.contains { $0.type == .message } }

    /// The signature in its canonical spelling: `int32(message poll, int32 option, sink out)`.
    public var description: String { "int32(" + parameters.map(\.description).joined(separator: ", ") + ")" }

    /// A signature of these parameters. Use ``problem(for:)`` to check it fits an action.
    public init(_ parameters: [Parameter]) {
        self.parameters = parameters
    }

    /// Parses a signature: `int32`, `(`, parameters `type name` separated by commas, `)`, with spaces or
    /// tabs between tokens.
    ///
    /// - Throws: ``Problem`` when the text breaks the grammar: another return type, a type outside the
    ///   grammar, a missing or invalid name, a name used twice.
    public init(parsing text: String) throws(Problem) {
        var tokens = Tokens(text)
        guard tokens.word() == "int32" else {
            throw Problem("a signature starts with its return type, int32, as in int32(message poll, sink out)")
        }
        guard tokens.take("(") else { throw Problem("expected '(' after int32") }
        var parameters: [Parameter] = []
        if !tokens.take(")") {
            while true {
                guard let word = tokens.word() else { throw Problem("expected a parameter type after '\(parameters.last.map { "\($0)," } ?? "(")'") }
                guard let type = ParameterType(rawValue: word) else {
                    throw Problem("parameter \(parameters.count + 1) has the type '\(word)', which is not one of "
                        + ParameterType.allCases.map(\.rawValue).joined(separator: ", "))
                }
                guard let name = tokens.word() else { throw Problem("parameter \(parameters.count + 1) (\(word)) has no name") }
                if let problem = Self.nameProblem(name) { throw Problem("parameter \(parameters.count + 1): \(problem)") }
                if parameters.contains(where: { $0.name == name }) { throw Problem("the name '\(name)' is used twice") }
                parameters.append(Parameter(type, name))
                if tokens.take(",") { continue }
                guard tokens.take(")") else { throw Problem("expected ',' or ')' after '\(parameters.last!)'") }
                break
            }
        }
        guard tokens.atEnd else { throw Problem("unexpected text after ')'") }
        self.parameters = parameters
    }

    /// Why this signature does not fit an action of `kind`, or `nil`: a message action takes exactly one
    /// message and one sink, a composer action one sink and no message, and neither more than
    /// ``maxValueParameters`` values.
    public func problem(for kind: ActionKind) -> String? {
        let messages = parameters.filter { $0.type == .message }.count
        let sinks = parameters.filter { $0.type == .sink }.count
        if sinks != 1 { return "the signature needs exactly one sink parameter for the result; it has \(sinks)" }
        switch kind {
        case .message where messages != 1:
            return "a message action's signature needs exactly one message parameter; it has \(messages)"
        case .composer where messages != 0:
            return "a composer action creates a message, so its signature takes no message parameter"
        default: break
        }
        let values = valueParameters.count
        if values > Self.maxValueParameters {
            return "the signature has \(values) value parameters; at most \(Self.maxValueParameters) are allowed"
        }
        return nil
    }

    /// Why `name` is not a parameter name (1 to 32 of `a-z 0-9 _`, starting with a letter or `_`), or `nil`.
    public static func nameProblem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { return "a name is empty" }
        if bytes.count > maxNameLength { return "the name '\(name)' is longer than \(maxNameLength) characters" }
        func isLower(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard isLower(first) || first == UInt8(ascii: "_") else { return "the name '\(name)' must start with a-z or _" }
        guard bytes.allSatisfy({ isLower($0) || isDigit($0) || $0 == UInt8(ascii: "_") }) else {
            return "the name '\(name)' may hold only a-z, 0-9 and _"
        }
        return nil
    }

    /// The tokens of a signature: words of letters, digits and `_`, and single punctuation characters.
    private struct Tokens {
        private let bytes: [UInt8]
        private var index = 0

        init(_ text: String) { bytes = Array(text.utf8) }

        var atEnd: Bool {
            mutating get {
                skipSpace()
                return index == bytes.count
            }
        }

        private mutating func skipSpace() {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        }

        /// The next word, or `nil` when the next token is not one.
        mutating func word() -> String? {
            skipSpace()
            let start = index
            while index < bytes.count, bytes[index].isASCIIAlphanumeric || bytes[index] == UInt8(ascii: "_") { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// Takes `character` when it comes next.
        mutating func take(_ character: Character) -> Bool {
            skipSpace()
            guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }
    }
}

extension NameGrammar {
    /// The longest action id, icon name and title (in code points).
    public static let maxActionFieldLength = 64

    /// Why `id` is not an action id (1 to 64 of `A-Z a-z 0-9 . _ -`), or `nil`.
    public static func actionIDProblem(_ id: String) -> String? {
        tokenProblem(id, what: "action id")
    }

    /// Why `icon` is not an icon name (1 to 64 of `A-Z a-z 0-9 . _ -`), or `nil`.
    public static func actionIconProblem(_ icon: String) -> String? {
        tokenProblem(icon, what: "icon name")
    }

    /// Why `title` cannot be an action's title, or `nil`: one line of 1 to 64 code points, none of them one
    /// that ``TextHygiene`` removes, and not only spaces.
    public static func actionTitleProblem(_ title: String) -> String? {
        let count = title.unicodeScalars.count
        if count == 0 || title.allSatisfy({ $0 == " " }) { return "the title is empty" }
        if count > maxActionFieldLength { return "the title has \(count) code points; at most \(maxActionFieldLength) are allowed" }
        if let scalar = title.unicodeScalars.first(where: TextHygiene.isUnsafe) {
            return "the title holds U+\(String(scalar.value, radix: 16, uppercase: true)), a control, line break or bidi control"
        }
        return nil
    }

    private static func tokenProblem(_ text: String, what: String) -> String? {
        let bytes = text.utf8
        if bytes.isEmpty { return "the \(what) is empty" }
        if bytes.count > maxActionFieldLength { return "the \(what) '\(text)' is longer than \(maxActionFieldLength) characters" }
        guard bytes.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }) else {
            return "the \(what) '\(text)' may hold only ASCII letters, digits, '.', '_' and '-'"
        }
        return nil
    }
}
