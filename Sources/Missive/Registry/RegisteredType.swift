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
        /// A plugin that runs in a worker process of its own.
        case isolated(IsolatedPlugin)
        /// A container such as `MS:Custom`: dispatch on the content's key.
        case container(MessageContainer)
        /// `MS:Unknown`: never decoded as itself.
        case unknown
    }

    /// The objectName.
    public let objectName: String
    /// The value under which ``container`` dispatches to this type, if any: for `MS:Custom`, the business
    /// identifier.
    public let businessID: String?
    /// The objectName of the container ``businessID`` belongs to: `MS:Custom` unless the type names
    /// another; `nil` when there is no ``businessID``.
    public let container: String?
    /// The persistence flag.
    public let persistence: Persistence
    /// Whether it is a media type.
    public let isMedia: Bool
    /// Where it comes from.
    public let origin: Origin
    let decoder: Decoder

    init(objectName: String, businessID: String?, container: String? = nil, persistence: Persistence, isMedia: Bool, origin: Origin, decoder: Decoder) {
        self.objectName = objectName
        self.businessID = businessID
        self.container = businessID == nil ? nil : (container ?? MessageContainer.custom.objectName)
        self.persistence = persistence
        self.isMedia = isMedia
        self.origin = origin
        self.decoder = decoder
    }

    /// When this entry is a container rather than a type, what it dispatches on.
    public var declaredContainer: MessageContainer? {
        if case .container(let container) = decoder { return container }
        return nil
    }

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
        // Its examples are in the worker, and the host runs no code of the plugin's.
        case .isolated, .container, .unknown: []
        }
    }

    private static func encodedExamples<T: MessageType>(_ type: T.Type) -> [[UInt8]] {
        T.examples.compactMap { try? Array($0.encode()) }
    }

    /// Decodes content of this type, or gives the reason it cannot. `received` is the same bytes as an
    /// array, which the content keeps.
    func decode(_ content: UnsafeBufferPointer<UInt8>, received: [UInt8]) -> Result<any MessageContent, MissiveError> {
        switch decoder {
        case .native(let type):
            return Self.decodeNative(type, content, received: received)
        case .plugin(let type):
            return type.decode(content, received: received).map { $0 }
        case .deferred(let plugin):
            return plugin.type(objectName).flatMap { $0.decode(content, received: received).map { $0 } }
        case .isolated(let plugin):
            return self.content(from: plugin.decode([(objectName, received)]).first, plugin: plugin, received: received)
        case .container, .unknown:
            return .failure(MissiveError(.malformedContent, "\(objectName) is not decoded directly", objectName: objectName))
        }
    }

    /// The content an isolated plugin's answer stands for, or its failure.
    func content(from answer: IsolatedPlugin.Answer?, plugin: IsolatedPlugin, received: [UInt8]) -> Result<any MessageContent, MissiveError> {
        switch answer {
        case .decoded(let parts)?: return .success(IsolatedContent(type: self, plugin: plugin, received: received, parts: parts))
        case .failed(let error)?: return .failure(error)
        case nil: return .failure(MissiveError(.pluginCrashed, "the plugin's worker gave no answer", file: plugin.path, objectName: objectName))
        }
    }

    private static func decodeNative<T: MessageType>(
        _ type: T.Type, _ content: UnsafeBufferPointer<UInt8>, received: [UInt8]
    ) -> Result<any MessageContent, MissiveError> {
        do {
            return .success(TypedContent(try T(decodingBytes: UnsafeRawBufferPointer(content)), received: received))
        } catch let error as MissiveError {
            return .failure(error)
        } catch {
            return .failure(MissiveError(.malformedContent, MissiveJSON.describe(error), objectName: T.objectName))
        }
    }
}
