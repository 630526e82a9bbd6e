import Foundation
import Missive

#if canImport(Glibc)
import Glibc
#endif

/// Why a plugin cannot be installed or uninstalled.
package struct PluginInstallError: Error, Sendable, CustomStringConvertible {
    /// The file or plugin name concerned.
    package let subject: String
    /// What is wrong.
    package let reason: String

    /// `subject: reason`.
    package var description: String { "\(subject): \(reason)" }

    init(_ subject: String, _ reason: String) {
        self.subject = subject
        self.reason = reason
    }
}

/// Installs plugin files into a plugin folder and removes them, the work behind `missive install` and
/// `missive uninstall`.
///
/// Installing refuses a plugin whose names clash with another plugin installed in any of the installed
/// folders (the per-user and the system folder), or whose file name another plugin already uses there. An
/// installed copy of the same plugin (same plugin name) is replaced: the new file is written under a
/// temporary name that discovery ignores and then renamed over the old one, so a host starting meanwhile
/// sees the old plugin or the new one, never neither or a half-written file, and a running host keeps the
/// copy it mapped. The new copy takes the old copy's file name, so that a user's copy of a plugin the
/// system folder also has shadows it instead of clashing with it. Installing an older version over a
/// newer one needs `allowDowngrade`. The conformance checks are the caller's to run between
/// ``plan(_:allowDowngrade:trust:)`` and ``install(_:)``.
///
/// With a trust policy, planning verifies the file's signature under it before anything of the file runs:
/// under `require` a plugin that is not signed by a trusted key, unchanged since, is refused; under `warn`
/// the plan carries the warnings. The installer signs nothing, but a signature beside the file (`FILE.sig`)
/// is installed with it, so that an installed signed plugin stays signed; uninstalling removes it too.
///
/// The data files a plugin declares (``PluginMetadata/dataFiles``, read beside the file) are installed with it, at
/// the same paths relative to the destination, before the plugin file itself, and removed with it. A plugin whose
/// declared file is missing is refused, as is one whose file would take the place of another plugin's. A signature
/// covers the plugin file and its metadata, not its data files.
package struct PluginInstaller: Sendable {
    /// The folder plugins are installed into and removed from.
    package let destination: String
    /// Every folder whose plugins count as installed, for clashes; includes ``destination``.
    package let installedFolders: [String]

    /// An installer into `destination` that checks names against the plugins of `installedFolders` (to
    /// which `destination` is added).
    package init(destination: String, installedFolders: [String]) {
        // Spelled as discovery spells the folders of the files it finds, so that the two compare equal.
        func normalized(_ folder: String) -> String { URL(fileURLWithPath: folder).standardizedFileURL.resolvingSymlinksInPath().path }
        let destination = normalized(destination)
        let folders = installedFolders.map(normalized)
        self.destination = destination
        self.installedFolders = folders.contains(destination) ? folders : [destination] + folders
    }

    /// The installer for the per-user folder, or with `system` for the system folder; both folders count as
    /// installed. `nil` when the environment names no per-user folder (no `HOME` or `XDG_DATA_HOME`) and
    /// the per-user folder is wanted.
    package static func standard(system: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginInstaller? {
        let systemFolder = PluginSearchPath.systemDirectory(environment)
        let userFolder = PluginSearchPath.userDirectory(environment)
        if system { return PluginInstaller(destination: systemFolder, installedFolders: [userFolder, systemFolder].compactMap { $0 }) }
        guard let userFolder else { return nil }
        return PluginInstaller(destination: userFolder, installedFolders: [userFolder, systemFolder])
    }

    /// What installing one file will do.
    package struct Plan: Sendable {
        /// The file to install.
        package let source: String
        /// Its metadata.
        package let metadata: PluginMetadata
        /// Where it will be.
        package let target: String
        /// The installed copy of the same plugin in the destination that it replaces, if any.
        package let replacing: InstalledPlugin?
        /// Copies of the same plugin in other installed folders, which the new copy shadows or is shadowed by.
        package let otherCopies: [InstalledPlugin]
        /// The signature file installed with it, if the file has one.
        package let signature: String?
        /// The data files the plugin declares (``PluginMetadata/dataFiles``), relative to its folder: each is copied
        /// from beside ``source`` to the same place beside ``target``.
        package let dataFiles: [String]
        /// The data files of the copy it replaces that the new copy no longer declares, removed once it is in place.
        package let staleDataFiles: [String]
        /// Under a trust policy in `warn` mode, why the file would be refused under `require`, to show the user.
        package let trustWarnings: [MissiveError]
    }

    /// Decides where `source` goes and refuses it if it cannot be installed there.
    ///
    /// - Parameter trust: the host's trust policy, whose signature check runs on `source` (its file-system
    ///   checks do not: they concern where a plugin is loaded from, and the installed copy is the
    ///   installer's); `nil` checks no signature.
    /// - Throws: ``PluginInstallError`` when the file is not a plugin, the trust policy refuses it, its names
    ///   clash with an installed plugin, its file name is taken by another plugin, or it is older than the
    ///   installed copy and `allowDowngrade` is false.
    package func plan(_ source: String, allowDowngrade: Bool = false, trust: PluginTrustPolicy? = nil) throws(PluginInstallError) -> Plan {
        let metadata: PluginMetadata
        var trustWarnings: [MissiveError] = []
        do {
            metadata = try PluginMetadata.read(fromFile: source)
            if var trust {
                trust.checkFilePermissions = false
                trustWarnings = try trust.admit(file: source, metadata: metadata).warnings
            }
        } catch {
            throw PluginInstallError(source, "[\(error.code)] \(error.message)")
        }
        let own = NameClashes.resolved(source)
        let installed = installedFolders.flatMap(InstalledPlugin.all(in:)).filter { NameClashes.resolved($0.path) != own }
        let clashes = NameClashes.find(metadata, among: installed)
        guard clashes.isEmpty else {
            throw PluginInstallError(source, "its names clash with installed plugins: " + clashes.joined(separator: "; "))
        }
        let copies = installed.filter { $0.metadata.name == metadata.name }
        let replacing = copies.first { $0.folder == destination }
        let sourceName = URL(fileURLWithPath: source).lastPathComponent
        guard sourceName.hasSuffix(".so") else { throw PluginInstallError(source, "a plugin file's name must end in .so, or discovery skips it") }
        let fileName = replacing?.fileName ?? copies.first?.fileName ?? sourceName
        // Another plugin under the same file name would be replaced (in the destination) or shadowed (elsewhere).
        if let occupant = installed.first(where: { $0.fileName == fileName && $0.metadata.name != metadata.name }) {
            throw PluginInstallError(
                source, "\(fileName) is already the file name of another plugin, \(occupant); rename the file before installing it")
        }
        if let replacing, !allowDowngrade, Self.isVersion(metadata.version, olderThan: replacing.metadata.version) {
            throw PluginInstallError(
                source, "version \(metadata.version) is older than the installed \(replacing); use --allow-downgrade to install it anyway")
        }
        let dataFiles = try checkedDataFiles(of: source, metadata, replacing: replacing, installed: installed)
        return Plan(source: source, metadata: metadata, target: destination + "/" + fileName, replacing: replacing,
                    otherCopies: copies.filter { $0.folder != destination }, signature: Self.signatureFile(of: source),
                    dataFiles: dataFiles, staleDataFiles: (replacing?.metadata.dataFiles ?? []).filter { !dataFiles.contains($0) },
                    trustWarnings: trustWarnings)
    }

    /// The data files `metadata` declares, once each is found to be a regular file inside the folder of `source` (links
    /// followed, as a confined worker's view admits them) and its place in the destination is free: not declared by
    /// another installed plugin there, and not a file that no plugin there declares.
    private func checkedDataFiles(
        of source: String, _ metadata: PluginMetadata, replacing: InstalledPlugin?, installed: [InstalledPlugin]
    ) throws(PluginInstallError) -> [String] {
        let others = installed.filter { $0.folder == destination && $0 != replacing }
        for (relative, path) in zip(metadata.dataFiles, metadata.dataFilePaths(pluginPath: source)) {
            guard !WorkerView.declaredFiles([path], pluginPath: source).isEmpty else {
                throw PluginInstallError(
                    source, "it declares the data file \(relative), but \(path) is missing, is not a regular file or leads out of the plugin's folder")
            }
            if let owner = others.first(where: { $0.metadata.dataFiles.contains(relative) }) {
                throw PluginInstallError(source, "its data file \(relative) is already a data file of \(owner)")
            }
            let target = destination + "/" + relative
            if replacing?.metadata.dataFiles.contains(relative) != true, FileManager.default.fileExists(atPath: target) {
                throw PluginInstallError(source, "its data file would replace \(target), which no installed plugin declares; move that file away first")
            }
        }
        return metadata.dataFiles
    }

    /// The signature file of `source`, as a trust policy finds it: `FILE.sig`, or for a symbolic link without
    /// one, the resolved file's; `nil` when there is none.
    private static func signatureFile(of source: String) -> String? {
        let manager = FileManager.default
        let beside = PluginSignature.path(for: source)
        if manager.fileExists(atPath: beside) { return beside }
        let resolved = PluginSignature.path(for: NameClashes.resolved(source))
        return manager.fileExists(atPath: resolved) ? resolved : nil
    }

    /// Copies the plugin's data files into place, then the file: each to a temporary name first (which discovery
    /// skips, since it does not end in `.so`), then renamed over the target, creating the folders needed; then
    /// removes the data files of the replaced copy that the new one no longer declares. Then the same for
    /// its signature, as the target's `FILE.sig`; a signature of an earlier copy is removed when the new
    /// file has none. Between the two renames a host starting sees the new file with the old signature (or
    /// none), which a trust policy refuses or warns about as a file changed after signing.
    package func install(_ plan: Plan) throws(PluginInstallError) {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: destination, withIntermediateDirectories: true)
        } catch {
            throw PluginInstallError(destination, "cannot create the plugin folder: \(error.localizedDescription)")
        }
        // The data files first, so that a host that finds the new plugin finds its files too.
        let source = PluginMetadata.folder(ofPlugin: plan.source)
        for relative in plan.dataFiles {
            try place(source + "/" + relative, at: destination + "/" + relative, permissions: 0o644, as: "the data file")
        }
        try place(plan.source, at: plan.target, permissions: 0o755, as: "the plugin")
        for relative in plan.staleDataFiles { removeDataFile(relative) }
        let signatureTarget = PluginSignature.path(for: plan.target)
        guard let signature = plan.signature else {
            guard unlink(signatureTarget) == 0 || errno == ENOENT else {
                throw PluginInstallError(signatureTarget, "cannot remove the earlier copy's signature: \(String(cString: strerror(errno)))")
            }
            return
        }
        try place(signature, at: signatureTarget, permissions: 0o644, as: "the signature")
    }

    /// Removes the installed plugin whose plugin name or file name is `name` from the destination, with its
    /// signature file if it has one.
    ///
    /// - Returns: what was removed: the plugin, or for a file that is not a readable plugin, `nil`.
    /// - Throws: ``PluginInstallError`` when nothing in the destination has that name, or it cannot be removed.
    @discardableResult
    package func uninstall(_ name: String) throws(PluginInstallError) -> (path: String, plugin: InstalledPlugin?) {
        let plugins = InstalledPlugin.all(in: destination)
        let path: String
        let plugin = plugins.first { $0.metadata.name == name } ?? plugins.first { $0.fileName == name }
        if let plugin {
            path = plugin.path
        } else if name.hasSuffix(".so"), !name.contains("/"), FileManager.default.fileExists(atPath: destination + "/" + name) {
            // A file that is not a readable plugin, which the user wants gone all the same.
            path = destination + "/" + name
        } else {
            let names = plugins.map { "\($0.metadata.name) (\($0.fileName))" }
            throw PluginInstallError(
                name, "no plugin of that name or file name is installed in \(destination)"
                    + (names.isEmpty ? "" : "; installed there: " + names.joined(separator: ", ")))
        }
        guard unlink(path) == 0 else {
            throw PluginInstallError(path, "cannot remove it: \(String(cString: strerror(errno)))")
        }
        // Its signature means nothing without it, nor do its data files, unless another plugin there declares one too.
        unlink(PluginSignature.path(for: path))
        let others = InstalledPlugin.all(in: destination).filter { $0.path != path }
        for relative in plugin?.metadata.dataFiles ?? [] where !others.contains(where: { $0.metadata.dataFiles.contains(relative) }) {
            removeDataFile(relative)
        }
        return (path, plugin)
    }

    /// Copies `source` (`what`, for an error) to `target` under a temporary name beside it, which discovery skips since
    /// it does not end in `.so`, then renames it into place, making the folders on the way: a host starting meanwhile
    /// sees the old file or the new one, never half of one.
    private func place(_ source: String, at target: String, permissions: Int, as what: String) throws(PluginInstallError) {
        let manager = FileManager.default
        let folder = URL(fileURLWithPath: target).deletingLastPathComponent().path
        let temporary = folder + "/.\(URL(fileURLWithPath: target).lastPathComponent).\(getpid()).partial"
        do {
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try? manager.removeItem(atPath: temporary)
            try manager.copyItem(atPath: URL(fileURLWithPath: source).resolvingSymlinksInPath().path, toPath: temporary)
            try manager.setAttributes([.posixPermissions: permissions], ofItemAtPath: temporary)
        } catch {
            try? manager.removeItem(atPath: temporary)
            throw PluginInstallError(target, "cannot write \(what): \(error.localizedDescription)")
        }
        guard rename(temporary, target) == 0 else {
            let reason = String(cString: strerror(errno))
            try? manager.removeItem(atPath: temporary)
            throw PluginInstallError(target, "cannot move \(what) into place: \(reason)")
        }
    }

    /// Removes the data file at `relative` in the destination, and the folders it leaves empty below the destination.
    private func removeDataFile(_ relative: String) {
        var path = destination + "/" + relative
        guard unlink(path) == 0 else { return }
        while true {
            path = URL(fileURLWithPath: path).deletingLastPathComponent().path
            guard path.count > destination.count, path.hasPrefix(destination + "/"), rmdir(path) == 0 else { return }
        }
    }

    /// Whether version `a` is older than `b`, comparing their dot-separated numbers (`1.10.0` is newer than
    /// `1.9.2`); `false` when either is not a plain dotted version, since then no order is known.
    package static func isVersion(_ a: String, olderThan b: String) -> Bool {
        func numbers(_ version: String) -> [Int]? {
            let parts = version.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
            guard !parts.isEmpty, parts.allSatisfy({ ($0 ?? -1) >= 0 }) else { return nil }
            return parts.map { $0! }
        }
        guard var x = numbers(a), var y = numbers(b) else { return false }
        let length = max(x.count, y.count)
        x += Array(repeating: 0, count: length - x.count)
        y += Array(repeating: 0, count: length - y.count)
        return x.lexicographicallyPrecedes(y)
    }
}
