import Foundation
import GRDB
import Logging
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

    /// The files a message's envelope names: each 64-hex-digit hash that follows `/media/` in it (a media
    /// reference's `remoteURL`, or a link in any content).
    static func referencedHashes(in envelope: [UInt8]) -> Set<String> {
        let marker = Array("/media/".utf8)
        var found: Set<String> = []
        var index = 0
        while index + marker.count + 64 <= envelope.count {
            if envelope[index] == marker[0], Array(envelope[index..<(index + marker.count)]) == marker {
                let start = index + marker.count
                let candidate = envelope[start..<(start + 64)]
                let isEnd = start + 64 == envelope.count || !Self.isHexDigit(envelope[start + 64])
                if isEnd, candidate.allSatisfy(Self.isHexDigit) {
                    found.insert(String(decoding: candidate, as: UTF8.self).lowercased())
                }
                index = start
            } else {
                index += 1
            }
        }
        return found
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
        let outcome: (Deletion, orphaned: Bool)
        do {
            outcome = try await index.write { db in
                let uploaders = try String.fetchAll(db, sql: "SELECT uploader FROM upload WHERE conversation = ? AND sha256 = ?", arguments: [conversation, sha256])
                if uploaders.isEmpty { return (.notFound, false) }
                if !uploaders.contains(member) { return (.notYours, false) }
                try db.execute(sql: "DELETE FROM upload WHERE conversation = ? AND sha256 = ? AND uploader = ?", arguments: [conversation, sha256, member])
                if !uploaders.contains(where: { $0 != member }) {
                    try Self.tombstone(conversation, sha256, reason: "deleted by its uploader", db)
                }
                let left = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM upload WHERE sha256 = ?", arguments: [sha256]) ?? 0
                return (.deleted, left == 0)
            }
        } catch {
            throw MediaStorageError("\(indexPath): cannot delete the upload: \(error)")
        }
        if outcome.orphaned { unlink(path(of: sha256)) }
        return outcome.0
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
        let (removed, orphans): (Int, [String])
        do {
            (removed, orphans) = try await index.write { db in
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT conversation, sha256 FROM upload u WHERE uploaded_at < ?
                        AND NOT EXISTS (SELECT 1 FROM media_reference r WHERE r.conversation = u.conversation AND r.sha256 = u.sha256)
                        """, arguments: [cutoff])
                var removed = 0
                var hashes: Set<String> = []
                for row in rows {
                    let conversation: String = row[0]
                    let sha256: String = row[1]
                    try db.execute(sql: "DELETE FROM upload WHERE conversation = ? AND sha256 = ?", arguments: [conversation, sha256])
                    removed += db.changesCount
                    try Self.tombstone(conversation, sha256, reason: "no message named it", db)
                    hashes.insert(sha256)
                }
                let orphans = try hashes.filter { hash in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM upload WHERE sha256 = ?", arguments: [hash]) == 0 }
                return (removed, Array(orphans))
            }
        } catch {
            throw MediaStorageError("\(indexPath): cannot collect the unreferenced uploads: \(error)")
        }
        for hash in orphans { unlink(path(of: hash)) }
        return removed
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
