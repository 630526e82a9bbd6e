#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whole-file reads, atomic whole-file writes and whole writes to a descriptor, with POSIX calls.
package enum FileBytes {
    /// Writes all of `bytes` to `descriptor`, retrying short and interrupted writes; the `errno` of the write
    /// that failed, or `nil` when everything was written.
    package static func writeAll(_ bytes: some Collection<UInt8>, to descriptor: Int32) -> Int32? {
        let written = bytes.withContiguousStorageIfAvailable { writeAll($0, to: descriptor) }
        return written ?? Array(bytes).withUnsafeBufferPointer { writeAll($0, to: descriptor) }
    }

    private static func writeAll(_ buffer: UnsafeBufferPointer<UInt8>, to descriptor: Int32) -> Int32? {
        var done = 0
        while done < buffer.count {
            let wrote = Glibc.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
            if wrote < 0 {
                if errno == EINTR { continue }
                return errno
            }
            // A write of nothing would repeat for ever.
            guard wrote > 0 else { return EIO }
            done += wrote
        }
        return nil
    }

    /// The bytes of the regular file at `path` (one `open`, one `fstat`, one `read` for a file that does not
    /// change meanwhile), or `nil` when it is missing, unreadable or larger than `limit`.
    package static func read(_ path: String, limit: Int) -> [UInt8]? {
        guard let file = OwnedDescriptor(opening: path, flags: O_RDONLY) else { return nil }
        var info = stat()
        guard fstat(file.raw, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= limit else { return nil }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(file.raw, $0.baseAddress! + done, size - done) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }

    /// The bytes of the file at `path` read until its end, at most `limit`: for the files of `/proc`, whose size
    /// `fstat` reports as 0. `nil` when it is missing or unreadable.
    package static func readToEnd(_ path: String, limit: Int) -> [UInt8]? {
        guard let file = OwnedDescriptor(opening: path, flags: O_RDONLY) else { return nil }
        var bytes = [UInt8](repeating: 0, count: limit)
        var done = 0
        while done < limit {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(file.raw, $0.baseAddress! + done, limit - done) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { return nil }
            if got == 0 { break }
            done += got
        }
        bytes.removeLast(limit - done)
        return bytes
    }

    /// Replaces the file at `path` with `bytes` atomically: they go to a new temporary file beside it, which
    /// is then renamed over it, so a reader sees the old file or the new one, whole. Several processes may
    /// write at once; the last rename wins. Returns whether it worked.
    @discardableResult
    package static func replace(_ path: String, with bytes: [UInt8]) -> Bool {
        let temporary = "\(path).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        guard let file = OwnedDescriptor(opening: temporary, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o644) else { return false }
        guard writeAll(bytes, to: file.raw) == nil else {
            unlink(temporary)
            return false
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }
}

/// A file descriptor this value owns: it is closed exactly once, when the value ends.
struct OwnedDescriptor: ~Copyable {
    /// The descriptor; valid while the value lives.
    let raw: Int32

    /// Opens `path` with `flags` (plus `O_CLOEXEC`); `nil` when `open` fails (`errno` says why).
    init?(opening path: String, flags: Int32, mode: mode_t = 0) {
        let raw = open(path, flags | O_CLOEXEC, mode)
        guard raw >= 0 else { return nil }
        self.raw = raw
    }

    deinit { close(raw) }
}
