import Foundation

/// A file format the server recognizes from its first bytes, and the MIME types an upload may declare for it.
struct MediaFormat: Sendable {
    /// The format in words, for an error: `a PNG image`.
    let description: String
    /// The type the server stores when the upload declared none (or `application/octet-stream`).
    let mimeType: String
    /// The declared types that fit these bytes (the canonical one among them).
    let accepted: Set<String>
    /// Declared types that fit by their beginning: the office formats inside a ZIP, say.
    var acceptedPrefixes: [String] = []

    /// Whether an upload declared `type` (an essence, lowercased) may carry bytes of this format.
    func accepts(_ type: String) -> Bool {
        accepted.contains(type) || acceptedPrefixes.contains { type.hasPrefix($0) }
    }
}

/// What the server does with a declared MIME type and the first bytes of an upload.
///
/// - Bytes of a format with a signature (``formats``) must be declared as one of that format's types, or not at
///   all (no `Content-Type`, or `application/octet-stream`: then the format's own type is stored).
/// - A declared type that one of those formats accepts (every `image/*` among them, `video/mp4`,
///   `application/pdf`...) must come with that format's bytes. Any other `image/*` is refused: an image the server
///   cannot recognize is not stored under an image type.
/// - `image/svg+xml`, `text/*`, JSON and XML must be text (UTF-8 without control characters); SVG must hold `<svg`.
/// - Any other declared type, over bytes of no recognized format, is stored as `application/octet-stream`.
enum MediaSniffing {
    /// The bytes the server looks at: the first 4 KiB.
    static let headLength = 4096

    /// The type to store, or the reason the upload is refused (`type-mismatch`).
    ///
    /// - Parameters:
    ///   - declared: the essence of the declared type (lowercased, without parameters), `nil` when none was.
    ///   - head: the first ``headLength`` bytes (all of them for a smaller file).
    ///   - isWhole: whether `head` is the whole file.
    static func storedType(declared: String?, head: [UInt8], isWhole: Bool) -> Result<String, MediaRefusal> {
        let undeclared = declared == nil || declared == "application/octet-stream" || declared == "binary/octet-stream"
        if let format = format(of: head) {
            if undeclared { return .success(format.mimeType) }
            guard let declared, format.accepts(declared) else {
                return .failure(MediaRefusal("declared \(declared ?? "nothing"), but the bytes are \(format.description) (\(format.mimeType))"))
            }
            return .success(declared)
        }
        guard let declared, !undeclared else { return .success("application/octet-stream") }
        if declared == "image/svg+xml" {
            guard isText(head, isWhole: isWhole), contains(head, Array("<svg".utf8)) else {
                return .failure(MediaRefusal("declared image/svg+xml, but the bytes are not an SVG image"))
            }
            return .success(declared)
        }
        if let expected = formats.first(where: { $0.accepts(declared) }) {
            return .failure(MediaRefusal("declared \(declared), but the bytes are not \(expected.description)"))
        }
        if declared.hasPrefix("image/") {
            return .failure(MediaRefusal("declared \(declared), an image the server cannot recognize; it takes \(imageTypes)"))
        }
        if isTextType(declared) {
            guard isText(head, isWhole: isWhole) else { return .failure(MediaRefusal("declared \(declared), but the bytes are not UTF-8 text")) }
            return .success(declared)
        }
        return .success("application/octet-stream")
    }

