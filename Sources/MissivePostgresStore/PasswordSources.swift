import Foundation
import MissiveStore

/// Where the password of a store URL without one comes from, as PostgreSQL's own tools find it, so that a
/// password need not be written in a URL that shows up in shell histories and process lists: the environment
/// variable `PGPASSWORD`, then the password file (`PGPASSFILE`, or `~/.pgpass`).
enum PasswordSources {
    /// `location` with its password filled in from `environment` or the password file, when its URL gives none.
    static func filling(_ location: PostgresLocation, environment: [String: String]) -> PostgresLocation {
        guard location.password == nil else { return location }
        var filled = location
        if let password = environment["PGPASSWORD"], !password.isEmpty {
            filled.password = password
        } else if let path = passwordFilePath(environment), let password = password(in: path, for: location) {
            filled.password = password
        }
        return filled
    }

    /// The password file: `PGPASSFILE`, or `.pgpass` in the home folder.
    private static func passwordFilePath(_ environment: [String: String]) -> String? {
        if let file = environment["PGPASSFILE"], !file.isEmpty { return file }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return (home.hasSuffix("/") ? home : home + "/") + ".pgpass"
    }

    /// The password of the first line of the file at `path` that matches `location`, or `nil`.
    ///
    /// A line is `host:port:database:user:password`; `*` in any of the first four fields matches anything; `\:`
    /// and `\\` stand for `:` and `\`; lines starting with `#` are comments. A unix socket matches the host
    /// `localhost` and the socket's folder. As PostgreSQL's tools do, a file that is not a regular file, or that
    /// its group or others may read, is not used.
    static func password(in path: String, for location: PostgresLocation) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o077 == 0,
            let text = try? String(contentsOfFile: path, encoding: .utf8)
        else { return nil }
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
                return fields[4]
            }
        }
        return nil
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
