import Foundation
import Logging

/// Decides, before any plugin code runs in the host or in a scanner, which discovered files to refuse (those
/// the trust policy refuses) and which to withhold (those a crash quarantined and those the scanner
/// blacklists, scanning the new and changed ones first).
struct PluginGate {
    let protection: PluginProtection
    let metadataCache: PluginMetadataCache?
    let logger: Logger?

    /// What to do with the files that may not load: refuse them (their types are not registered), or withhold
    /// them (their types are registered from the metadata, and their messages carry the reason).
    struct Decisions {
        var refused: [String: MissiveError] = [:]
        var withheld: [String: MissiveError] = [:]
        /// The files signed by a trusted key, when the isolation policy asks (``PluginIsolation/Policy/untrustedIsolated``).
        var trusted: Set<String> = []
        /// The files that load in a worker of their own (``PluginIsolation``): not scanned, since their worker loads
        /// them and runs their examples as the scanner would, under its limits and filter, and a scan's verdict about
        /// loading them into the host does not apply.
        var isolated: Set<String> = []
    }

    /// The files to refuse and to withhold, with the refusal to report for each.
    func decide(_ found: [(file: String, identity: FileIdentity, metadata: Result<PluginMetadata, MissiveError>)]) -> Decisions {
        var decisions = Decisions()
        if let trust = protection.trust {
            for (file, _, result) in found {
                guard case .success(let metadata) = result else { continue }
                do {
                    let admission = try trust.admit(file: file, metadata: metadata)
                    for warning in admission.warnings {
                        logger?.warning("plugin not trusted: \(warning.message)", metadata: ["missive.file": "\(file)", "missive.code": "\(warning.code)"])
                    }
                    if protection.isolation.policy == .untrustedIsolated {
                        let signature = admission.signature ?? (try? trust.verify(file: file, metadata: metadata))
                        if signature?.status == .trusted { decisions.trusted.insert(file) }
                    }
                } catch {
                    decisions.refused[file] = error
                }
            }
        }
        if protection.isolation.policy != .inProcess {
            for (file, _, result) in found where decisions.refused[file] == nil {
                guard case .success(let metadata) = result, (try? PluginLoader.checkSupported(metadata, path: file, logger: nil)) != nil,
                    protection.isolation.isolates(trusted: decisions.trusted.contains(file))
                else { continue }
                decisions.isolated.insert(file)
            }
        }
        // Without a quarantine or a scanner, nothing below applies: a start without them pays for nothing more.
        guard protection.quarantine != nil || protection.scanner != nil else { return decisions }
        var crashes: [PluginQuarantine.Crash] = []
        if let quarantine = protection.quarantine {
            do {
                crashes = try quarantine.arm()
            } catch {
                logger?.warning("crashes in plugins will not be recorded: \(error.message)", metadata: ["missive.file": "\(quarantine.file)"])
            }
        }
        var unscanned: [(file: String, identity: FileIdentity)] = []
        for (file, identity, result) in found where decisions.refused[file] == nil {
            // A file the loader refuses before running it needs neither a quarantine nor a scan.
            guard case .success(let metadata) = result, (try? PluginLoader.checkSupported(metadata, path: file, logger: nil)) != nil else { continue }
            if let quarantine = protection.quarantine, let crash = quarantine.crash(quarantining: file, identity: identity, in: crashes) {
                let what: String
                if crash.operation.hasPrefix(PluginQuarantine.isolatedPrefix) {
                    // Written when an isolated plugin's worker failed too often: the host never crashed.
                    let operation = crash.operation.dropFirst(PluginQuarantine.isolatedPrefix.count)
                    let during = crash.objectName.map { "\(operation) of \($0)" } ?? String(operation)
                    what = "its worker failed too often when it ran isolated (the last: \(PluginQuarantine.signalName(crash.signal)) during \(during) at "
                        + "\(crash.date.formatted(.iso8601)))"
                } else {
                    what = "it crashed a host with \(crash)"
                }
                decisions.withheld[file] = MissiveError(
                    .quarantined,
                    "quarantined: \(what), so it is not loaded until the file changes or the quarantine is cleared (missive quarantine clear)",
                    file: file)
                continue
            }
            guard protection.scanner != nil, !decisions.isolated.contains(file) else { continue }
            if let record = metadataCache?.scanRecord(file, identity: identity), !mayRetry(record) {
                if !record.passed { decisions.withheld[file] = blacklisted(file, record.reason) }
                continue
            }
            // A file that failed keeps failing while its content is the same, whatever its timestamps say.
            if let failure = metadataCache?.earlierFailure(file), failure.hostVersion == MissiveVersion.string, !mayRetry(failure),
               PluginProtection.contentHash(of: file) == failure.contentHash
            {
                metadataCache?.record(failure, for: file, identity: identity)
                decisions.withheld[file] = blacklisted(file, failure.reason)
                continue
            }
            unscanned.append((file, identity))
        }
        guard let scanner = protection.scanner, !unscanned.isEmpty else { return decisions }
        logger?.debug("scanning new or changed plugin files in child processes", metadata: ["missive.count": "\(unscanned.count)"])
        for ((file, identity), verdict) in zip(unscanned, scanner.scan(unscanned.map(\.file))) {
            let hash = PluginProtection.contentHash(of: file) ?? ""
            switch verdict {
            case .passed:
                metadataCache?.record(.init(passed: true, contentHash: hash, hostVersion: MissiveVersion.string, reason: ""), for: file, identity: identity)
                logger?.debug("the plugin scanner passed the file", metadata: ["missive.file": "\(file)"])
            case .failed(let reason):
                metadataCache?.record(.init(passed: false, contentHash: hash, hostVersion: MissiveVersion.string, reason: reason), for: file, identity: identity)
                decisions.withheld[file] = blacklisted(file, reason)
                logger?.debug("the plugin scanner blacklisted the file: \(reason)", metadata: ["missive.file": "\(file)"])
            case .hung(let reason, let timeout):
                metadataCache?.record(.init(passed: false, contentHash: hash, hostVersion: MissiveVersion.string, reason: reason, hungAfter: timeout),
                                      for: file, identity: identity)
                decisions.withheld[file] = blacklisted(file, reason)
                logger?.debug("the plugin scanner blacklisted the file: \(reason)", metadata: ["missive.file": "\(file)"])
            case .unavailable(let reason):
                logger?.warning("the plugin scanner could not run, so the file loads unscanned: \(reason)", metadata: ["missive.file": "\(file)"])
            }
        }
        return decisions
    }

    /// Whether a failed scan may be tried again: it hung, and this scanner waits longer than that scan did, so
    /// a plugin judged under a timeout too short for a busy machine gets another chance.
    private func mayRetry(_ record: PluginMetadataCache.ScanRecord) -> Bool {
        guard !record.passed, let hungAfter = record.hungAfter, let scanner = protection.scanner else { return false }
        return scanner.timeout > hungAfter
    }

    private func blacklisted(_ file: String, _ reason: String) -> MissiveError {
        MissiveError(
            .quarantined,
            "blacklisted by the plugin scanner: its scan \(reason); it is scanned again when the file's content changes or the quarantine is cleared "
                + "(missive quarantine clear)",
            file: file)
    }
}
