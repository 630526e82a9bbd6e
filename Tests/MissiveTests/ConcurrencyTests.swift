import Foundation
import Missive
import MissiveTestSupport
import Testing

/// The registry and the plugins are used from many threads at once, as the ABI's threading contract allows.
@Suite struct ConcurrencyTests {
    /// What a host reads from one decoded message.
    struct Observation: Hashable, Sendable {
        var known: Bool
        var digest: String
        var words: [String]
        var push: String?
        var persistence: Persistence
        var content: [UInt8]
    }

    static func observe(_ registry: MessageRegistry, _ lines: [[UInt8]]) throws -> [Observation] {
        try lines.map { line in
            let message = try registry.decode(line: line)
            return Observation(
                known: message.isKnown, digest: message.digest, words: message.content.searchableWords,
                push: message.content.pushContent, persistence: message.persistence, content: try message.reencoded().content)
        }
    }

    @Test func eightThreadsDecodingTheSameInputsGetIdenticalResults() async throws {
        let registry = try Fixtures.sampleRegistry()
        let lines = try Fixtures.conversationLines()
        let baseline = try Self.observe(registry, lines)
        #expect(baseline.contains { $0.known } && baseline.contains { !$0.known })

        let threads = 8
        let rounds = 200
        let results = Locked<[[Observation]]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<rounds {
                let observed = (try? Self.observe(registry, lines)) ?? []
                if observed != baseline { results.withLock { $0.append(observed) } }
            }
        }
        #expect(results.withLock { $0.isEmpty }, "some threads saw different results")
    }

    @Test func oneDecodedMessageIsReadFromManyThreads() throws {
        let registry = try Fixtures.sampleRegistry()
        let message = registry.decode(Fixtures.envelope("demo:rating", #"{"score":3,"comment":"shared handle"}"#))
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<500 where message.digest != "[Rating] ★★★☆☆ shared handle" || message.content.searchableWords != ["shared handle"] {
                mismatches.withLock { $0 += 1 }
            }
        }
        #expect(mismatches.withLock { $0 } == 0)
    }
}
