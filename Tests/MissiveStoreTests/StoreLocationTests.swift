import Foundation
import MissiveStore
import Testing

/// Store URLs parsed without opening anything: every form the docs give, and every malformed one refused with a
/// reason that names it and never shows the password.
@Suite struct StoreLocationTests {
    /// The PostgreSQL location of `text`, or a failed expectation.
    func postgres(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> PostgresLocation {
        let location = try StoreLocation(parsing: text)
        guard case .postgres(let postgres) = location else {
            Issue.record("\(text) parsed as \(location), not PostgreSQL", sourceLocation: sourceLocation)
            throw StoreError(.cannotOpen, "not PostgreSQL")
        }
        return postgres
    }

    /// The error parsing `text` gives; fails the test when it parses.
    func refusal(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> StoreError? {
        do {
            let location = try StoreLocation(parsing: text)
            Issue.record("\(text) parsed as \(location)", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.code == .cannotOpen, sourceLocation: sourceLocation)
            return error
        }
    }

    // MARK: SQLite

    @Test func plainPathsAndSQLiteURLsNameAFileMadeAbsolute() throws {
        let directory = FileManager.default.currentDirectoryPath
        #expect(try StoreLocation(parsing: "/var/lib/missive/store.sqlite") == .sqlite(path: "/var/lib/missive/store.sqlite"))
        #expect(try StoreLocation(parsing: "store.sqlite") == .sqlite(path: directory + "/store.sqlite"))
        #expect(try StoreLocation(parsing: "sqlite:data/store.sqlite") == .sqlite(path: directory + "/data/store.sqlite"))
        #expect(try StoreLocation(parsing: "sqlite:/tmp/s.db") == .sqlite(path: "/tmp/s.db"))
        #expect(try StoreLocation(parsing: "sqlite:///tmp/s.db") == .sqlite(path: "/tmp/s.db"))
        // A path is a path: no percent escapes, and a folder with '://' in its name is not a scheme.
        #expect(try StoreLocation(parsing: "/tmp/a%20b.db") == .sqlite(path: "/tmp/a%20b.db"))
        #expect(try StoreLocation(parsing: "/tmp/x://y.db") == .sqlite(path: "/tmp/x://y.db"))
        #expect(try StoreLocation(parsing: "/tmp/s.db").description == "/tmp/s.db")
    }

    @Test func malformedSQLiteLocationsAreRefused() {
        #expect(refusal("")?.message.contains("names no file") == true)
        #expect(refusal("sqlite:")?.message.contains("names no file") == true)
        #expect(refusal("sqlite://relative.db")?.message.contains("absolute path") == true)
        #expect(refusal("postgres:alice@host/db")?.message.contains("not a PostgreSQL URL") == true)
    }

    @Test func anUnknownSchemeIsNamed() {
        let error = refusal("mysql://root:hunter2@db.example/chat")
        #expect(error?.message.contains("unknown scheme 'mysql'") == true)
        #expect(error?.message.contains("hunter2") == false)
        #expect(error?.path == "mysql://root@db.example/chat")
    }

    // MARK: PostgreSQL

    @Test func aFullURLGivesEveryPart() throws {
        let location = try postgres(
            "postgresql://alice:s3cret@db.example:6543/chat?statement_timeout=2500&pool_size=3&connect_timeout=4&application_name=relay&sslmode=disable"
        )
        #expect(location.server == .tcp(host: "db.example", port: 6543))
        #expect(location.user == "alice")
        #expect(location.password == "s3cret")
        #expect(location.database == "chat")
        #expect(location.statementTimeout == .milliseconds(2500))
        #expect(location.poolSize == 3)
        #expect(location.connectTimeout == .seconds(4))
        #expect(location.applicationName == "relay")
        #expect(location.description == "postgres://alice@db.example:6543/chat?statement_timeout=2500&pool_size=3&connect_timeout=4&application_name=relay")
        #expect(!location.description.contains("s3cret"))
    }

    @Test func defaultsApplyWhenAPartIsLeftOut() throws {
        let location = try postgres("postgres://bob@localhost/missive")
        #expect(location.server == .tcp(host: "localhost", port: 5432))
        #expect(location.password == nil)
        #expect(location.statementTimeout == nil)
        #expect(location.poolSize == PostgresLocation.defaultPoolSize)
        #expect(location.connectTimeout == PostgresLocation.defaultConnectTimeout)
        #expect(location.applicationName == "missive")
        #expect(location.description == "postgres://bob@localhost/missive")
        #expect(try postgres("postgres://bob@localhost/missive?statement_timeout=0").statementTimeout == nil)
    }

    @Test func percentEscapesAreDecodedAndWrittenBack() throws {
        let location = try postgres("postgres://al%40ice:p%3Aw%2Fd%40@db.example/my%20chat")
        #expect(location.user == "al@ice")
        #expect(location.password == "p:w/d@")
        #expect(location.database == "my chat")
        #expect(location.description == "postgres://al%40ice@db.example/my%20chat")
        // A password with a raw '@' still splits at the last one.
        #expect(try postgres("postgres://alice:a@b@db.example/chat").password == "a@b")
        #expect(refusal("postgres://alice@db.example/ch%zzat")?.message.contains("malformed percent escape in its database name") == true)
        #expect(refusal("postgres://alice:pw%g@db.example/chat")?.message.contains("malformed percent escape in its password") == true)
        #expect(refusal("postgres://alice@db.example/a%00b")?.message.contains("NUL") == true)
    }

    @Test func anIPv6HostIsWrittenInBrackets() throws {
        #expect(try postgres("postgres://alice@[::1]:5433/chat").server == .tcp(host: "::1", port: 5433))
        #expect(try postgres("postgres://alice@[fe80::2:1]/chat").server == .tcp(host: "fe80::2:1", port: 5432))
        #expect(try postgres("postgres://alice@[::1]:5433/chat").description == "postgres://alice@[::1]:5433/chat")
        #expect(refusal("postgres://alice@[::1/chat")?.message.contains("without its closing ']'") == true)
        #expect(refusal("postgres://alice@[::1]x/chat")?.message.contains("only ':port' may follow") == true)
        #expect(refusal("postgres://alice@[zz]/chat")?.message.contains("malformed IPv6 address") == true)
    }

    @Test func unixSocketsInBothOfLibpqsForms() throws {
        let query = try postgres("postgres://alice@/chat?host=/run/postgresql")
        #expect(query.server == .socket(directory: "/run/postgresql", port: 5432))
        #expect(query.server.socketPath == "/run/postgresql/.s.PGSQL.5432")
        let withPort = try postgres("postgres://alice@:54340/chat?host=/tmp/pg")
        #expect(withPort.server == .socket(directory: "/tmp/pg", port: 54340))
        #expect(withPort.server.socketPath == "/tmp/pg/.s.PGSQL.54340")
        #expect(try postgres("postgres://alice@/chat?host=/tmp/pg&port=54340").server == withPort.server)
        let escaped = try postgres("postgres://alice@%2Ftmp%2Fpg:54340/chat")
        #expect(escaped.server == withPort.server)
        #expect(try postgres("postgres://alice@%2Ftmp%2Fpg/chat").server == .socket(directory: "/tmp/pg", port: 5432))
        // The description parses back to the same place.
        #expect(withPort.description == "postgres://alice@/chat?host=/tmp/pg&port=54340")
        #expect(try postgres(withPort.description) == withPort)
        #expect(refusal("postgres://alice@db.example/chat?host=/tmp")?.message.contains("names its host twice") == true)
        #expect(refusal("postgres://alice@/chat?host=tmp")?.message.contains("absolute path") == true)
        #expect(refusal("postgres://alice@:5433/chat?host=/tmp&port=5434")?.message.contains("names its port twice") == true)
    }

    @Test func aMissingDatabaseUserOrHostIsNamed() {
        #expect(refusal("postgres://alice@db.example")?.message.contains("names no database") == true)
        #expect(refusal("postgres://alice@db.example/")?.message.contains("names no database") == true)
        #expect(refusal("postgres://alice@db.example/a/b")?.message.contains("'/'") == true)
        #expect(refusal("postgres://db.example/chat")?.message.contains("names no user") == true)
        #expect(refusal("postgres://:pw@db.example/chat")?.message.contains("names no user") == true)
        #expect(refusal("postgres://alice@/chat")?.message.contains("names no host") == true)
    }

    @Test func badPortsAreRefused() {
        for port in ["0", "65536", "-1", "54x", "", "999999", "+80"] {
            let error = refusal("postgres://alice@db.example:\(port)/chat")
            #expect(error?.message.contains("bad port '\(port)'") == true, "port \(port)")
        }
        #expect(refusal("postgres://alice@/chat?host=/tmp&port=http")?.message.contains("bad port 'http'") == true)
    }

    @Test func parametersAreCheckedByName() {
        let unknown = refusal("postgres://alice:pw@db.example/chat?sslmode=disable&search_path=other")
        #expect(unknown?.message.contains("unknown parameter 'search_path'") == true)
        #expect(unknown?.path == "postgres://alice@db.example/chat?sslmode=disable&search_path=other")
        #expect(refusal("postgres://alice@db.example/chat?sslmode=require")?.message.contains("TLS is not supported yet") == true)
        #expect(refusal("postgres://alice@db.example/chat?sslmode=verify-full")?.message.contains("TLS is not supported yet") == true)
        #expect(refusal("postgres://alice@db.example/chat?sslmode=maybe")?.message.contains("unknown sslmode 'maybe'") == true)
        #expect(refusal("postgres://alice@db.example/chat?statement_timeout=fast")?.message.contains("bad statement_timeout") == true)
        #expect(refusal("postgres://alice@db.example/chat?statement_timeout=-5")?.message.contains("bad statement_timeout") == true)
        #expect(refusal("postgres://alice@db.example/chat?pool_size=0")?.message.contains("bad pool_size") == true)
        #expect(refusal("postgres://alice@db.example/chat?connect_timeout=0")?.message.contains("bad connect_timeout") == true)
        #expect(refusal("postgres://alice@db.example/chat?pool_size")?.message.contains("without a value") == true)
        #expect(refusal("postgres://alice@db.example/chat?pool_size=2&pool_size=3")?.message.contains("'pool_size' twice") == true)
        #expect(refusal("postgres://alice@db.example/chat#top")?.message.contains("fragment") == true)
    }

    @Test func aRefusalNeverShowsThePassword() {
        for text in [
            "postgres://alice:hunter2@db.example", "postgres://alice:hunter2@db.example:99999/chat",
            "postgres://alice:hunter2@db.example/chat?nope=1", "postgresql://alice:hunter2@[::1/chat",
        ] {
            let error = refusal(text)
            #expect(error?.message.contains("hunter2") == false, "\(text)")
            #expect(error?.path?.contains("hunter2") == false, "\(text)")
            #expect(error?.message.contains("alice@") == true, "\(text)")
        }
    }

    @Test func aPasswordWrittenWithoutItsEscapesIsNeverShown() throws {
        // '/' and '@' in a password: the user information runs to the last '@'.
        let slash = try postgres("postgres://atuser:secret/part@127.0.0.1:54391/atdb")
        #expect(slash.user == "atuser" && slash.password == "secret/part" && slash.database == "atdb")
        #expect(!slash.description.contains("secret"))
        let at = try postgres("postgres://atuser:p@ss:w/rd@127.0.0.1:54391/atdb")
        #expect(at.password == "p@ss:w/rd" && at.database == "atdb")
        // Refused URLs that hold one: the reason leaves it out.
        for text in ["postgres://atuser:s3cr/et@127.0.0.1:99999/atdb", "postgres://atuser:s3cret@127.0.0.1/", "postgres://u:s3cret@[::1/x"] {
            let error = refusal(text)
            #expect(error.map { !"\($0)".contains("s3cr") } == true, "\(String(describing: error))")
        }
        // A password with no user's '@' is not taken for a port and shown.
        let noAt = refusal("postgres://atuser:s3cret/atdb")
        #expect(noAt.map { !"\($0)".contains("s3cret") } == true, "\(String(describing: noAt))")
    }
}
