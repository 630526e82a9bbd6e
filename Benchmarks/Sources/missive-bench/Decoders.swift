import Foundation
import Missive
import SwiftProtobuf

/// One way of turning an envelope line into a message with its digest and searchable words.
///
/// `decode` returns a small number derived from what it read (digest length plus word count), so that the
/// optimiser cannot drop the work, and so that the decoders can be checked against each other.
protocol BenchDecoder: Sendable {
    var name: String { get }
    func decode(_ line: Corpus.Line) -> Int
}

// MARK: - Missive, through the registry and the plugins

struct MissiveDecoder: BenchDecoder {
    let registry: MessageRegistry
    var name: String { "Missive (plugins)" }

    func decode(_ line: Corpus.Line) -> Int {
        guard let message = try? registry.decode(line: line.missive) else { return -1 }
        return message.digest.utf8.count + message.content.searchableWords.count
    }
}

// MARK: - The floor: plain Codable structs, the same JSON library, in process

/// The native floor: one JSONDecoder pass per line into Codable structs, dispatching on `objectName` (and on
/// `businessID` for `MS:Custom`), then the same digest and words as the plugins compute.
struct NativeDecoder: BenchDecoder {
    var name: String { "Native Codable (floor)" }
    private let decoder = JSONDecoder()

    func decode(_ line: Corpus.Line) -> Int {
        guard let envelope = try? decoder.decode(NativeEnvelope.self, from: Data(line.missive)) else { return -1 }
        // Unknown content shows the sender's fallback text, else names the type that refused it, else its own name.
        let (digest, words) = envelope.content?.view
            ?? (envelope.fallbackText ?? envelope.refusedBy.map { "[Invalid message: \($0)]" } ?? "[Unsupported message: \(envelope.objectName)]", [])
        return digest.utf8.count + words.count
    }
}

struct NativeEnvelope: Decodable {
    let id: String, conversationID: String, senderID: String, sentAt: Int64, objectName: String
    let fallbackText: String?
    let content: NativeContent?
    /// The type whose content failed to decode, when that is why there is no content.
    let refusedBy: String?

    private enum Keys: String, CodingKey { case id, conversationID, senderID, sentAt, objectName, fallbackText, content }
    private struct Probe: Decodable { let businessID: String? }

    init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(String.self, forKey: .id)
        conversationID = try container.decode(String.self, forKey: .conversationID)
        senderID = try container.decode(String.self, forKey: .senderID)
        sentAt = try container.decode(Int64.self, forKey: .sentAt)
        objectName = try container.decode(String.self, forKey: .objectName)
        fallbackText = try container.decodeIfPresent(String.self, forKey: .fallbackText)
        var kind = objectName
        if kind == "MS:Custom", let id = try container.decode(Probe.self, forKey: .content).businessID { kind = "#" + id }
        do {
            switch kind {
            case "demo:link", "#text_link": content = .link(try container.decode(Link.self, forKey: .content))
            case "demo:poll", "#poll": content = .poll(try container.decode(Poll.self, forKey: .content))
            case "demo:typing": content = .typing(try container.decode(Typing.self, forKey: .content))
            case "demo:sticker", "#sticker": content = .sticker(try container.decode(Sticker.self, forKey: .content))
            case "demo:rating", "#evaluation": content = .rating(try container.decode(Rating.self, forKey: .content))
            case "MS:Text": content = .text(try container.decode(Text.self, forKey: .content))
            case "MS:Image": content = .image(try container.decode(Image.self, forKey: .content))
            case "MS:Location": content = .location(try container.decode(Location.self, forKey: .content))
            default: content = nil
            }
            refusedBy = nil
        } catch is DecodingError {
            // Malformed content: kept as unknown, as Missive does, naming the type that refused it.
            content = nil
            refusedBy = Self.typeNames[kind]
        }
    }

    /// The objectName of the type each dispatch key reaches.
    static let typeNames = [
        "demo:link": "demo:link", "#text_link": "demo:link", "demo:poll": "demo:poll", "#poll": "demo:poll", "demo:typing": "demo:typing",
        "demo:sticker": "demo:sticker", "#sticker": "demo:sticker", "demo:rating": "demo:rating", "#evaluation": "demo:rating",
        "MS:Text": "MS:Text", "MS:Image": "MS:Image", "MS:Location": "MS:Location",
    ]

    struct Link: Decodable { let text: String, link: String }
    struct Poll: Decodable { let question: String, options: [String] }
    struct Typing: Decodable { let userID: String, isTyping: Bool }
    struct Sticker: Decodable { let pack: String, name: String, url: String, mimeType: String, sizeBytes: Int64 }
    struct Rating: Decodable { let score: Int, comment: String? }
    struct Text: Decodable { let content: String, extra: String? }
    struct Image: Decodable { let remoteURL: String?, localPath: String?, mimeType: String, sizeBytes: Int64?, width: Int?, height: Int? }
    struct Location: Decodable { let latitude: Double, longitude: Double, poi: String? }
}

