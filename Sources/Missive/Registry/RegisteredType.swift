import Foundation
import MissiveCore

/// A message type known to a ``MessageRegistry``.
public struct RegisteredType: Sendable {
    /// Where a registered type comes from.
    public enum Origin: Sendable, Hashable {
        /// Built into Missive.
        case builtIn
        /// Registered by the host application as a Swift type.
        case application
        /// Provided by a plugin file.
        case plugin(PluginInfo)
    }

    /// How content of the type is decoded.
    enum Decoder: Sendable {
        /// A Swift ``MessageType``.
        case native(any MessageType.Type)
        /// A plugin's C functions.
        case plugin(PluginType)
        /// A plugin's C functions, once the plugin is loaded on first use.
        case deferred(DeferredPlugin)
        /// `MS:Custom`: dispatch on the content's `businessID`.
        case customDispatch
        /// `MS:Unknown`: never decoded as itself.
        case unknown
    }

    /// The objectName.
    public let objectName: String
    /// The business identifier, if any.
    public let businessID: String?
    /// The persistence flag.
    public let persistence: Persistence
    /// Whether it is a media type.
    public let isMedia: Bool
    /// Where it comes from.
    public let origin: Origin
    let decoder: Decoder

    /// The owner description used in clash errors.
    var ownerDescription: String {
        switch origin {
        case .builtIn: "Missive's built-in types"
        case .application: "the host application"
        case .plugin(let info): "plugin \(info.name) \(info.version) (\(info.path))"
        }
    }

    /// Example contents of the type, encoded: for conformance checks and tests.
    public var examples: [[UInt8]] {
        switch decoder {
        case .native(let type): Self.encodedExamples(type)
        case .plugin(let type): type.examples
        case .deferred(let plugin): (try? plugin.type(objectName).get())?.examples ?? []
        case .customDispatch, .unknown: []
        }
    }

    private static func encodedExamples<T: MessageType>(_ type: T.Type) -> [[UInt8]] {
        T.examples.compactMap { try? Array($0.encode()) }
    }

    /// Decodes content of this type, or gives the reason it cannot.
    func decode(_ content: UnsafeBufferPointer<UInt8>) -> Result<any MessageContent, MissiveError> {
        switch decoder {
        case .native(let type):
            return Self.decodeNative(type, content)
        case .plugin(let type):
            return type.decode(content).map { $0 }
        case .deferred(let plugin):
            return plugin.type(objectName).flatMap { $0.decode(content).map { $0 } }
        case .customDispatch, .unknown:
            return .failure(MissiveError(.malformedContent, "\(objectName) is not decoded directly", objectName: objectName))
        }
    }

    private static func decodeNative<T: MessageType>(_ type: T.Type, _ content: UnsafeBufferPointer<UInt8>) -> Result<any MessageContent, MissiveError> {
        do {
            return .success(TypedContent(try T(decoding: Data(content))))
        } catch let error as MissiveError {
            return .failure(error)
        } catch {
            return .failure(MissiveError(.malformedContent, MissiveJSON.describe(error), objectName: T.objectName))
        }
    }
}
