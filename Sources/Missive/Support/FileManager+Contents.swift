import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension FileManager {
    /// The bytes of the file at `path`, as `contents(atPath:)` gives them, or `nil` when it cannot be read; an
    /// empty regular file gives empty data without being read.
    ///
    /// Foundation (Swift 6.3.1) loses a 4 KiB buffer each time `contents(atPath:)` reads an empty file, and
    /// Missive reads empty files often: the crash journal, until a plugin crashes; a child's result file, when
    /// it died first. LeakSanitizer reports each lost buffer, so that every process of a host run under
    /// AddressSanitizer would end with a leak report (docs/SANITIZERS.md).
    package func contentsOfFile(atPath path: String) -> Data? {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == 0 {
            return Data()
        }
        return contents(atPath: path)
    }
}
