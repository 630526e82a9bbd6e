import Missive
import MissiveStore
import NIOCore
import PostgresNIO

/// Copying a store into another (`missive store migrate`), from or to PostgreSQL: the rows as they are, then the
/// memberships, then a recount. The copy writes nothing to the change feed.
extension PostgresMessageStore: MigratingStore {
    package func exportMessages(after sequence: Int64, limit: Int) async throws(StoreError) -> [(sequence: Int64, message: StoredMessage)] {
        let reader = self.reader
        return try await read { transaction in
            try await transaction.query(
                "SELECT \(unescaped: MessageColumns.selection), seq FROM message WHERE seq > \(sequence) ORDER BY seq LIMIT \(max(0, limit))"
            ).map { row in
                (try row.makeRandomAccess()[MessageColumns.count].decode(Int64.self), try MessageColumns.storedMessage(row, reader: reader))
            }
        }
    }

    package func exportMembers() async throws(StoreError) -> [MembershipRecord] {
        try await read { transaction in
            try await transaction.query(
                "SELECT conversation_id, member_id, active, read_sent_at, read_message_id FROM member ORDER BY conversation_id, member_id"
            ).map { row in
                let (conversationID, memberID, active, readSentAt, readMessageID) = try row.decode((String, String, Bool, Int64?, String?).self)
                return MembershipRecord(
                    conversationID: conversationID, memberID: memberID, active: active, readSentAt: readSentAt, readMessageID: readMessageID)
            }
        }
    }

    package func importMessages(_ messages: [StoredMessage], source: String, through sequence: Int64) async throws(StoreError) -> Int {
        let texts = messages.map { SearchQuery.indexedText(of: $0.searchableWords) }
        let tokens: [[String]]
        do {
            tokens = try SearchQuery.indexTokens(of: texts)
        } catch {
            throw StoreError(.database, "cannot tokenize the messages' words: \(error)", path: location)
        }
        var rows: [InsertMessage] = []
        for (index, message) in messages.enumerated() {
            rows.append(
                InsertMessage(
                    id: message.id, conversationID: message.conversationID, senderID: message.senderID, sentAt: message.sentAt,
                    objectName: message.objectName, businessID: message.businessID?.replacingNUL(with: "\u{FFFD}"), known: message.isKnown,
                    digest: message.digest.replacingNUL(with: "\u{FFFD}"), persistence: Int(message.persistence.rawValue),
                    counted: message.persistence == .counted, words: StoreRules.joinWords(message.searchableWords),
                    searchText: texts[index].replacingNUL(with: " "), search: MessageColumns.vector(tokens[index]), parentID: message.parentID,
                    rootID: message.threadRootID, rootPending: false, reason: message.reason?.replacingNUL(with: "\u{FFFD}"),
                    envelope: ByteBuffer(bytes: message.envelopeBytes)))
        }
        let sorted = rows.sorted { $0.id < $1.id }
        let conversations = Set(messages.map(\.conversationID)).sorted()
        let key = "migrated-from " + source
        return try await transaction { transaction in
            let inserted = try await Self.insertBatch(sorted, transaction).count
            for conversationID in conversations {
                try await transaction.query("INSERT INTO conversation(id) VALUES (\(conversationID)) ON CONFLICT DO NOTHING")
            }
            try await transaction.query(
                "INSERT INTO store_info(key, value) VALUES (\(key), \(String(sequence))) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            return inserted
        }
    }

    package func migrationProgress(source: String) async throws(StoreError) -> Int64 {
        let key = "migrated-from " + source
        return try await read { transaction in
            try await transaction.query("SELECT value FROM store_info WHERE key = \(key)").first.flatMap { Int64(try $0.decode(String.self)) } ?? 0
        }
    }

    package func finishImport(members: [MembershipRecord]) async throws(StoreError) {
        let members = members.sorted { ($0.conversationID, $0.memberID) < ($1.conversationID, $1.memberID) }
        try await transaction { transaction in
            for member in members {
                try await transaction.query("INSERT INTO conversation(id) VALUES (\(member.conversationID)) ON CONFLICT DO NOTHING")
                try await transaction.query(
                    """
                    INSERT INTO member (conversation_id, member_id, active, seen, read_sent_at, read_message_id)
                    VALUES (\(member.conversationID), \(member.memberID), \(member.active), 0, \(member.readSentAt), \(member.readMessageID))
                    ON CONFLICT (conversation_id, member_id) DO UPDATE SET active = excluded.active, seen = 0,
                        read_sent_at = excluded.read_sent_at, read_message_id = excluded.read_message_id
                    """)
            }
            try await Self.recount(transaction)
            // Reply counts and waiting replies from the rows.
            for statement in PostgresSchema.recountThreads { try await transaction.query(PostgresQuery(unsafeSQL: statement)) }
        }
    }
}
