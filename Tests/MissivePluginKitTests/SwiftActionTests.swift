import CMissivePlugin
import Foundation
@_spi(Benchmarks) import Missive
import MissivePluginKit
import Testing

/// A type compiled into the tests, whose actions take every parameter type the Swift SDK supports.
@MissiveMessage("test:all-types", persistence: .persisted)
struct AllTypesMessage: Codable, MessageTextContent {
    var text: String

    static var examples: [AllTypesMessage] { [AllTypesMessage(text: "example")] }

    var digest: String { text }

    /// Every parameter type, written back as text.
    @MissiveAction("mix", title: "Mix", icon: "mix", priority: 3, examples: [[1, 2, 3, 4.5, true, "six"]])
    func mix(a: Int32, _ b: Int64, count c: Int, d: Double, flag: Bool, name: String) -> AllTypesMessage {
        AllTypesMessage(text: "\(text): \(a) \(b) \(c) \(d) \(flag) \(name)")
    }

    /// A composer action that refuses a negative count.
    @MissiveAction("test.make", title: "Make", icon: "plus")
    static func make(count: Int, flag: Bool) throws -> Self {
        guard count >= 0 else { throw ActionRefusal("a count is not negative") }
        return AllTypesMessage(text: "\(count) \(flag)")
    }
}

/// The C functions `@MissiveAction` generates, called through libffi as a host calls them: every Swift
/// parameter type is converted, results are encoded, and `ActionRefusal` becomes `MISSIVE_INVALID_CONTENT`
/// with its reason.
@Suite struct SwiftActionTests {
    /// What one call wrote into the sink, with the reason mark's place.
    final class Collected {
        var bytes: [UInt8] = []
        var mark: Int?
    }

    /// The plugin descriptor the SDK builds for the type, and its `missive.actions.v1` extension.
    static let export = PluginExport(name: "AllTypes", version: "1.0.0", vendor: "Missive Tests", types: [AllTypesMessage.self])

    static func actions() throws -> [missive_action] {
        let plugin = try #require(export.entry(host: nil)).assumingMemoryBound(to: missive_plugin.self).pointee
        let getExtension = try #require(plugin.get_plugin_extension)
        let table = try #require(getExtension(plugin.context, MISSIVE_ACTIONS_EXTENSION)).assumingMemoryBound(to: missive_actions_v1.self).pointee
        return (0..<Int(table.action_count)).map { table.actions[$0]!.pointee }
    }

    /// Calls `action` through libffi with `values`, on a handle decoded from `content` for a message action.
    static func call(_ action: missive_action, _ values: [ActionValue], content: String? = nil) throws -> (status: Int32, output: String, reason: String?) {
        let signature = try ActionSignature(parsing: String(cString: action.signature))
        let function = try ActionFunction(signature: signature, address: unsafeBitCast(try #require(action.function), to: UnsafeRawPointer.self))
        let plugin = try #require(export.entry(host: nil)).assumingMemoryBound(to: missive_plugin.self).pointee
        let type = try #require(plugin.types[0]).pointee
        var handle: OpaquePointer?
        if let content {
            let bytes = Array(content.utf8)
            var errors = missive_sink(context: nil, write: { _, _, _ in })
            #expect(bytes.withUnsafeBufferPointer { type.decode!(type.context, $0.baseAddress, $0.count, &handle, &errors) } == MISSIVE_OK)
        }
        defer { if let handle { type.release!(type.context, handle) } }
        let collected = Collected()
        var sink = missive_sink(context: Unmanaged.passUnretained(collected).toOpaque()) { context, bytes, length in
            let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
            guard let bytes else {
                collected.mark = collected.bytes.count
                return
            }
            collected.bytes += UnsafeBufferPointer(start: bytes, count: length)
        }
        let status = withUnsafePointer(to: &sink) { function.call(message: handle, values: values, sink: UnsafeRawPointer($0)) }
        let text = String(decoding: collected.bytes, as: UTF8.self)
        guard let mark = collected.mark else { return (status, text, nil) }
        return (status, String(decoding: collected.bytes[..<mark], as: UTF8.self), String(decoding: collected.bytes[mark...], as: UTF8.self))
    }

    @Test func theMacroDeclaresEachActionWithItsSignature() throws {
        let actions = try Self.actions()
        #expect(actions.map { String(cString: $0.id) } == ["mix", "test.make"])
        #expect(String(cString: actions[0].signature) == "int32(message message, int32 a, int64 b, int64 c, double d, bool flag, string name, sink out)")
        #expect(String(cString: actions[1].signature) == "int32(int64 count, bool flag, sink out)")
        #expect(actions[0].kind == UInt32(MISSIVE_ACTION_MESSAGE) && actions[1].kind == UInt32(MISSIVE_ACTION_COMPOSER))
        #expect(actions[0].priority == 3 && String(cString: actions[0].object_name) == "test:all-types")
        #expect(String(cString: actions[0].examples) == #"[[1,2,3,4.5,true,"six"]]"#)
        #expect(actions[0].symbol == nil, "the SDK gives a function pointer, not a symbol")
    }

    @Test func everySwiftParameterTypeArrivesThroughLibffi() throws {
        let mix = try Self.actions()[0]
        let result = try Self.call(
            mix, [.int32(-5), .int64(.max), .int64(-3), .double(2.5), .bool(true), .string(ActionString(Array("héllo ✓".utf8)))],
            content: #"{"text":"poll"}"#)
        #expect(result.status == MISSIVE_OK)
        #expect(result.output == #"{"text":"poll: -5 9223372036854775807 -3 2.5 true héllo ✓"}"#)

        let make = try Self.actions()[1]
        let made = try Self.call(make, [.int64(7), .bool(false)])
        #expect(made.status == MISSIVE_OK && made.output == #"{"text":"7 false"}"#)
        let refused = try Self.call(make, [.int64(-1), .bool(true)])
        #expect(refused.status == MISSIVE_INVALID_CONTENT)
        #expect(refused.reason == "a count is not negative")
    }
}
