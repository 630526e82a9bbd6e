import Foundation

/// The `DataFile` fixture (`Tests/Fixtures/BrokenPlugins/DataFile`), staged with the files it reads.
///
/// The plugin declares one data file, `DataFile/words.txt` beside the library. Its decode of
/// `{"file":"read","fixture":true}` reads that file and takes its first line for the digest (and fails with a
/// reason naming the file when it cannot read it); its decode of `{"file":"sibling","fixture":true}` tries
/// `DataFile/undeclared.txt`, next to it but not declared, and its digest says whether it could
/// (`undeclared file read: FIRST LINE` or `undeclared file not read: REASON`). Its example, `{"fixture":true}`,
/// reads no file.
package enum DataFileFixture {
    /// The declared path, as the plugin's metadata writes it.
    package static let declared = "DataFile/words.txt"
    /// The file next to it that the plugin does not declare.
    package static let undeclared = "DataFile/undeclared.txt"
    /// The content that makes decode read the declared file.
    package static let readContent = #"{"file":"read","fixture":true}"#
    /// The content that makes decode try the undeclared file.
    package static let siblingContent = #"{"file":"sibling","fixture":true}"#
    /// The fixture's objectName.
    package static let objectName = "fixture:datafile"

    /// Stages `libDataFile.so` in a new folder with `words` as its declared file and `undeclared` as the file
    /// next to it (each left out when `nil`); returns the library's path.
    package static func stage(words: String? = "first line of the words\nsecond line\n", undeclared: String? = nil) throws -> String {
        let folder = try Fixtures.stage(["DataFile"])
        try FileManager.default.createDirectory(atPath: folder + "/DataFile", withIntermediateDirectories: true)
        if let words { try words.write(toFile: folder + "/" + declared, atomically: true, encoding: .utf8) }
        if let undeclared { try undeclared.write(toFile: folder + "/" + Self.undeclared, atomically: true, encoding: .utf8) }
        return folder + "/libDataFile.so"
    }
}
