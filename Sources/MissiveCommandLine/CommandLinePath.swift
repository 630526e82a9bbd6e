import Foundation

/// Paths given on the command line, made absolute while the arguments are parsed: before any plugin code
/// runs, so that a plugin that changes the working directory (in its initialisers, its entry or a thread
/// of its own) cannot move where a command reads or writes. `-` (standard input or output) stays as it is.
package enum CommandLinePath {
    /// `argument` joined to the working directory when it is relative; `-` and absolute paths unchanged.
    package static func resolve(_ argument: String) -> String {
        guard !argument.isEmpty, argument != "-", !argument.hasPrefix("/") else { return argument }
        guard let directory = workingDirectory else { return argument }
        var relative = Substring(argument)
        while relative.hasPrefix("./") { relative = relative.dropFirst(2).drop { $0 == "/" } }
        if relative.isEmpty || relative == "." { return directory }
        return directory == "/" ? "/" + relative : directory + "/" + relative
    }

    /// The working directory when the process started parsing its arguments, or `nil` when it has none
    /// (removed while the process ran): then paths stay relative.
    private static let workingDirectory: String? = {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
