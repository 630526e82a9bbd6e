import Crypto
import Foundation
import GRDB

/// The server's members and their access tokens, in a SQLite file of their own (`accounts.sqlite` in the
/// server's data folder).
///
/// A token is 32 random bytes from the system's cryptographic generator, written as `msv_` and 43 characters of
/// base64url. It is shown once, when it is made; the file keeps only its SHA-256, so a copy of the file lets no one
/// sign in. Each request looks its token up again, so a token revoked from another process (`missive serve users
/// revoke`) stops working at once.
public struct ServerAccounts: Sendable {
    let database: DatabaseQueue
    /// The file the accounts are in.
    public let path: String

    /// Opens the accounts at `path`, making the file (and its folder) when it does not exist.
    ///
    /// - Throws: ``AccountError`` (`cannot-open`) with the path and the reason.
    public init(path: String) throws(AccountError) {
        self.path = path
        do {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Made 0600 before SQLite opens it, so that it is never readable by others, even for a moment.
            let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw AccountError(.cannotOpen, "\(path): cannot make the accounts file: \(String(cString: strerror(errno)))") }
            close(descriptor)
            guard chmod(path, 0o600) == 0 else { throw AccountError(.cannotOpen, "\(path): cannot make it private: \(String(cString: strerror(errno)))") }
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            database = try DatabaseQueue(path: path, configuration: configuration)
            if let refusal = try ServerSchema.upgrade(database, with: ServerSchema.accounts, what: path) {
                throw AccountError(.cannotOpen, refusal.message)
            }
        } catch let error as AccountError {
            throw error
        } catch {
            throw AccountError(.cannotOpen, "\(path): cannot open the accounts: \(error)")
        }
    }

    /// Makes the account `member` and its first token, which is returned and never shown again.
    ///
    /// - Throws: ``AccountError`` `invalid-name` for a name outside ``isValidMember(_:)``, `exists` for a
    ///   member that has an account.
    public func add(member: String) throws(AccountError) -> String {
        guard Self.isValidMember(member) else { throw Self.invalidName(member) }
        let token = Self.newToken()
        try write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE member = ?", arguments: [member]) == nil else {
                throw AccountError(.exists, "\(member) has an account already; `missive serve users token \(member)` gives it another token")
            }
            try db.execute(sql: "INSERT INTO account(member, created_at) VALUES (?, ?)", arguments: [member, Self.now()])
            try Self.insert(token, member: member, db)
        }
        return token
    }

    /// Makes another token for `member`, which is returned and never shown again; its other tokens keep working.
    ///
    /// - Throws: ``AccountError`` `no-such-member`.
    public func issueToken(member: String) throws(AccountError) -> String {
        let token = Self.newToken()
        try write { db in
            try Self.requireAccount(member, db)
            try Self.insert(token, member: member, db)
        }
        return token
    }

    /// Revokes every token of `member`: its next request is refused. Returns how many were still valid.
    ///
    /// - Throws: ``AccountError`` `no-such-member`.
    @discardableResult
    public func revoke(member: String) throws(AccountError) -> Int {
        try write { db in
            try Self.requireAccount(member, db)
            try db.execute(sql: "UPDATE token SET revoked_at = ? WHERE member = ? AND revoked_at IS NULL", arguments: [Self.now(), member])
            return db.changesCount
        }
    }

    /// The member a token belongs to, or `nil` for a token that is unknown or revoked. It waits on the database's
    /// own queue, not on a thread of the concurrency pool.
    public func member(forToken token: String) async throws(AccountError) -> String? {
        let hash = Self.hash(token)
        do {
            return try await database.read { db in
                try String.fetchOne(db, sql: "SELECT member FROM token WHERE hash = ? AND revoked_at IS NULL", arguments: [hash])
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// Whether `member` has an account.
    public func exists(member: String) throws(AccountError) -> Bool {
        do {
            return try database.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE member = ?", arguments: [member]) ?? false }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// Every account, by name.
    public func list() throws(AccountError) -> [Account] {
        do {
            return try database.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT a.member, a.created_at, COUNT(t.hash) FILTER (WHERE t.revoked_at IS NULL)
                        FROM account a LEFT JOIN token t ON t.member = a.member GROUP BY a.member ORDER BY a.member
                        """
                ).map { Account(member: $0[0], createdAt: Date(timeIntervalSince1970: Double($0[1] as Int64) / 1000), activeTokens: $0[2]) }
            }
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    /// Whether `name` can be a member's name: 1 to 64 characters, ASCII letters, digits, `.`, `_`, `-` and `@`,
    /// beginning with a letter or a digit (so that it is never taken for a command-line option).
    public static func isValidMember(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return isName(bytes, length: 1...64, punctuation: "._-@")
    }

    // MARK: Private

    private func write<T>(_ body: (Database) throws -> T) throws(AccountError) -> T {
        do {
            return try database.write(body)
        } catch let error as AccountError {
            throw error
        } catch {
            throw AccountError(.database, "\(path): \(error)")
        }
    }

    private static func requireAccount(_ member: String, _ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE member = ?", arguments: [member]) != nil else {
            throw AccountError(.noSuchMember, "no member named \(member); `missive serve users add \(member)` makes one")
        }
    }

    private static func insert(_ token: String, member: String, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO token(hash, member, created_at) VALUES (?, ?, ?)", arguments: [hash(token), member, now()])
    }

    private static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let base64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "msv_" + base64
    }

    private static func hash(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }

    private static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }

    /// Whether `bytes` are an ASCII letter or digit followed by letters, digits and `punctuation`, within `length`:
    /// the grammar of member names and of conversation ids made on the server.
    static func isName(_ bytes: [UInt8], length: ClosedRange<Int>, punctuation: String) -> Bool {
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        let allowed = Array(punctuation.utf8)
        guard length.contains(bytes.count), let first = bytes.first, isAlphanumeric(first) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || allowed.contains($0) }
    }

    private static func invalidName(_ name: String) -> AccountError {
        AccountError(.invalidName, "'\(name)' cannot be a member's name: 1 to 64 letters, digits, '.', '_', '-' or '@', beginning with a letter or a digit")
    }
}

/// One account, as ``ServerAccounts/list()`` gives it.
public struct Account: Sendable, Hashable {
    /// The member's name.
    public var member: String
    /// When the account was made.
    public var createdAt: Date
    /// How many of its tokens are not revoked.
    public var activeTokens: Int
}

/// Why an account operation failed.
public struct AccountError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable {
        /// The accounts file cannot be opened or made.
        case cannotOpen = "cannot-open"
        /// The database refused a read or a write.
        case database
        /// The name cannot be a member's name.
        case invalidName = "invalid-name"
        /// The member has an account already.
        case exists
        /// No account has that name.
        case noSuchMember = "no-such-member"
    }

    /// What kind of failure.
    public var code: Code
    /// The reason, in words, with the name or the path it is about.
    public var message: String

    /// An error of `code` that says `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The reason.
    public var description: String { message }
}
