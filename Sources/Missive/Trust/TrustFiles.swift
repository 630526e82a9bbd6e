import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Every C call of signing and of the file-system checks: reading and writing the small key and signature
/// files, hashing a plugin file, and looking at files' owners, modes and links.
/// Glibc's `struct group`, which Swift cannot name as `group` beside the field names that use the word.
private typealias group_t = Glibc.group

enum TrustFiles {
    /// What `lstat` says about a path.
    struct Status {
        /// What kind of file it is.
        enum Kind { case regular, folder, symbolicLink, other }

        let kind: Kind
        /// The permission bits with the sticky bit (`st_mode & 0o7777`).
        let mode: mode_t
        /// The owner's user id.
        let owner: uid_t
        /// The group's id.
        let group: gid_t

        /// Whether its group may write to it (`S_IWGRP`), unless that group is the owner's private group
        /// (``TrustFiles/isPrivateGroup(_:of:)``), in which only the owner is.
        var groupWritable: Bool { mode & 0o020 != 0 && !TrustFiles.isPrivateGroup(group, of: owner) }
        /// Whether others may write to it (`S_IWOTH`).
        var othersWritable: Bool { mode & 0o002 != 0 }
        /// Whether its group or others may read it.
        var readableByOthers: Bool { mode & 0o044 != 0 }
        /// Whether a folder has the sticky bit (`S_ISVTX`): only an entry's owner may rename or remove it.
        var sticky: Bool { mode & 0o1000 != 0 }
        /// The mode as `ls` and `chmod` spell it, for example `0775` or `1777`.
        var octal: String {
            let digits = String(mode, radix: 8)
            return digits.count > 3 ? digits : "0" + String(repeating: "0", count: 3 - digits.count) + digits
        }
    }

    /// The status of `path` itself, not following a final symbolic link; the reason when there is none.
    static func status(_ path: String) -> Result<Status, TrustFileError> {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .failure(lastError()) }
        let kind: Status.Kind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .folder
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        return .success(Status(kind: kind, mode: info.st_mode & 0o7777, owner: info.st_uid, group: info.st_gid))
    }

    /// `path` with every symbolic link and `.` or `..` resolved (`realpath`), or `nil` when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// What the symbolic link at `path` points to, as written in it.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path`, made absolute against the current folder when it is relative.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The effective user id of this process (`geteuid`), the user the file-system checks trust.
    static var effectiveUser: uid_t { geteuid() }

    /// The name of user `id` (`getpwuid_r`), or `nil` when it has none.
    static func userName(_ id: uid_t) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(id, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }

    /// Whether `group` is the private group of the user `owner`, as Debian's and Ubuntu's user-private-group
    /// scheme makes one for each user: the user's primary group, of the same name, with no other member.
    /// Writing by such a group is writing by the owner alone.
    static func isPrivateGroup(_ group: gid_t, of owner: uid_t) -> Bool {
        var user = passwd()
        var userResult: UnsafeMutablePointer<passwd>?
        var userBuffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(owner, &user, &userBuffer, userBuffer.count, &userResult) == 0, userResult != nil, user.pw_gid == group,
              let userName = user.pw_name.map({ String(cString: $0) })
        else { return false }
        var entry = group_t()
        var groupResult: UnsafeMutablePointer<group_t>?
        var groupBuffer = [CChar](repeating: 0, count: 16384)
        guard getgrgid_r(group, &entry, &groupBuffer, groupBuffer.count, &groupResult) == 0, groupResult != nil,
              let groupName = entry.gr_name.map({ String(cString: $0) }), groupName == userName
        else { return false }
        var member = entry.gr_mem
        while let name = member?.pointee {
            if String(cString: name) != userName { return false }
            member = member?.advanced(by: 1)
        }
        return true
    }

    /// The SHA-256 of the file at `path`, read a megabyte at a time.
    static func sha256(ofFile path: String) -> Result<[UInt8], TrustFileError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(lastError()) }
        defer { close(descriptor) }
        var hasher = SHA256()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(lastError())
            }
            if count == 0 { return .success(Array(hasher.finalize())) }
            chunk.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }

    /// The SHA-256 of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    /// The bytes of the file at `path`, or the reason they cannot be read. Files larger than `limit` bytes
    /// are refused: key and signature files are a few hundred bytes.
    static func read(_ path: String, limit: Int = 65_536) -> Result<[UInt8], TrustFileError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(lastError()) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(lastError())
            }
            if count == 0 { return .success(bytes) }
            bytes += chunk[..<count]
            if bytes.count > limit { return .failure(TrustFileError("it is larger than \(limit) bytes")) }
        }
    }

    /// Whether anything (a file, a folder, a dangling symbolic link) is at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Creates `path` with exactly `mode` and writes `bytes` into it. Fails, writing nothing, when anything
    /// is at `path` already (`O_EXCL`, which also refuses a symbolic link there).
    static func create(_ path: String, _ bytes: [UInt8], mode: mode_t) -> TrustFileError? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { return lastError() }
        // The umask may have taken bits away; set exactly the mode wanted.
        let failure = fchmod(descriptor, mode) == 0 ? writeAll(descriptor, bytes) : lastError()
        close(descriptor)
        if failure != nil { unlink(path) }
        return failure
    }

    /// Writes `bytes` to `path` through a temporary file in the same folder renamed over it, so that a reader
    /// sees the old file or the new one, never half of one.
    static func replace(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) -> TrustFileError? {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".\(getpid()).partial"
        unlink(temporary)
        if let failure = create(temporary, bytes, mode: mode) { return failure }
        guard rename(temporary, path) == 0 else {
            let failure = lastError()
            unlink(temporary)
            return failure
        }
        return nil
    }

    /// Removes `path` if it exists; `false` when it exists and cannot be removed.
    @discardableResult
    static func remove(_ path: String) -> Bool {
        unlink(path) == 0 || errno == ENOENT
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> TrustFileError? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return lastError()
            }
            offset += written
        }
        return fsync(descriptor) == 0 ? nil : lastError()
    }

    /// `errno`'s text.
    private static func lastError() -> TrustFileError {
        TrustFileError(String(cString: strerror(errno)))
    }
}
