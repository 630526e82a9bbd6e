import Foundation
import Missive
import CompiledDemoMedia
import CompiledDemoMessages
import SimdjsonReference
import Synchronization
import SwiftProtobuf

/// One way of turning an envelope line into a message with its digest and searchable words.
///
/// `decode` returns a small number derived from what it read (digest length plus word count), so that the
/// optimiser cannot drop the work, and so that the decoders can be checked against each other.
protocol BenchDecoder: Sendable {
    var name: String { get }
    func decode(_ line: Corpus.Line) -> Int
}

// MARK: - Missive, through the registry: the plugins, and the floor with the same types compiled in

/// Decodes through a ``MessageRegistry``, as a host does: `decode(line:)`, then the digest and the words.
///
/// Two registries go through it: the sample plugins loaded from their `.so` files, and the floor, the same
/// Swift types compiled into the benchmark and registered as native types. Both hold the built-in types.
struct RegistryDecoder: BenchDecoder {
    let registry: MessageRegistry
    let name: String

    func decode(_ line: Corpus.Line) -> Int {
        guard let message = try? registry.decode(line: line.missive) else { return -1 }
        return message.digest.utf8.count + message.content.searchableWords.count
    }

    /// What a host sees of a line, in full, for the agreement check: known or not, the type, the digest,
    /// the push text, the words, and the content it would send again.
    func reading(_ line: Corpus.Line) -> String {
        do {
            let message = try registry.decode(line: line.missive)
            let content = message.content
            let sent = (try? content.encodedContent()).map { String(decoding: $0, as: UTF8.self) } ?? "encode failed"
            return [
                message.isKnown ? "known" : "unknown", content.objectName, message.digest, content.pushContent ?? "no push",
                content.searchableWords.joined(separator: "|"), sent, "\(message.persistence)",
            ].joined(separator: " · ")
        } catch {
            return "refused: \(error)"
        }
    }

    /// How a line is labelled in the per-type table: the type that reads it (`MS:Custom → demo:poll` for a
    /// container), or what is wrong with it.
    func label(_ line: Corpus.Line) -> String {
        guard let message = try? registry.decode(line: line.missive) else { return "malformed envelope" }
        let sentAs = message.envelope.objectName
        guard message.isKnown else {
            return message.unknown?.refusingType != nil ? "malformed content (\(sentAs))" : "unknown type (\(sentAs))"
        }
        let type = message.content.objectName
        return type == sentAs ? type : "\(sentAs) → \(type)"
    }

    /// The sample plugins loaded from `directory`, with the built-in types.
    static func plugins(_ registry: MessageRegistry) -> RegistryDecoder {
        RegistryDecoder(registry: registry, name: "Missive, sample plugins (.so)")
    }

    /// The floor: the sample plugins' Swift types compiled in and registered natively, with the built-in
    /// types, in the same kind of registry. CRating is written in C and has no Swift type to compile in: its
    /// `.so` is registered in both registries, so its lines cross the C boundary in both (a C function call
    /// either way; the plugin's only extra cost is that call going through a pointer).
    static func compiledIn(plugins: [LoadedPlugin]) throws -> RegistryDecoder {
        var builder = MessageRegistry.Builder()
        for type in compiledDemoMessagesTypes + compiledDemoMediaTypes { try register(type, in: &builder) }
        for plugin in plugins where plugin.info.name == "CRating" {
            let refused = builder.register(plugin)
            guard refused.isEmpty else { throw BenchError("CRating refused: \(refused)") }
        }
        return RegistryDecoder(registry: builder.build(), name: "Same types compiled in (floor)")
    }

    private static func register<T: MessageType>(_ type: T.Type, in builder: inout MessageRegistry.Builder) throws {
        try builder.register(type)
    }
}

// MARK: - A parse-only reference: simdjson

/// simdjson's DOM parser reading each line and nothing more: no types, no digest. It bounds from below what
/// parsing the same bytes costs; it is not a decoder, so it takes no part in the agreement check.
final class SimdjsonReference: @unchecked Sendable {
    static let name = "simdjson, parse only (reference)"
    /// Every line, copied once into a buffer with the padding simdjson reads past a document's end; owned
    /// by this object and read only.
    private let buffers: [UnsafeMutableBufferPointer<CChar>]
    private let lengths: [Int]

    init(_ corpus: Corpus) {
        let padding = missive_simdjson_padding()
        buffers = corpus.lines.map { line in
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: line.missive.count + padding)
            buffer.initialize(repeating: 0)
            for (offset, byte) in line.missive.enumerated() { buffer[offset] = CChar(bitPattern: byte) }
            return buffer
        }
        lengths = corpus.lines.map(\.missive.count)
    }

    deinit {
        for buffer in buffers { buffer.deallocate() }
    }

    /// Messages per second, parsing `messages` lines on `threads` threads, each with its own parser.
    func throughput(messages: Int, threads: Int) -> Double {
        let count = buffers.count
        let checksum = Mutex(0)
        let start = now()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            guard let parser = missive_simdjson_parser_create() else { fatalError("simdjson: out of memory") }
            defer { missive_simdjson_parser_free(parser) }
            var sum = 0
            var index = thread
            while index < messages {
                let number = index % count
                sum &+= missive_simdjson_parse(parser, buffers[number].baseAddress, lengths[number], buffers[number].count)
                index += threads
            }
            checksum.withLock { $0 &+= sum }
        }
        let elapsed = now() - start
        if checksum.withLock({ $0 }) == Int.min { print("") }  // keeps the work observable
        return Double(messages) / elapsed
    }

    /// The lines simdjson refuses, which must be exactly the corpus's malformed envelopes.
    func refusedLines() -> [Int] {
        guard let parser = missive_simdjson_parser_create() else { return [] }
        defer { missive_simdjson_parser_free(parser) }
        return buffers.indices.filter { missive_simdjson_parse(parser, buffers[$0].baseAddress, lengths[$0], buffers[$0].count) < 0 }
    }
}

// MARK: - The floor: plain Codable structs, the same JSON library, in process

/// The former floor: one JSONDecoder pass per line, envelope included, into Codable structs, dispatching on
/// `objectName` (and on `businessID` for `MS:Custom`), then the same digest and words as the plugins compute.
/// It measures Foundation's decoder against Missive's envelope parser, not the plugin boundary, so it is
/// kept as an extra row.
struct NativeDecoder: BenchDecoder {
    var name: String { "Whole line through JSONDecoder (former floor)" }
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