enum NativeContent {
    case link(NativeEnvelope.Link), poll(NativeEnvelope.Poll), typing(NativeEnvelope.Typing), sticker(NativeEnvelope.Sticker)
    case rating(NativeEnvelope.Rating), text(NativeEnvelope.Text), image(NativeEnvelope.Image), location(NativeEnvelope.Location)

    /// The same digest and words as the sample plugins and built-in types give.
    var view: (String, [String]) {
        switch self {
        case .link(let value): (value.text, [value.text])
        case .poll(let value): ("[Poll] \(value.question)", [value.question] + value.options)
        case .typing(let value): (value.isTyping ? "\(value.userID) is typing…" : "\(value.userID) stopped typing", [])
        case .sticker(let value): ("[Sticker] \(value.name)", [value.pack, value.name])
        case .rating(let value): ("[Rating] \(String(repeating: "★", count: value.score))\(String(repeating: "☆", count: 5 - value.score)) \(value.comment ?? "")", value.comment.map { [$0] } ?? [])
        case .text(let value): (value.content, [value.content])
        case .image: ("[Image]", [])
        case .location(let value): (value.poi.map { "[Location] \($0)" } ?? "[Location]", value.poi.map { [$0] } ?? [])
        }
    }
}

// MARK: - The peer: swift-protobuf's google.protobuf.Any with a type registry

struct ProtobufDecoder: BenchDecoder {
    var name: String { "swift-protobuf Any (peer)" }
    private let options: JSONDecodingOptions = {
        var options = JSONDecodingOptions()
        options.ignoreUnknownFields = true
        return options
    }()

    static func registerTypes() {
        let types: [any SwiftProtobuf.Message.Type] = [
            Missive_Bench_Text.self, Missive_Bench_Image.self, Missive_Bench_Location.self, Missive_Bench_Link.self,
            Missive_Bench_Poll.self, Missive_Bench_Typing.self, Missive_Bench_Sticker.self, Missive_Bench_Rating.self,
        ]
        for type in types { Google_Protobuf_Any.register(messageType: type) }
    }

    func decode(_ line: Corpus.Line) -> Int {
        guard let envelope = try? Missive_Bench_Envelope(jsonUTF8Bytes: line.peer, options: options) else { return -1 }
        let (digest, words) = view(of: envelope.content) ?? (envelope.fallbackText.isEmpty ? "[Unsupported message: \(envelope.objectName)]" : envelope.fallbackText, [])
        return digest.utf8.count + words.count
    }

    /// Unpacks by switching on the type URL once (asking `isA` type after type would cost more than the decode).
    private func view(of any: Google_Protobuf_Any) -> (String, [String])? {
        do {
            switch any.typeURL {
            case "type.googleapis.com/missive.bench.Link":
                let value = try Missive_Bench_Link(unpackingAny: any)
                return (value.text, [value.text])
            case "type.googleapis.com/missive.bench.Poll":
                let value = try Missive_Bench_Poll(unpackingAny: any)
                return ("[Poll] \(value.question)", [value.question] + value.options)
            case "type.googleapis.com/missive.bench.Typing":
                let value = try Missive_Bench_Typing(unpackingAny: any)
                return (value.isTyping ? "\(value.userID) is typing…" : "\(value.userID) stopped typing", [])
            case "type.googleapis.com/missive.bench.Sticker":
                let value = try Missive_Bench_Sticker(unpackingAny: any)
                return ("[Sticker] \(value.name)", [value.pack, value.name])
            case "type.googleapis.com/missive.bench.Rating":
                let value = try Missive_Bench_Rating(unpackingAny: any)
                let score = Int(value.score)
                return ("[Rating] \(String(repeating: "★", count: score))\(String(repeating: "☆", count: 5 - score)) \(value.comment)", value.comment.isEmpty ? [] : [value.comment])
            case "type.googleapis.com/missive.bench.Text":
                let value = try Missive_Bench_Text(unpackingAny: any)
                return (value.content, [value.content])
            case "type.googleapis.com/missive.bench.Image":
                _ = try Missive_Bench_Image(unpackingAny: any)
                return ("[Image]", [])
            case "type.googleapis.com/missive.bench.Location":
                let value = try Missive_Bench_Location(unpackingAny: any)
                return (value.poi.isEmpty ? "[Location]" : "[Location] \(value.poi)", value.poi.isEmpty ? [] : [value.poi])
            default:
                return nil
            }
        } catch {
            return nil
        }
    }
}
