import Crypto
import Foundation
import GRDB
import Hummingbird
import NIOCore

/// The files members uploaded, and the index of which conversation each was uploaded to.
///
/// A file is kept once, under the SHA-256 of its bytes: `media/ab/cd/<sha256>` in the data folder, mode 0600. An
/// upload is written to `media/tmp` first, hashed as it arrives, and renamed into place when it is whole and its
/// type checked, so a file under its hash is always complete. The index (`media.sqlite`) records each upload
/// (conversation, hash, type, size, uploader, name, time); a download is served only for a conversation the file
/// was uploaded to.
struct MediaLibrary: Sendable {
    /// The folder of the files.
    let directory: String
    let index: DatabaseQueue
    let indexPath: String

    /// One upload as the index keeps it.
    struct Entry: Sendable, Hashable {
        var sha256: String
        /// The type the file is served with in this conversation: the one its first upload there was stored as.
        var mimeType: String
        var size: Int64
        var name: String?
    }

    /// An upload received whole in the temporary folder, not yet in place.
    struct Received: Sendable {
        var temporaryPath: String
        var sha256: String
        var size: Int64
        var head: [UInt8]
    }

    /// Opens the index at `indexPath` (made 0600 before SQLite opens it) and the folder `directory` (0700), and
    /// removes what uploads cut short left in `directory/tmp` more than an hour ago.
    init(directory: String, indexPath: String) throws(AccountError) {
        self.directory = directory
        self.indexPath = indexPath
        do {
            for folder in [directory, directory + "/tmp"] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                guard chmod(folder, 0o700) == 0 else { throw Self.failure("\(folder): cannot make it private: \(String(cString: strerror(errno)))") }
            }
            let descriptor = open(indexPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw Self.failure("\(indexPath): cannot make the media index: \(String(cString: strerror(errno)))") }
            close(descriptor)
            guard chmod(indexPath, 0o600) == 0 else { throw Self.failure("\(indexPath): cannot make it private: \(String(cString: strerror(errno)))") }
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            index = try DatabaseQueue(path: indexPath, configuration: configuration)
            if let refusal = try ServerSchema.upgrade(index, with: ServerSchema.media, what: indexPath) {
                throw Self.failure(refusal.message)
            }
        } catch let error as AccountError {
            throw error
        } catch {
            throw Self.failure("\(indexPath): cannot open the media index: \(error)")
        }
        removeStaleUploads(olderThan: 3600)
    }

    /// Where the file of `sha256` is kept.
    func path(of sha256: String) -> String {
        let characters = Array(sha256)
        return "\(directory)/\(String(characters[0..<2]))/\(String(characters[2..<4]))/\(sha256)"
    }

    /// Whether `text` can be a file's hash in a path: 64 lowercase hexadecimal digits.
    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    // MARK: Uploading

    /// Writes `body` to a new file in `directory/tmp` a chunk at a time, hashing it as it comes; at most `limit`
    /// bytes. On any failure the file is removed.
    ///
    /// - Throws: ``APIError`` `too-large` (413) past `limit`, `empty-upload` (400) for no bytes at all; the
    ///   body's own error when the client goes away.
    func receive(_ body: RequestBody, limit: Int) async throws -> Received {
        let path = "\(directory)/tmp/\(UUID().uuidString.lowercased())"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw MediaStorageError("\(path): cannot make a temporary file: \(String(cString: strerror(errno)))") }
        var hasher = SHA256()
        var size: Int64 = 0
        var head: [UInt8] = []
        do {
            for try await buffer in body {
                size += Int64(buffer.readableBytes)
                guard size <= Int64(limit) else {
                    throw APIError(status: .contentTooLarge, code: "too-large", message: "the upload is over \(limit) bytes, the most the server takes")
                }
                try buffer.withUnsafeReadableBytes { bytes in
                    hasher.update(bufferPointer: bytes)
                    if head.count < MediaSniffing.headLength { head.append(contentsOf: bytes.prefix(MediaSniffing.headLength - head.count)) }
                    try Self.writeAll(bytes, to: descriptor, path: path)
                }
            }
            guard size > 0 else { throw APIError.badRequest("empty-upload", "the upload has no bytes") }
            guard fsync(descriptor) == 0 else { throw MediaStorageError("\(path): cannot write: \(String(cString: strerror(errno)))") }
        } catch {
            close(descriptor)
            unlink(path)
            throw error
        }
        close(descriptor)
        let sha256 = hasher.finalize().map { byte in String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16) }.joined()
        return Received(temporaryPath: path, sha256: sha256, size: size, head: head)
    }

    /// Moves a received file to its place under its hash (keeping the one there, the same bytes, if there is one),
    /// and records the upload. Returns what the index keeps for the file in `conversation`: the type of the first
    /// upload of these bytes there.
    ///
    /// - Throws: ``MediaStorageError`` when the file cannot be moved or the upload recorded.
    func store(
        _ received: Received, mimeType: String, conversation: String, uploader: String, name: String?, quota: (bytes: Int64, files: Int)? = nil
    ) async throws -> Entry {
        let target = path(of: received.sha256)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            // One write transaction: the quota, the file put in place and the upload recorded, so that neither a
            // deletion nor a collection of the same bytes (which remove files in theirs) comes in between, and
            // uploads at once cannot all pass the quota.
            return try await index.write { db in
                if let quota {
                    let row = try Row.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0), COUNT(*) FROM upload WHERE uploader = ?", arguments: [uploader])
                    let bytes: Int64 = row?[0] ?? 0
                    let files: Int = row?[1] ?? 0
                    if files >= quota.files || bytes + received.size > quota.bytes { throw QuotaExceeded(bytes: bytes, files: files) }
                }
                let folder = (target as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                // Atomic: a reader sees no file or the whole one; the same bytes moved over the same bytes change nothing.
                guard rename(received.temporaryPath, target) == 0 else {
                    throw MediaStorageError("\(target): cannot move the upload into place: \(String(cString: strerror(errno)))")
                }
                try db.execute(
                    sql: "INSERT INTO upload(conversation, sha256, mime_type, size, uploader, name, uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [conversation, received.sha256, mimeType, received.size, uploader, name, now])
                try Self.clearTombstone(conversation, received.sha256, db)
                return try Self.first(conversation, received.sha256, db) ?? Entry(sha256: received.sha256, mimeType: mimeType, size: received.size, name: name)
            }
        } catch let error as QuotaExceeded {
            unlink(received.temporaryPath)
            throw error
        } catch let error as MediaStorageError {
            unlink(received.temporaryPath)
            throw error
        } catch {
            unlink(received.temporaryPath)
            throw MediaStorageError("\(indexPath): cannot record the upload: \(error)")
        }
    }

    /// An upload that would take its member over the quota: what the member has.
    struct QuotaExceeded: Error {
        let bytes: Int64
        let files: Int
    }

    // MARK: Downloading

    /// The file `sha256` as uploaded to `conversation`; `nil` when it never was.
    func entry(conversation: String, sha256: String) async throws(MediaStorageError) -> Entry? {
        do {
            return try await index.read { db in try Self.first(conversation, sha256, db) }
        } catch {
            throw MediaStorageError("\(indexPath): cannot read the index: \(error)")
        }
    }

    // MARK: Private

    private static func first(_ conversation: String, _ sha256: String, _ db: Database) throws -> Entry? {
        try Row.fetchOne(
            db, sql: "SELECT mime_type, size, name FROM upload WHERE conversation = ? AND sha256 = ? ORDER BY id LIMIT 1",
            arguments: [conversation, sha256]
        ).map { Entry(sha256: sha256, mimeType: $0[0], size: $0[1], name: $0[2]) }
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw MediaStorageError("\(path): cannot write: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    private func removeStaleUploads(olderThan seconds: TimeInterval) {
        let folder = directory + "/tmp"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let cutoff = Date().addingTimeInterval(-seconds)
        for name in names {
            let path = folder + "/" + name
            if let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date, modified < cutoff {
                unlink(path)
            }
        }
    }

    private static func failure(_ message: String) -> AccountError {
        AccountError(.cannotOpen, message)
    }
}

/// A file of the media folder that cannot be written or moved: answered `503` (`media-unavailable`) and logged.
struct MediaStorageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
