import Foundation
import MissivePluginKit

/// A sticker: a remote image with its MIME type and size. A media type.
@MissiveMessage("demo:sticker", businessID: "sticker", persistence: .counted)
struct StickerMessage: Codable, MessageTextContent, MediaMessageContent {
    var pack: String
    var name: String
    var url: String
    var mimeType: String
    var sizeBytes: Int64
    /// The image's size in pixels, when the sender gives it (optional: added after the first version).
    var width: Int?
    var height: Int?

    static var examples: [StickerMessage] {
        [
            StickerMessage(pack: "cats", name: "wave", url: "https://stickers.example.com/cats/wave.webp", mimeType: "image/webp", sizeBytes: 18_432),
            StickerMessage(
                pack: "cats", name: "thumbs-up", url: "https://stickers.example.com/cats/thumbs-up.webp", mimeType: "image/webp", sizeBytes: 20_480,
                width: 512, height: 512),
        ]
    }

    init(pack: String, name: String, url: String, mimeType: String, sizeBytes: Int64, width: Int? = nil, height: Int? = nil) {
        self.pack = pack
        self.name = name
        self.url = url
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
        self.width = width
        self.height = height
    }

    init(decoding content: Data) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
        if let problem = media.problem { throw StickerError(description: problem) }
        if (width ?? 0) < 0 || (height ?? 0) < 0 { throw StickerError(description: "a sticker's size cannot be negative") }
    }

    var digest: String { "[Sticker] \(name)" }
    var searchableWords: [String]? { [pack, name] }
    var media: MediaReference { MediaReference(remoteURL: url, mimeType: mimeType, sizeBytes: sizeBytes) }
}

extension StickerMessage: MessageViewContent {
    /// The image at its size (512 x 512 pixels, the usual sticker size, when the sender gives none), and
    /// its pack and name as a caption.
    var view: ViewElement {
        .vstack {
            ViewElement.image(url: url, width: width ?? 512, height: height ?? 512, alt: "Sticker \(name)")
            ViewElement.text("\(pack) / \(name)", role: .caption)
        }
    }
}

struct StickerError: Error, CustomStringConvertible {
    let description: String
}

// The plugin's entry. A host that compiles these types in (the decode benchmark's floor) defines
// MISSIVE_COMPILED_IN and registers the types itself, so it leaves the entry out.
#if !MISSIVE_COMPILED_IN
#MissivePlugin(name: "DemoMedia", version: "1.0.0", vendor: "Missive Samples", types: [StickerMessage.self])
#endif
