import CMissivePlugin

/// Host-side `missive_sink`s: plugins write variable-length results into them, and they copy the bytes
/// into Swift storage before `write` returns, as the ABI requires.
enum PluginSinks {
    /// Runs `body` with a sink that joins every write into one byte array.
    static func collectingBytes(_ body: (UnsafePointer<missive_sink>) -> Int32) -> (status: Int32, bytes: [UInt8]) {
        var bytes: [UInt8] = []
        let status = withUnsafeMutablePointer(to: &bytes) { storage in
            var sink = missive_sink(context: UnsafeMutableRawPointer(storage), write: appendBytes)
            return body(&sink)
        }
        return (status, bytes)
    }

    /// Runs `body` with a sink that keeps every write as a separate piece.
    static func collectingPieces(_ body: (UnsafePointer<missive_sink>) -> Int32) -> (status: Int32, pieces: [[UInt8]]) {
        var pieces: [[UInt8]] = []
        let status = withUnsafeMutablePointer(to: &pieces) { storage in
            var sink = missive_sink(context: UnsafeMutableRawPointer(storage), write: appendPiece)
            return body(&sink)
        }
        return (status, pieces)
    }

    /// Runs `body` with a `missive_media_out` whose three sinks collect the URL, path and MIME type.
    static func collectingMedia(
        _ body: (UnsafeMutablePointer<missive_media_out>) -> Int32
    ) -> (status: Int32, url: [UInt8], path: [UInt8], mime: [UInt8], size: Int64) {
        var url: [UInt8] = [], path: [UInt8] = [], mime: [UInt8] = []
        var size: Int64 = -1
        let status = withUnsafeMutablePointer(to: &url) { urlStorage in
            withUnsafeMutablePointer(to: &path) { pathStorage in
                withUnsafeMutablePointer(to: &mime) { mimeStorage in
                    var out = missive_media_out(
                        struct_size: UInt32(MemoryLayout<missive_media_out>.size),
                        remote_url: missive_sink(context: UnsafeMutableRawPointer(urlStorage), write: appendBytes),
                        local_path: missive_sink(context: UnsafeMutableRawPointer(pathStorage), write: appendBytes),
                        mime_type: missive_sink(context: UnsafeMutableRawPointer(mimeStorage), write: appendBytes),
                        size_bytes: -1)
                    let status = body(&out)
                    size = out.size_bytes
                    return status
                }
            }
        }
        return (status, url, path, mime, size)
    }
}

private func appendBytes(_ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int) {
    guard let context, let bytes, length > 0 else { return }
    context.assumingMemoryBound(to: [UInt8].self).pointee.append(contentsOf: UnsafeBufferPointer(start: bytes, count: length))
}

private func appendPiece(_ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int) {
    guard let context, length >= 0 else { return }
    let piece = bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
    context.assumingMemoryBound(to: [[UInt8]].self).pointee.append(piece)
}
