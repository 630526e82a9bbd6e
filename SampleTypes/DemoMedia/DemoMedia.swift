import Foundation
import MissivePluginKit

/// A sticker: a remote image with its MIME type and size. A media type.
@MissiveMessage("demo:sticker", businessID: "sticker", persistence: .counted)
struct StickerMessage: Codable, MessageContentView, MediaMessageContent {
    var pack: String
    var name: String
    var url: String
    var mimeType: String
    var sizeBytes: Int64

    static var examples: [StickerMessage] {
        [StickerMessage(pack: "cats", name: "wave", url: "https://stickers.example.com/cats/wave.webp", mimeType: "image/webp", sizeBytes: 18_432)]
    }

    init(pack: String, name: String, url: String, mimeType: String, sizeBytes: Int64) {
        self.pack = pack
        self.name = name
        self.url = url
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decoder.decode(Self.self, from: content)
        if let problem = media.problem { throw StickerError(description: problem) }
    }

    var digest: String { "[Sticker] \(name)" }
    var searchableWords: [String]? { [pack, name] }
    var media: MediaReference { MediaReference(remoteURL: url, mimeType: mimeType, sizeBytes: sizeBytes) }
}

struct StickerError: Error, CustomStringConvertible {
    let description: String
}

#MissivePlugin(name: "DemoMedia", version: "1.0.0", vendor: "Missive Samples", types: [StickerMessage.self])