    /// The essence of a `Content-Type` value (`text/plain; charset=utf-8` is `text/plain`), lowercased; `nil` for a
    /// value that is not `type/subtype`.
    static func essence(_ contentType: String) -> String? {
        let essence = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
            .trimmingCharacters(in: [" ", "\t"]).lowercased()
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        func isToken(_ part: Substring) -> Bool {
            !part.isEmpty && part.count <= 127 && part.utf8.allSatisfy { byte in
                (0x21...0x7E).contains(byte) && !Array(#"()<>@,;:\"/[]?={}"#.utf8).contains(byte)
            }
        }
        guard parts.count == 2, isToken(parts[0]), isToken(parts[1]) else { return nil }
        return essence
    }

    /// Whether a browser may show a file of `type` in its own tab: the images, sounds and videos whose bytes the
    /// server checked. Everything else (SVG, HTML, PDF, text, unknown types) is served as an attachment.
    static func isSafeInline(_ type: String) -> Bool {
        inlineTypes.contains(type)
    }

    // MARK: The formats

    /// The formats with a signature, in the order they are tried.
    static let formats: [MediaFormat] = [
        MediaFormat(description: "a PNG image", mimeType: "image/png", accepted: ["image/png", "image/apng"]),
        MediaFormat(description: "a JPEG image", mimeType: "image/jpeg", accepted: ["image/jpeg", "image/jpg", "image/pjpeg"]),
        MediaFormat(description: "a GIF image", mimeType: "image/gif", accepted: ["image/gif"]),
        MediaFormat(description: "a WebP image", mimeType: "image/webp", accepted: ["image/webp"]),
        MediaFormat(description: "an AVIF image", mimeType: "image/avif", accepted: ["image/avif"]),
        MediaFormat(description: "a HEIF image", mimeType: "image/heic", accepted: ["image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence"]),
        MediaFormat(description: "a BMP image", mimeType: "image/bmp", accepted: ["image/bmp", "image/x-bmp", "image/x-ms-bmp"]),
        MediaFormat(description: "a TIFF image", mimeType: "image/tiff", accepted: ["image/tiff"]),
        MediaFormat(description: "an icon", mimeType: "image/x-icon", accepted: ["image/x-icon", "image/vnd.microsoft.icon"]),
        MediaFormat(description: "a PDF document", mimeType: "application/pdf", accepted: ["application/pdf"]),
        MediaFormat(
            description: "an MPEG-4 or QuickTime file", mimeType: "video/mp4",
            accepted: ["video/mp4", "video/quicktime", "video/x-m4v", "video/3gpp", "video/3gpp2", "audio/mp4", "audio/x-m4a", "audio/m4a", "audio/3gpp", "audio/3gpp2"]),
        MediaFormat(
            description: "a WebM or Matroska file", mimeType: "video/webm",
            accepted: ["video/webm", "audio/webm", "video/x-matroska", "audio/x-matroska"]),
        MediaFormat(description: "an Ogg file", mimeType: "audio/ogg", accepted: ["audio/ogg", "video/ogg", "application/ogg", "audio/opus"]),
        MediaFormat(description: "a WAVE sound", mimeType: "audio/wav", accepted: ["audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"]),
        MediaFormat(description: "an AVI video", mimeType: "video/x-msvideo", accepted: ["video/x-msvideo", "video/avi", "video/msvideo"]),
        MediaFormat(description: "a FLAC sound", mimeType: "audio/flac", accepted: ["audio/flac", "audio/x-flac"]),
        // An ID3 tag comes before MP3 frames mostly, and sometimes before FLAC or AAC.
        MediaFormat(description: "a sound with an ID3 tag", mimeType: "audio/mpeg", accepted: ["audio/mpeg", "audio/mp3", "audio/flac", "audio/x-flac", "audio/aac"]),
        MediaFormat(description: "an AMR sound", mimeType: "audio/amr", accepted: ["audio/amr"]),
        MediaFormat(description: "an AAC sound", mimeType: "audio/aac", accepted: ["audio/aac", "audio/x-aac", "audio/aacp"]),
        MediaFormat(description: "an MP3 sound", mimeType: "audio/mpeg", accepted: ["audio/mpeg", "audio/mp3"]),
        MediaFormat(
            description: "a ZIP archive", mimeType: "application/zip",
            accepted: ["application/zip", "application/x-zip-compressed", "application/epub+zip", "application/java-archive"],
            acceptedPrefixes: ["application/vnd.openxmlformats-officedocument.", "application/vnd.oasis.opendocument."]),
        MediaFormat(description: "a gzip archive", mimeType: "application/gzip", accepted: ["application/gzip", "application/x-gzip"]),
    ]

    /// The image types a declared `image/*` may be, for the refusal of another.
    private static let imageTypes = formats.map(\.mimeType).filter { $0.hasPrefix("image/") }.joined(separator: ", ") + ", image/svg+xml"

    private static let inlineTypes: Set<String> = [
        "image/png", "image/apng", "image/jpeg", "image/jpg", "image/pjpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
        "audio/mpeg", "audio/mp3", "audio/mp4", "audio/x-m4a", "audio/m4a", "audio/aac", "audio/ogg", "audio/opus", "audio/wav",
        "audio/x-wav", "audio/wave", "audio/flac", "audio/x-flac", "audio/webm",
        "video/mp4", "video/x-m4v", "video/quicktime", "video/webm", "video/ogg",
    ]

    /// The format of bytes that begin with `head`, when they have a signature the server knows.
    static func format(of head: [UInt8]) -> MediaFormat? {
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<(offset + signature.count)]) == signature
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }
        func named(_ mimeType: String, _ description: String? = nil) -> MediaFormat? {
            formats.first { $0.mimeType == mimeType && (description == nil || $0.description == description) }
        }

        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return named("image/png") }
        if starts([0xFF, 0xD8, 0xFF]) { return named("image/jpeg") }
        if ascii("GIF87a") || ascii("GIF89a") { return named("image/gif") }
        if ascii("RIFF") && head.count >= 12 {
            if ascii("WEBP", at: 8) { return named("image/webp") }
            if ascii("WAVE", at: 8) { return named("audio/wav") }
            if ascii("AVI ", at: 8) { return named("video/x-msvideo") }
        }
        if ascii("ftyp", at: 4) && head.count >= 12 {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if ["avif", "avis"].contains(brand) { return named("image/avif") }
            if ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand) { return named("image/heic") }
            return named("video/mp4")
        }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return named("video/webm") }
        if ascii("OggS") { return named("audio/ogg") }
        if ascii("fLaC") { return named("audio/flac") }
        if ascii("ID3") { return named("audio/mpeg", "a sound with an ID3 tag") }
        if ascii("#!AMR") { return named("audio/amr") }
        if ascii("%PDF-") { return named("application/pdf") }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return named("application/zip") }
        if starts([0x1F, 0x8B, 0x08]) { return named("application/gzip") }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return named("image/tiff") }
        if ascii("BM") && starts([0, 0, 0, 0], at: 6) && head.count >= 26 { return named("image/bmp") }
        if starts([0, 0, 1, 0]) && head.count >= 6 && (head[4] != 0 || head[5] != 0) && head.count >= 22 { return named("image/x-icon") }
        if head.count >= 4 && head[0] == 0xFF {
            // MPEG audio frames: eleven sync bits. ADTS (AAC) has layer 0; MP3 layers 1 to 3, a valid bit rate
            // and sample rate.
            let second = head[1], third = head[2]
            if second & 0xF6 == 0xF0 { return named("audio/aac") }
            if second & 0xE0 == 0xE0 && second & 0x06 != 0 && second & 0x18 != 0x08 && third & 0xF0 != 0xF0 && third & 0x0C != 0x0C {
                return named("audio/mpeg", "an MP3 sound")
            }
        }
        return nil
    }

    /// Whether a declared type is one of text: `text/*`, JSON, XML.
    static func isTextType(_ type: String) -> Bool {
        type.hasPrefix("text/") || ["application/json", "application/xml", "application/xhtml+xml"].contains(type)
            || type.hasSuffix("+json") || type.hasSuffix("+xml")
    }

    /// Whether `head` is UTF-8 text without control characters other than tab, line breaks, form feed and escape;
    /// when it is not the whole file, a character cut at its end does not count.
    static func isText(_ head: [UInt8], isWhole: Bool) -> Bool {
        var bytes = head[...]
        if !isWhole {
            // Drop a sequence cut short at the end: up to three bytes after the last lead byte.
            if let lead = bytes.suffix(4).lastIndex(where: { $0 & 0xC0 != 0x80 }), bytes[lead] >= 0xC0 {
                let length = bytes[lead] >= 0xF0 ? 4 : bytes[lead] >= 0xE0 ? 3 : 2
                if bytes.endIndex - lead < length { bytes = bytes[..<lead] }
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return text.unicodeScalars.allSatisfy { scalar in
            scalar.value >= 0x20 && scalar.value != 0x7F || [0x09, 0x0A, 0x0C, 0x0D, 0x1B].contains(scalar.value)
        }
    }

    private static func contains(_ head: [UInt8], _ needle: [UInt8]) -> Bool {
        guard head.count >= needle.count else { return false }
        return (0...(head.count - needle.count)).contains { head[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// Why an upload's bytes do not fit its declared type.
struct MediaRefusal: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
