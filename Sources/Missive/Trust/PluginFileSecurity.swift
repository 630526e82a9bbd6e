/// The file-system checks on a plugin file before it is loaded, as ssh's StrictModes does for its keys:
/// code that anyone else could have changed is not run (docs/TRUST.md, "File-system checks").
///
/// A file passes when, for the user this process runs as (its effective user id):
/// - it is a regular file that neither its group nor others may write to;
/// - the folder holding it is writable by neither its group nor others, even with the sticky bit: anyone who
///   may write to the folder can add a plugin beside it, so a plugin directly in `/tmp` is refused;
/// - every folder above that one is writable by neither its group nor others, unless it has the sticky bit
///   (as `/tmp` has), which keeps others from renaming the folders below it;
/// - the file and every one of those folders belong to this user or to root.
///
/// Symbolic links are followed: every link on the way, and the file it ends at, must pass, each link through
/// the folders that hold it (the link's own mode means nothing on Linux).
public enum PluginFileSecurity {
    /// The environment variable that turns the checks off when set to `1`, for development builds:
    /// `MISSIVE_INSECURE_PLUGIN_FILES=1`.
    public static let disablingVariable = "MISSIVE_INSECURE_PLUGIN_FILES"

    /// Refuses the plugin file at `path` if it fails a check.
    ///
    /// - Throws: ``MissiveError`` `insecureFile` naming the file, with the reason and what turns the checks
    ///   off.
    public static func check(_ path: String) throws(MissiveError) {
        if let problem = problem(with: path, user: TrustFiles.effectiveUser) {
            throw MissiveError(
                .insecureFile,
                "insecure plugin file: \(problem); a plugin is loaded only when no other user can change it (set \(disablingVariable)=1 to turn this check off for development)",
                file: path)
        }
    }

    /// Why the file at `path` fails the checks for user `user`, or `nil` when it passes.
    public static func problem(with path: String, user: UInt32) -> String? {
        var current = TrustFiles.absolute(path)
        var links: [String] = []
        for _ in 0..<40 {
            let (folder, name) = split(current)
            guard let realFolder = TrustFiles.resolved(folder) else { return "its folder \(folder) cannot be resolved" }
            if let problem = folderProblem(realFolder, user: user) { return problem + linked(links) }
            let entry = (realFolder == "/" ? "" : realFolder) + "/" + name
            let status: TrustFiles.Status
            switch TrustFiles.status(entry) {
            case .success(let found): status = found
            case .failure(let error): return "cannot look at \(entry): \(error.reason)"
            }
            switch status.kind {
            case .symbolicLink:
                guard let target = TrustFiles.linkTarget(entry) else { return "cannot read the symbolic link \(entry)" }
                links.append(entry)
                current = target.hasPrefix("/") ? target : (realFolder == "/" ? "" : realFolder) + "/" + target
                continue
            case .regular:
                let subject = links.isEmpty ? "the file" : "the file \(entry) that it links to"
                if let problem = ownerProblem(status, subject: subject, user: user) { return problem }
                if let who = writers(status) { return "\(subject) is writable by \(who) (mode \(status.octal))" }
                return nil
            case .folder, .other:
                return "\(entry) is not a regular file"
            }
        }
        return "too many symbolic links from \(path)"
    }

    /// Why the folder `folder` (resolved) or one above it fails the checks, or `nil`.
    private static func folderProblem(_ folder: String, user: UInt32) -> String? {
        var current = folder
        var holdsFile = true
        while true {
            let status: TrustFiles.Status
            switch TrustFiles.status(current) {
            case .success(let found): status = found
            case .failure(let error): return "cannot look at the folder \(current): \(error.reason)"
            }
            let subject = holdsFile ? "its folder \(current)" : "the folder \(current) above it"
            if let problem = ownerProblem(status, subject: subject, user: user) { return problem }
            if let who = writers(status) {
                if holdsFile {
                    return "\(subject) is writable by \(who) (mode \(status.octal))"
                        + (status.sticky ? "; the sticky bit does not help, since anyone who may write there can put a plugin beside it" : "")
                }
                if !status.sticky {
                    return "\(subject) is writable by \(who) (mode \(status.octal)) without the sticky bit, so they could put other folders in place of those below it"
                }
            }
            if current == "/" { return nil }
            current = split(current).folder
            holdsFile = false
        }
    }

    /// Why `status`'s owner is not acceptable, or `nil`: it must be `user` or root.
    private static func ownerProblem(_ status: TrustFiles.Status, subject: String, user: UInt32) -> String? {
        guard status.owner != user, status.owner != 0 else { return nil }
        return "\(subject) belongs to \(describe(status.owner)), not to this process's user (\(describe(user))) or root"
    }

    /// `its group`, `others` or `its group and others`, whichever may write; `nil` when neither may.
    private static func writers(_ status: TrustFiles.Status) -> String? {
        switch (status.groupWritable, status.othersWritable) {
        case (true, true): "its group and others"
        case (true, false): "its group"
        case (false, true): "others"
        case (false, false): nil
        }
    }

    /// `user alice (1000)`, or `user 1000` for an id without a name.
    private static func describe(_ user: UInt32) -> String {
        TrustFiles.userName(user).map { "user \($0) (\(user))" } ?? "user \(user)"
    }

    /// ` (reached through the symbolic link …)` when links were followed.
    private static func linked(_ links: [String]) -> String {
        links.isEmpty ? "" : " (reached through the symbolic link \(links.joined(separator: " → ")))"
    }

    /// The folder and the last component of an absolute path.
    private static func split(_ path: String) -> (folder: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let folder = trimmed[..<slash]
        return (folder.isEmpty ? "/" : String(folder), String(trimmed[trimmed.index(after: slash)...]))
    }
}
