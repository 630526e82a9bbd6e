import MissiveCore
import Foundation

/// A plain text message, `MS:Text`.
public struct TextMessage: MessageType, Codable, Hashable {
    public static let objectName = "MS:Text"
    public static let persistence = Persistence.counted
    public static var examples: [TextMessage] { [TextMessage(content: "Hello, Missive!"), TextMessage(content: "héllo 👋", extra: "x")] }

    /// The text.
    public var content: String
    /// Application data carried along, not shown.
    public var extra: String?

    /// Creates a text message.
    public init(content: String, extra: String? = nil) {
        self.content = content
        self.extra = extra
    }

    public var digest: String { content.oneLine }
    public var searchableWords: [String]? { [content] }
}

/// An image, `MS:Image`.
public struct ImageMessage: MessageType, MediaMessageContent, Codable, Hashable {
    public static let objectName = "MS:Image"
    public static let persistence = Persistence.counted
    public static var examples: [ImageMessage] {
        [ImageMessage(remoteURL: "https://example.com/cat.png", mimeType: "image/png", sizeBytes: 20480, width: 640, height: 480)]
    }

    /// Where the image can be downloaded.
    public var remoteURL: String?
    /// A local copy.
    public var localPath: String?
    /// The image's MIME type.
    public var mimeType: String
    /// The size in bytes.
    public var sizeBytes: Int64?
    /// The width in pixels.
    public var width: Int?
    /// The height in pixels.
    public var height: Int?

    /// Creates an image message.
    public init(remoteURL: String? = nil, localPath: String? = nil, mimeType: String, sizeBytes: Int64? = nil, width: Int? = nil, height: Int? = nil) {
        self.remoteURL = remoteURL
        self.localPath = localPath
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
        self.width = width
        self.height = height
    }

    public var digest: String { "[Image]" }
    public var media: MediaReference { MediaReference(remoteURL: remoteURL, localPath: localPath, mimeType: mimeType, sizeBytes: sizeBytes) }
}

/// A voice clip, `MS:Voice`.
public struct VoiceMessage: MessageType, MediaMessageContent, Codable, Hashable {
    public static let objectName = "MS:Voice"
    public static let persistence = Persistence.counted
    public static var examples: [VoiceMessage] {
        [VoiceMessage(remoteURL: "https://example.com/hello.ogg", mimeType: "audio/ogg", sizeBytes: 8000, durationSeconds: 3)]
    }

    /// Where the clip can be downloaded.
    public var remoteURL: String?
    /// A local copy.
    public var localPath: String?
    /// The clip's MIME type.
    public var mimeType: String
    /// The size in bytes.
    public var sizeBytes: Int64?
    /// The duration in whole seconds.
    public var durationSeconds: Int

    /// Creates a voice message.
    public init(remoteURL: String? = nil, localPath: String? = nil, mimeType: String, sizeBytes: Int64? = nil, durationSeconds: Int) {
        self.remoteURL = remoteURL
        self.localPath = localPath
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
        self.durationSeconds = durationSeconds
    }

    public var digest: String { "[Voice] \(durationSeconds)\"" }
    public var media: MediaReference { MediaReference(remoteURL: remoteURL, localPath: localPath, mimeType: mimeType, sizeBytes: sizeBytes) }
}

/// A video, `MS:Video`.
public struct VideoMessage: MessageType, MediaMessageContent, Codable, Hashable {
    public static let objectName = "MS:Video"
    public static let persistence = Persistence.counted
    public static var examples: [VideoMessage] {
        [VideoMessage(remoteURL: "https://example.com/clip.mp4", mimeType: "video/mp4", sizeBytes: 1_048_576, durationSeconds: 12)]
    }

    /// Where the video can be downloaded.
    public var remoteURL: String?
    /// A local copy.
    public var localPath: String?
    /// The video's MIME type.
    public var mimeType: String
    /// The size in bytes.
    public var sizeBytes: Int64?
    /// The duration in whole seconds.
    public var durationSeconds: Int

    /// Creates a video message.
    public init(remoteURL: String? = nil, localPath: String? = nil, mimeType: String, sizeBytes: Int64? = nil, durationSeconds: Int) {
        self.remoteURL = remoteURL
        self.localPath = localPath
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
        self.durationSeconds = durationSeconds
    }

    public var digest: String { "[Video]" }
    public var media: MediaReference { MediaReference(remoteURL: remoteURL, localPath: localPath, mimeType: mimeType, sizeBytes: sizeBytes) }
}

/// A file, `MS:File`.
public struct FileMessage: MessageType, MediaMessageContent, Codable, Hashable {
    public static let objectName = "MS:File"
    public static let persistence = Persistence.counted
    public static var examples: [FileMessage] {
        [FileMessage(name: "report.pdf", remoteURL: "https://example.com/report.pdf", mimeType: "application/pdf", sizeBytes: 52000)]
    }

    /// The file's name as shown to people.
    public var name: String
    /// Where the file can be downloaded.
    public var remoteURL: String?
    /// A local copy.
    public var localPath: String?
    /// The file's MIME type.
    public var mimeType: String
    /// The size in bytes.
    public var sizeBytes: Int64?

