import Foundation
import MissiveStore

/// Where the password of a store URL without one comes from, as PostgreSQL's own tools find it, so that a
/// password need not be written in a URL that shows up in shell histories and process lists: the environment
/// variable `PGPASSWORD`, then the password file (`PGPASSFILE`, or `~/.pgpass`).
enum PasswordSources {
    /// `location` with its password filled in from `environment` or the password file, when its URL gives none;
    /// and, for a failed login's message, where the password came from or why the password file was passed over.
    static func filling(_ location: PostgresLocation, environment: [String: String]) -> (location: PostgresLocation, note: String?) {
        guard location.password == nil else { return (location, nil) }
        var filled = location
        if let password = environment["PGPASSWORD"], !password.isEmpty {
            filled.password = password
            return (filled, "the password came from PGPASSWORD")
        }
        guard let path = passwordFilePath(environment) else { return (location, nil) }
        switch password(in: path, for: location) {
        case .found(let password):
            filled.password = password
            return (filled, "the password came from \(path)")
        case .noMatch:
            return (location, nil)
        case .notUsed(let reason):
            return (location, "\(path) was not used: \(reason)")
        }
    }

    /// What the password file says for a location.
    enum Lookup {
        /// The password of the first line that matches.
        case found(String)
        /// No file, or no line that matches.
        case noMatch
        /// A file that is not used, and why.
        case notUsed(String)
    }

    /// The password file: `PGPASSFILE`, or `.pgpass` in the home folder.
    private static func passwordFilePath(_ environment: [String: String]) -> String? {
        if let file = environment["PGPASSFILE"], !file.isEmpty { return file }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return (home.hasSuffix("/") ? home : home + "/") + ".pgpass"
    }

    /// The password of the first line of the file at `path` that matches `location`.
    ///
    /// A line is `host:port:database:user:password`; `*` in any of the first four fields matches anything; `\:`
    /// and `\\` stand for `:` and `\`; lines starting with `#` are comments. A unix socket matches the host
    /// `localhost` and the socket's folder. As PostgreSQL's tools do, a file that is not a regular file, or that
    /// its group or others may read, is not used.
    static func password(in path: String, for location: PostgresLocation) -> Lookup {
        var status = stat()
        guard stat(path, &status) == 0 else { return .noMatch }
        guard status.st_mode & S_IFMT == S_IFREG else { return .notUsed("it is not a regular file") }
        guard status.st_mode & 0o077 == 0 else { return .notUsed("its group or others may read it (chmod 600 makes it private)") }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return .notUsed("it cannot be read as UTF-8 text") }
        let hosts: [String]
        let port: Int
        switch location.server {
        case .tcp(let host, let tcpPort):
            hosts = [host]
            port = tcpPort
        case .socket(let directory, let socketPort):
            hosts = ["localhost", directory]
            port = socketPort
        }
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = split(line)
            guard fields.count == 5 else { continue }
            func matches(_ field: String, _ values: [String]) -> Bool { field == "*" || values.contains(field) }
            if matches(fields[0], hosts), matches(fields[1], [String(port)]), matches(fields[2], [location.database]),
                matches(fields[3], [location.user])
            {
                return .found(fields[4])
            }
        }
        return .noMatch
    }

    /// The fields of one line of the password file, split at the colons that are not escaped, with their escapes
    /// undone. The last field (the password) takes the rest of the line.
    private static func split(_ line: Substring) -> [String] {
        var fields: [String] = []
        var field = ""
        var escaped = false
        for character in line {
            if escaped {
                field.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" && fields.count < 4 {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }
}
