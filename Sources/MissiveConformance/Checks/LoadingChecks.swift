import CMissivePlugin
import Foundation
import Missive

/// Level 1: the file loads, its ABI is supported, and its metadata and descriptor agree.
enum LoadingChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "load.elf", level: 1, summary: "The file is an ELF shared object for this machine.", requires: []) { context in
            switch context.metadata {
            case .success: return .passed
            case .failure(let error) where [.notAPlugin, .wrongMachine, .ioFailure].contains(error.code):
                return .failed(expected: "an ELF shared object for this machine", seen: error.message)
            case .failure: return .passed
            }
        },
        ConformanceCheck(
            id: "metadata.present", level: 1,
            summary: "The missive_meta section is present and well formed, read without running the plugin.", requires: ["load.elf"]
        ) { context in
            switch context.metadata {
            case .success: return .passed
            case .failure(let error): return .failed(expected: "a readable missive_meta section", seen: error.message)
            }
        },
        ConformanceCheck(id: "abi.metadata", level: 1, summary: "The metadata declares an ABI major version this host supports.",
                         requires: ["metadata.present"]) { context in
            guard case .success(let metadata) = context.metadata else { return .skipped("no metadata") }
            return metadata.abiMajor == Int(MISSIVE_ABI_MAJOR)
                ? .passed : .failed(expected: "ABI \(MISSIVE_ABI_MAJOR)", seen: "ABI \(metadata.abiMajor)")
        },
        ConformanceCheck(id: "load.dlopen", level: 1, summary: "dlopen with RTLD_NOW succeeds: no missing symbols or libraries.",
                         requires: ["load.elf"]) { context in
            do throws(MissiveError) {
                try PluginLoader.openLibrary(context.path)
                return .passed
            } catch {
                return .failed(expected: "dlopen(RTLD_NOW | RTLD_LOCAL) to succeed", seen: error.message)
            }
        },
        ConformanceCheck(id: "load.entry", level: 1, summary: "The entry symbol is exported and returns a descriptor.",
                         requires: ["load.dlopen"]) { context in
            if case .failure(let error) = context.probe, error.code == .missingEntry {
                return .failed(expected: "\(MISSIVE_ENTRY_SYMBOL) to return a descriptor", seen: error.message)
            }
            return .passed
        },
        ConformanceCheck(id: "abi.version", level: 1, summary: "The descriptor's ABI version is supported.", requires: ["load.entry"]) { context in
            if case .failure(let error) = context.probe, error.code == .unsupportedABI {
                return .failed(expected: "ABI \(MISSIVE_ABI_MAJOR).x", seen: error.message)
            }
            return .passed
        },
        ConformanceCheck(id: "abi.struct-size", level: 1, summary: "The plugin and type descriptors are at least as large as ABI 1.0's.",
                         requires: ["abi.version"]) { context in
            switch context.probe {
            case .failure(let error): return .failed(expected: "a well-formed descriptor", seen: error.message)
            case .success(let probe):
                let problems = probe.types.compactMap { result -> String? in
                    if case .failure(let error) = result, error.message.contains("bytes; ABI") { return error.message }
                    return nil
                }
                return outcome(expected: "type descriptors of ABI 1.0's size", problems: problems)
            }
        },
        ConformanceCheck(id: "plugin.identity", level: 1, summary: "The descriptor and the metadata name the plugin, its version and vendor.",
                         requires: ["abi.struct-size"]) { context in
            guard case .success(let probe) = context.probe else { return .skipped("the plugin could not be opened") }
            let missing = [("name", probe.name), ("version", probe.version), ("vendor", probe.vendor)].filter { $0.1 == nil }.map(\.0)
            return outcome(expected: "a non-empty name, version and vendor", problems: missing.map { "the descriptor's \($0) is missing" })
        },
        ConformanceCheck(id: "types.functions", level: 1,
                         summary: "Every type has decode, release, encode and digest, media types have media, and every container a type names is declared.",
                         requires: ["abi.struct-size"]) { context in
            guard case .success(let probe) = context.probe else { return .skipped("the plugin could not be opened") }
            var problems = probe.types.compactMap { result -> String? in
                if case .failure(let error) = result { return "\(error.objectName ?? "a type"): \(error.message)" }
                return nil
            }
            for case .success(let type) in probe.types where type.registrationProblem?.message == "a media type must provide media" {
                problems.append("\(type.objectName): a media type must provide media")
            }
            for case .failure(let error) in probe.containers { problems.append(error.message) }
            let declared = Set(probe.containers.compactMap { try? $0.get().objectName })
            for case .success(let type) in probe.types {
                if let container = type.container, !declared.contains(container) {
                    problems.append("\(type.objectName): its container \(container) is not one the plugin declares")
                }
            }
            return outcome(expected: "every required function, and containers that are declared", problems: problems)
        },
        ConformanceCheck(id: "metadata.agrees", level: 1,
                         summary: "The metadata agrees with the runtime descriptor: identity, names, persistence, media flag.",
                         requires: ["metadata.present", "types.functions"]) { context in
            guard case .success(let metadata) = context.metadata, case .success(let probe) = context.probe else {
                return .skipped("metadata or descriptor unavailable")
            }
            let types = probe.types.compactMap { try? $0.get() }
            let containers = probe.containers.compactMap { try? $0.get() }
            guard let problem = PluginLoader.disagreement(metadata: metadata, info: probe.info, containers: containers, types: types) else {
                return .passed
            }
            return .failed(expected: "metadata identical to the descriptor", seen: problem)
        },
    ]
}
