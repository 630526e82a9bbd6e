import Foundation
import GRDB
import Logging
import MissiveCore
import ServiceLifecycle

// Media has an owner and a lifecycle: each member's uploads count against a quota, an uploader may delete its
// upload, a file no stored message names is collected after a grace period, and a file deleted either way answers
// `410 media-deleted` in the conversation it was in, so that a message that showed it can say it is gone.

extension MediaLibrary {
    /// What one member has uploaded: bytes and files, every upload counted (the same bytes twice count twice).
    func usage(of member: String) async throws(MediaStorageError) -> (bytes: Int64, files: Int) {
        do {
            return try await index.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0), COUNT(*) FROM upload WHERE uploader = ?", arguments: [member])
                return (row?[0] ?? 0, row?[1] ?? 0)
            }
        } catch {
            throw MediaStorageError("\(indexPath): cannot read the index: \(error)")
        }
    }

    /// Records that the stored message `messageID` of `conversation` names the files `hashes`, so that they are not
    /// collected.
    func recordReferences(_ hashes: Set<String>, conversation: String, messageID: String) async throws(MediaStorageError) {
        guard !hashes.isEmpty else { return }
        do {
            try await index.write { db in
                for hash in hashes {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO media_reference(conversation, sha256, message_id) VALUES (?, ?, ?)",
                        arguments: [conversation, hash, messageID])
                }
            }
        } catch {
            throw MediaStorageError("\(indexPath): cannot record the messages that name a file: \(error)")
        }
    }

    /// The files a message's envelope names: each 64-hex-digit hash that follows `/media/` in one of its strings,
    /// once JSON escapes are resolved (a media reference's `remoteURL`, or a link in any content, written with `/`,
    /// `\\/` or `\\u002f`). An envelope that is not JSON names none.
    static func referencedHashes(in envelope: [UInt8]) -> Set<String> {
        guard let value = JSONValue(envelope) else { return [] }
        var found: Set<String> = []
        func visit(_ value: JSONValue) {
            switch value {
            case .string(let text):
                guard text.contains("/media/") else { return }
                for part in text.components(separatedBy: "/media/").dropFirst() {
                    let candidate = part.utf8.prefix(64)
                    let next = part.utf8.dropFirst(64).first
                    if candidate.count == 64, candidate.allSatisfy(MediaLibrary.isHexDigit), next.map({ !MediaLibrary.isHexDigit($0) }) ?? true {
                        found.insert(String(decoding: candidate, as: UTF8.self).lowercased())
                    }
                }
            case .array(let items): items.forEach(visit)
            case .object(let members): members.forEach { visit($0.value) }
            case .null, .bool, .number: break
            }
        }
        visit(value)
        return found
    }

    /// Whether `bytes` hold `media`, without which no reference can be in them as written (escapes aside).
    static func mayName(_ bytes: [UInt8]) -> Bool {
        let word = Array("media".utf8)
        guard bytes.count >= word.count else { return false }
        var index = bytes.startIndex
        while let found = bytes[index...].firstIndex(of: word[0]), found + word.count <= bytes.endIndex {
            if bytes[found..<(found + word.count)].elementsEqual(word) { return true }
            index = found + 1
        }
        return false
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
    }

    /// What became of a deletion.
    enum Deletion: Sendable, Equatable {
        /// The member's uploads of the file in the conversation are gone (and the file, when no other conversation
        /// has it).
        case deleted
        /// The file was uploaded to the conversation by other members only.
        case notYours
        /// No upload of the file in the conversation.
        case notFound
    }

    /// Deletes `member`'s uploads of `sha256` in `conversation`. When no upload of it is left there, the file answers
    /// `410` in that conversation from then on; when none is left anywhere, its bytes are removed.
    func delete(conversation: String, sha256: String, by member: String) async throws(MediaStorageError) -> Deletion {
        do {
            return try await index.write { db in
                let uploaders = try String.fetchAll(db, sql: "SELECT uploader FROM upload WHERE conversation = ? AND sha256 = ?", arguments: [conversation, sha256])
                if uploaders.isEmpty { return .notFound }
                if !uploaders.contains(member) { return .notYours }
                try db.execute(sql: "DELETE FROM upload WHERE conversation = ? AND sha256 = ? AND uploader = ?", arguments: [conversation, sha256, member])
                if !uploaders.contains(where: { $0 != member }) {
                    try Self.tombstone(conversation, sha256, reason: "deleted by its uploader", db)
                }
                try removeIfOrphaned(sha256, db)
                return .deleted
            }
        } catch {
            throw MediaStorageError("\(indexPath): cannot delete the upload: \(error)")
        }
    }

    /// Why the file `sha256` of `conversation` is gone, when it was deleted or collected; `nil` otherwise.
    func goneReason(conversation: String, sha256: String) async throws(MediaStorageError) -> String? {
        do {
            return try await index.read { db in
                try String.fetchOne(db, sql: "SELECT reason FROM deleted_upload WHERE conversation = ? AND sha256 = ?", arguments: [conversation, sha256])
            }
        } catch {
            throw MediaStorageError("\(indexPath): cannot read the index: \(error)")
        }
    }

    /// Removes the uploads made before `cutoff` (milliseconds since 1970) that no stored message of their
    /// conversation names, and the bytes of files left with no upload. Returns how many uploads went.
    func collectUnreferenced(uploadedBefore cutoff: Int64) async throws(MediaStorageError) -> Int {
        do {
            return try await index.write { db in
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT conversation, sha256 FROM upload u WHERE uploaded_at < ?
                        AND NOT EXISTS (SELECT 1 FROM media_reference r WHERE r.conversation = u.conversation AND r.sha256 = u.sha256)
                        """, arguments: [cutoff])
                var removed = 0
                for row in rows {
                    let conversation: String = row[0]
                    let sha256: String = row[1]
                    // Only the uploads past the grace period: the same bytes uploaded again since have their own.
                    try db.execute(
                        sql: "DELETE FROM upload WHERE conversation = ? AND sha256 = ? AND uploaded_at < ?", arguments: [conversation, sha256, cutoff])
                    removed += db.changesCount
                    let left = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM upload WHERE conversation = ? AND sha256 = ?", arguments: [conversation, sha256]) ?? 0
                    if left == 0 { try Self.tombstone(conversation, sha256, reason: "no message named it", db) }
                    try removeIfOrphaned(sha256, db)
                }
                return removed
            }
        } catch {
            throw MediaStorageError("\(indexPath): cannot collect the unreferenced uploads: \(error)")
        }
    }

    /// Removes the bytes of `sha256` when no upload of them is left, inside the index's write transaction, so that an
    /// upload of the same bytes (which moves its file into place in its own write transaction) never loses its file.
    private func removeIfOrphaned(_ sha256: String, _ db: Database) throws {
        let left = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM upload WHERE sha256 = ?", arguments: [sha256]) ?? 0
        if left == 0 { unlink(path(of: sha256)) }
    }

    /// Clears a tombstone when the same bytes are uploaded to the conversation again.
    static func clearTombstone(_ conversation: String, _ sha256: String, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM deleted_upload WHERE conversation = ? AND sha256 = ?", arguments: [conversation, sha256])
    }

    private static func tombstone(_ conversation: String, _ sha256: String, reason: String, _ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO deleted_upload(conversation, sha256, deleted_at, reason) VALUES (?, ?, ?, ?)",
            arguments: [conversation, sha256, Int64(Date().timeIntervalSince1970 * 1000), reason])
    }
}

/// Collects, now and then, the uploads no stored message named within the grace period
/// (``ServerLimits/unreferencedMediaGrace``).
struct MediaCollectionService: Service {
    let media: MediaLibrary
    let grace: Duration
    let logger: Logger

    func run() async throws {
        // Every quarter of the grace period, at most every hour, and at least every minute.
        let interval = max(.seconds(60), min(grace / 4, .seconds(3600)))
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await collectOnce()
            do {
                try await gracefulShutdown(sleeping: interval)
            } catch {
                return
            }
        }
    }

    /// One collection: the uploads older than the grace period that no message names.
    func collectOnce() async {
        let cutoff = Int64(Date().timeIntervalSince1970 * 1000) - Int64(grace.components.seconds * 1000)
        do {
            let removed = try await media.collectUnreferenced(uploadedBefore: cutoff)
            if removed > 0 { logger.info("media: removed \(removed) uploads no message named within \(grace)") }
        } catch {
            logger.error("media: \(error)")
        }
    }
}

/// Sleeps `duration`, or less when the service group stops gracefully (then throws).
private func gracefulShutdown(sleeping duration: Duration) async throws {
    try await cancelWhenGracefulShutdown {
        try await Task.sleep(for: duration)
    }
}
