/// The rules for the data files a plugin declares (a `file` record of its metadata: missive_plugin.h,
/// "Metadata"): the files of its own it reads, such as a dictionary or a font, which a host that confines the
/// plugin lets it read and nothing else.
///
/// A declared path is relative to the folder of the plugin file and already in its one normal spelling, so
/// that it names exactly one file inside that folder whatever reads it:
/// - 1 to ``maxLength`` bytes of UTF-8, each component 1 to ``maxComponentLength`` bytes;
/// - not absolute (no leading `/`), no empty component (`//`, a trailing `/`), no `.` component (`./`) and no
///   `..` component, which would name a file outside the folder;
/// - no NUL and no other control character (U+0001–U+001F, U+007F).
///
/// A plugin declares at most ``maxCount`` files, each once. The metadata reader and the `#MissivePlugin`
/// macro apply these rules; `missive check` then checks that each file is there.
package enum DataFileGrammar {
    /// The most data files one plugin may declare.
    package static let maxCount = 64

    /// The longest declared path, in bytes.
    package static let maxLength = 1024

    /// The longest component of a declared path, in bytes (`NAME_MAX`).
    package static let maxComponentLength = 255

    /// Why `path` is not a valid data file declaration, or `nil` when it is. The reason does not repeat the
    /// path; the caller names it.
    package static func problem(_ path: String) -> String? {
        let bytes = Array(path.utf8)
        if bytes.isEmpty { return "the path is empty" }
        if bytes.count > maxLength { return "the path has \(bytes.count) bytes; at most \(maxLength) are allowed" }
        if bytes.contains(0) { return "the path holds a NUL byte" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "the path holds a control character" }
        if bytes[0] == UInt8(ascii: "/") { return "the path is absolute; name the file relative to the plugin's folder" }
        if bytes.last == UInt8(ascii: "/") { return "the path ends with '/'; a data file is a file, not a folder" }
        for component in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if component.isEmpty { return "the path has an empty component ('//'); write each '/' once" }
            if component.elementsEqual([UInt8(ascii: ".")]) { return "the path has a '.' component; write it without './'" }
            if component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                return "the path has a '..' component, which could name a file outside the plugin's folder"
            }
            if component.count > maxComponentLength {
                return "a component of the path has \(component.count) bytes; at most \(maxComponentLength) are allowed"
            }
        }
        return nil
    }

    /// Why the list `paths` is not a valid declaration, naming the first path at fault, or `nil` when every
    /// path is valid, none is declared twice and there are at most ``maxCount``.
    package static func problem(in paths: [String]) -> String? {
        if paths.count > maxCount { return "the plugin declares \(paths.count) data files; at most \(maxCount) are allowed" }
        var seen: Set<String> = []
        for path in paths {
            if let problem = problem(path) { return "data file \(quoted(path)): \(problem)" }
            if !seen.insert(path).inserted { return "data file \(quoted(path)): it is declared twice" }
        }
        return nil
    }

    /// `path` in double quotes, with a NUL and other control characters escaped, so that an error message
    /// shows it on one line as it was written.
    package static func quoted(_ path: String) -> String {
        var text = "\""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
