import CMissivePlugin
import Foundation
import Missive

/// Levels 1–2: names, persistence and examples, as the descriptor declares them.
enum DeclarationChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "names.grammar", level: 1,
                         summary: "Every objectName, container, container key and businessID (or container value) follows the name grammar.",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let containers = context.containers
                var problems = containers.flatMap { container in
                    [NameGrammar.objectNameProblem(container.objectName).map { "container: \($0)" }, NameGrammar.containerKeyProblem(container.key)]
                }.compactMap { $0 }
                for type in types {
                    if let problem = NameGrammar.objectNameProblem(type.objectName) { problems.append(problem) }
                    guard let value = type.businessID else { continue }
                    let kind = type.container.flatMap { name in containers.first { $0.objectName == name }?.keyKind } ?? .string
                    if let problem = NameGrammar.containerValueProblem(value, kind: kind) {
                        problems.append(type.container.map { "\(type.objectName) in \($0): \(problem)" } ?? problem)
                    }
                }
                return outcome(expected: "names that follow the grammar", problems: problems)
            }
        },
        ConformanceCheck(id: "names.reserved", level: 1,
                         summary: "No objectName or container uses the prefix MS:, and no MS:Custom businessID uses MS_ or MS..",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems = context.containers.filter { NameGrammar.isReservedObjectName($0.objectName) }.map {
                    "container '\($0.objectName)' uses 'MS:'"
                }
                for type in types {
                    if NameGrammar.isReservedObjectName(type.objectName) { problems.append("objectName '\(type.objectName)' uses 'MS:'") }
                    if type.container == nil, let id = type.businessID, NameGrammar.isReservedBusinessID(id) {
                        problems.append("businessID '\(id)' uses a reserved prefix")
                    }
                }
                return outcome(expected: "no reserved prefixes", problems: problems)
            }
        },
        ConformanceCheck(id: "names.unique", level: 1,
                         summary: "No objectName (of a type or a container) appears twice in the plugin, nor a value twice in one container.",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                func duplicates(_ names: [String], _ kind: String) -> [String] {
                    Dictionary(grouping: names, by: { $0 }).filter { $0.value.count > 1 }.sorted { $0.key < $1.key }.map { name, copies in
                        "\(kind) '\(name)' appears \(copies.count) times"
                    }
                }
                let names = types.map(\.objectName) + context.containers.map(\.objectName)
                let values = types.compactMap { type in type.businessID.map { value in type.container.map { "\(value)' in '\($0)" } ?? value } }
                let problems = duplicates(names, "objectName") + duplicates(values, "businessID")
                return outcome(expected: "unique names", problems: problems)
            }
        },
        ConformanceCheck(id: "names.clash", level: 2,
                         summary: "No name clashes with the plugins in the --against folders (read from their metadata); "
                            + "another copy of the same plugin is a replacement, not a clash.",
                         requires: ["metadata.present"]) { context in
            guard !context.against.isEmpty else { return .skipped("no --against folders given") }
            guard case .success(let metadata) = context.metadata else { return .skipped("no metadata") }
            let others = context.against.flatMap(InstalledPlugin.all(in:))
            let problems = NameClashes.find(metadata, ownPath: context.path, among: others)
            return outcome(expected: "no clashes with \(context.against.joined(separator: ", "))", problems: problems)
        },
        ConformanceCheck(id: "persistence.valid", level: 1, summary: "Every persistence flag is 0, 1, 3 or 16.",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let problems = types.filter { Persistence(rawValue: $0.persistenceValue) == nil }.map {
                    "\($0.objectName) has persistence \($0.persistenceValue)"
                }
                return outcome(expected: "persistence 0, 1, 3 or 16", problems: problems)
            }
        },
        ConformanceCheck(id: "examples.present", level: 1, summary: "Every type ships at least one example content.",
                         requires: ["types.functions"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                let problems = types.compactMap { type -> String? in
                    if let problem = type.examplesProblem { return "\(type.objectName): \(problem)" }
                    return type.examples.isEmpty ? "\(type.objectName) ships no example" : nil
                }
                return outcome(expected: "at least one example per type", problems: problems)
            }
        },
        ConformanceCheck(id: "examples.decode", level: 1, summary: "Every example content decodes.", requires: ["examples.present"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                for type in types { _ = try type.decodedExamples() }
                return .passed
            }
        },
        ConformanceCheck(id: "persistence.status-no-push", level: 2, summary: "Status types give no push content.",
                         requires: ["examples.decode"]) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in types where type.persistenceValue == Persistence.status.rawValue {
                    for (example, content) in try type.decodedExamples() {
                        if let (status, bytes) = content.rawPushContent(), status == MISSIVE_OK {
                            problems.append("\(type.objectName) gives push content \(preview(bytes)) for \(preview(example))")
                        }
                    }
                }
                return outcome(expected: "MISSIVE_ABSENT or no push_content for status types", problems: problems)
            }
        },
    ]
}
