import CMissivePlugin
import Foundation

/// A type whose `@MissiveAction` methods the SDK exports; `@MissiveMessage` adds the conformance.
public protocol MissiveActionProviding {
    /// The type's actions, one per `@MissiveAction` method. Generated; don't write it.
    static var _missiveActions: [ActionExport] { get }
}

/// Thrown by an action to refuse arguments that fit its signature but make no sense for the message (an
/// option a poll does not have): the host reports `invalid-argument` with this reason
/// (`MISSIVE_INVALID_CONTENT`). Any other error is a failure (`MISSIVE_FAILED`) with its description.
public struct ActionRefusal: Error, CustomStringConvertible {
    /// Why, in one line.
    public let description: String

    /// A refusal saying why.
    public init(_ description: String) { self.description = description }
}

/// One action of a Swift type, as `@MissiveAction` declares it: what the plugin's `missive.actions.v1`
/// extension lists, with a C function that calls the method. Plugin authors don't use it directly.
public final class ActionExport: @unchecked Sendable {
    let kind: ActionKind
    let id: String
    let title: String
    let icon: String
    let priority: Int32
    let yields: ActionYield
    let signature: String
    let examples: [[ActionArgument]]
    let function: UnsafeRawPointer

    /// An action; `function` is the address of a `@convention(c)` function of `signature`.
    public init(
        kind: ActionKind, id: String, title: String, icon: String, priority: Int32, yields: ActionYield, signature: String, examples: [[ActionArgument]],
        function: UnsafeRawPointer
    ) {
        (self.kind, self.id, self.title, self.icon, self.priority) = (kind, id, title, icon, priority)
        (self.yields, self.signature, self.examples, self.function) = (yields, signature, examples, function)
    }

    /// The address of a `@convention(c)` function.
    public static func address<Function>(of function: Function) -> UnsafeRawPointer {
        unsafeBitCast(function, to: UnsafeRawPointer.self)
    }

    /// A string argument: NUL-terminated UTF-8 that the host checked.
    public static func string(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }

    /// Runs a message action that makes new content: the message behind `handle`, passed to `body`, and the
    /// content `body` returns written into `sink`.
    public static func performEdit<T: MessageType>(_ handle: OpaquePointer?, _ sink: UnsafeRawPointer?, as type: T.Type, _ body: (T) throws -> T) -> Int32 {
        guard let sink = sink?.assumingMemoryBound(to: missive_sink.self), let value = message(handle, as: T.self) else { return MISSIVE_FAILED }
        return answer(sink) { try body(value).encode() }
    }

    /// Runs a message action that gives a URL.
    public static func performURL<T: MessageType>(_ handle: OpaquePointer?, _ sink: UnsafeRawPointer?, as type: T.Type, _ body: (T) throws -> URL) -> Int32 {
        guard let sink = sink?.assumingMemoryBound(to: missive_sink.self), let value = message(handle, as: T.self) else { return MISSIVE_FAILED }
        return answer(sink) { Data(try body(value).absoluteString.utf8) }
    }

    /// Runs a composer action: the content `body` returns, written into `sink`.
    public static func compose<T: MessageType>(_ sink: UnsafeRawPointer?, _ body: () throws -> T) -> Int32 {
        guard let sink = sink?.assumingMemoryBound(to: missive_sink.self) else { return MISSIVE_FAILED }
        return answer(sink) { try body().encode() }
    }

    private static func message<T: MessageType>(_ handle: OpaquePointer?, as type: T.Type) -> T? {
        guard let handle else { return nil }
        return (Unmanaged<AnyMessageBox>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue() as? MessageBox<T>)?.value
    }

    /// Writes what `body` gives, or the reason it threw after the reason mark.
    private static func answer(_ sink: UnsafePointer<missive_sink>, _ body: () throws -> Data) -> Int32 {
        do {
            let data = try body()
            data.withUnsafeBytes { sink.pointee.write(sink.pointee.context, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
            return MISSIVE_OK
        } catch {
            sink.pointee.write(sink.pointee.context, nil, 0)
            let reason = error is ActionRefusal ? "\(error)" : MissiveJSON.describe(error)
            var text = reason.split(whereSeparator: \.isNewline).joined(separator: " ")
            text.withUTF8 { sink.pointee.write(sink.pointee.context, $0.baseAddress, $0.count) }
            return error is ActionRefusal ? MISSIVE_INVALID_CONTENT : MISSIVE_FAILED
        }
    }
}