    /// Creates a file message.
    public init(name: String, remoteURL: String? = nil, localPath: String? = nil, mimeType: String, sizeBytes: Int64? = nil) {
        self.name = name
        self.remoteURL = remoteURL
        self.localPath = localPath
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
    }

    public var digest: String { "[File] \(name.oneLine)" }
    public var searchableWords: [String]? { [name] }
    public var media: MediaReference { MediaReference(remoteURL: remoteURL, localPath: localPath, mimeType: mimeType, sizeBytes: sizeBytes) }
}

/// A shared location, `MS:Location`.
public struct LocationMessage: MessageType, Codable, Hashable {
    public static let objectName = "MS:Location"
    public static let persistence = Persistence.counted
    public static var examples: [LocationMessage] {
        [LocationMessage(latitude: 48.8584, longitude: 2.2945, poi: "Eiffel Tower")]
    }

    /// Degrees north.
    public var latitude: Double
    /// Degrees east.
    public var longitude: Double
    /// The name of the place, if any.
    public var poi: String?

    /// Creates a location message.
    public init(latitude: Double, longitude: Double, poi: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.poi = poi
    }

    /// Decodes with the generated coding, then checks the coordinates.
    public init(decoding content: Data) throws {
        self = try MissiveJSON.decode(Self.self, from: content)
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw MissiveError(.malformedContent, "coordinates out of range: \(latitude), \(longitude)")
        }
    }

    public var digest: String { poi.map { "[Location] \($0.oneLine)" } ?? "[Location]" }
    public var searchableWords: [String]? { poi.map { [$0] } }
}

extension String {
    /// The text with line breaks folded into spaces, for one-line digests.
    var oneLine: String {
        // Every line break (U+000A–U+000D, U+0085, U+2028, U+2029) has a byte in 0x0A–0x0D or starts with 0xC2
        // or 0xE2: text without those bytes, nearly all text, has none, and is not walked by Character.
        guard utf8.contains(where: { (0x0A...0x0D).contains($0) || $0 == 0xC2 || $0 == 0xE2 }), contains(where: \.isNewline) else {
            return self
        }
        return split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

// MARK: - Views

extension TextMessage: MessageViewContent {
    /// The text, with its line breaks.
    public var view: ViewElement { .text(content) }
}

extension ImageMessage: MessageViewContent {
    /// The image at its size, when it has a URL; else its digest.
    public var view: ViewElement {
        guard let remoteURL else { return .text(digest, role: .caption) }
        return .image(url: remoteURL, width: width, height: height, alt: "Image")
    }
}

extension VoiceMessage: MessageViewContent {
    /// Its duration, and a link to play it when it has a URL.
    public var view: ViewElement {
        .vstack {
            ViewElement.facts(["Voice message": MediaSize.duration(durationSeconds)])
            if let remoteURL { ViewElement.link("Play", url: remoteURL) }
        }
    }
}

extension VideoMessage: MessageViewContent {
    /// Its duration, and a link to watch it when it has a URL.
    public var view: ViewElement {
        .vstack {
            ViewElement.facts(["Video": MediaSize.duration(durationSeconds)])
            if let remoteURL { ViewElement.link("Watch", url: remoteURL) }
        }
    }
}

extension FileMessage: MessageViewContent {
    /// Its name, type and size, and a download link when it has a URL.
    public var view: ViewElement {
        .vstack {
            ViewElement.text(name, role: .title)
            if let sizeBytes {
                ViewElement.facts(["Type": mimeType, "Size": MediaSize.bytes(sizeBytes)])
            } else {
                ViewElement.facts(["Type": mimeType])
            }
            if let remoteURL { ViewElement.link("Download", url: remoteURL) }
        }
    }
}

extension LocationMessage: MessageViewContent {
    /// The place's name, its coordinates, and a link to a map.
    public var view: ViewElement {
        let coordinates = "\(MediaSize.degrees(latitude)), \(MediaSize.degrees(longitude))"
        return .vstack {
            if let poi { ViewElement.text(poi, role: .title) }
            ViewElement.text(coordinates, role: .caption)
            ViewElement.link("Open map", url: "https://www.openstreetmap.org/?mlat=\(latitude)&mlon=\(longitude)")
        }
    }
}

/// Sizes and durations in words, for the built-in views.
enum MediaSize {
    /// `3 s`, `2 min 5 s`.
    static func duration(_ seconds: Int) -> String {
        seconds < 60 ? "\(seconds) s" : "\(seconds / 60) min \(seconds % 60) s"
    }

    /// `812 B`, `50.8 KB`, `1.0 MB` (powers of 1024).
    static func bytes(_ count: Int64) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return "\((value * 10).rounded() / 10) \(units[unit])"
    }

    /// Degrees with five decimals.
    static func degrees(_ value: Double) -> String {
        let scaled = (value * 100_000).rounded() / 100_000
        return "\(scaled)"
    }
}
