import CMissivePlugin

/// Host-side `missive_sink`s: plugins write variable-length results into them, and they copy the bytes
/// into Swift storage before `write` returns, as the ABI requires.
///
/// Each sink also notes the reason mark of ABI 1.1 (a write of no bytes from a NULL pointer): on a
/// failure status, what follows the last mark is the plugin's reason.
enum PluginSinks {
    /// What one sink received.
    struct Collected {
        /// Whether each write is kept as a piece too, for the functions whose writes are items.
        var piecewise = false
        var bytes: [UInt8] = []
        var pieces: [[UInt8]] = []
        /// Where the last reason mark fell, in ``bytes`` and in ``pieces``.
        var mark: (byte: Int, piece: Int)?

        /// The reason after the last mark, if there is one and it is not empty.
        var reason: String? {
            guard let mark else { return nil }
            let text = bytes[mark.byte...]
            return text.isEmpty ? nil : DisplayText.oneLine(Array(text))
        }
    }

    /// Runs `body` with a sink that joins every write into one byte array.
    static func collectingBytes(_ body: (UnsafePointer<missive_sink>) -> Int32) -> (status: Int32, bytes: [UInt8], reason: String?) {
        let (status, collected) = collecting(piecewise: false, body)
        return (status, collected.bytes, collected.reason)
    }

    /// Runs `body` with a sink that keeps every write as a separate piece.
    static func collectingPieces(_ body: (UnsafePointer<missive_sink>) -> Int32) -> (status: Int32, pieces: [[UInt8]], reason: String?) {
        let (status, collected) = collecting(piecewise: true, body)
        return (status, collected.pieces, collected.reason)
    }

    private static func collecting(piecewise: Bool, _ body: (UnsafePointer<missive_sink>) -> Int32) -> (Int32, Collected) {
        var collected = Collected(piecewise: piecewise)
        let status = withUnsafeMutablePointer(to: &collected) { storage in
            var sink = missive_sink(context: UnsafeMutableRawPointer(storage), write: collect)
            return body(&sink)
        }
        return (status, collected)
    }

    /// Runs `body` with a `missive_media_out` whose three sinks collect the URL, path and MIME type.
    static func collectingMedia(
        _ body: (UnsafeMutablePointer<missive_media_out>) -> Int32
    ) -> (status: Int32, url: [UInt8], path: [UInt8], mime: [UInt8], size: Int64, reason: String?) {
        var url = Collected(), path = Collected(), mime = Collected()
        var size: Int64 = -1
        let status = withUnsafeMutablePointer(to: &url) { urlStorage in
            withUnsafeMutablePointer(to: &path) { pathStorage in
                withUnsafeMutablePointer(to: &mime) { mimeStorage in
                    var out = missive_media_out(
                        struct_size: UInt32(MemoryLayout<missive_media_out>.size),
                        remote_url: missive_sink(context: UnsafeMutableRawPointer(urlStorage), write: collect),
                        local_path: missive_sink(context: UnsafeMutableRawPointer(pathStorage), write: collect),
                        mime_type: missive_sink(context: UnsafeMutableRawPointer(mimeStorage), write: collect),
                        size_bytes: -1)
                    let status = body(&out)
                    size = out.size_bytes
                    return status
                }
            }
        }
        return (status, url.bytes, path.bytes, mime.bytes, size, mime.reason)
    }
}

/// The `write` of every host sink: copies the bytes, both joined and as a piece, and notes a reason mark.
/// A piece for the mark itself is kept too, as ABI 1.0 hosts kept an empty piece for any empty write.
private func collect(_ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int) {
    guard let context, length >= 0 else { return }
    let collected = context.assumingMemoryBound(to: PluginSinks.Collected.self)
    guard let bytes else {
        if length == 0 { collected.pointee.mark = (collected.pointee.bytes.count, collected.pointee.pieces.count) }
        if collected.pointee.piecewise { collected.pointee.pieces.append([]) }
        return
    }
    let buffer = UnsafeBufferPointer(start: bytes, count: length)
    collected.pointee.bytes.append(contentsOf: buffer)
    if collected.pointee.piecewise { collected.pointee.pieces.append(Array(buffer)) }
}
