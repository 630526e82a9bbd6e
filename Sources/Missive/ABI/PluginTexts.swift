import CMissivePlugin

/// What a type's text functions answered for one message: the digest, the push text and the searchable
/// words, each with its status, written into one byte buffer with a table of where each write went.
///
/// The `missive.text.v1` extension fills all three parts in one call; without it, each part comes from its
/// own function (`digest`, `push_content`, `searchable_words`) when it is first asked for. Nothing is made
/// per word: a word is a range of ``bytes``, and becomes a `String` or an array only when a caller asks.
struct PluginTexts: Sendable {
    /// One of the three answers.
    enum Part: UInt8, Sendable {
        case digest, push, words
    }

    /// One `write` call: the part it went to and where its bytes are in ``bytes``. A reason mark, and any
    /// write of no bytes from a NULL pointer, has an empty range.
    struct Piece: Sendable {
        var part: Part
        var isMark: Bool
        var range: Range<Int>
    }

    /// Every write's bytes, in the order written.
    private(set) var bytes: [UInt8] = []
    /// Every write, in order.
    private(set) var pieces: [Piece] = []
    /// The status of each part that was asked for; `nil` for a part that was not.
    private(set) var digestStatus: Int32?
    private(set) var pushStatus: Int32?
    private(set) var wordsStatus: Int32?

    /// The status a part's function returned, or `nil` when it was not asked for.
    func status(_ part: Part) -> Int32? {
        switch part {
        case .digest: digestStatus
        case .push: pushStatus
        case .words: wordsStatus
        }
    }

    /// Whether this answer holds `part`.
    func holds(_ part: Part) -> Bool { status(part) != nil }

    /// Everything written to `part`, joined, reason included: a slice of ``bytes`` when its writes are
    /// adjacent, which they are for one part asked alone and for a plugin that writes its parts in turn.
    func joined(_ part: Part) -> ArraySlice<UInt8> {
        var start: Int?
        var end = 0
        var adjacent = true
        for piece in pieces where piece.part == part && !piece.range.isEmpty {
            if start == nil {
                start = piece.range.lowerBound
            } else if piece.range.lowerBound != end {
                adjacent = false
            }
            end = piece.range.upperBound
        }
        guard let start else { return [] }
        if adjacent { return bytes[start..<end] }
        var joined: [UInt8] = []
        for piece in pieces where piece.part == part { joined += bytes[piece.range] }
        return joined[...]
    }

    /// The pieces of `part` in order, each a slice of ``bytes``; a mark is an empty piece, as ABI 1.0 hosts
    /// kept an empty piece for every empty write.
    func forEachPiece(of part: Part, _ body: (ArraySlice<UInt8>) -> Void) {
        for piece in pieces where piece.part == part { body(bytes[piece.range]) }
    }

    /// The reason written after `part`'s last mark, on one line, if there is a mark and text after it.
    func reason(_ part: Part) -> String? {
        guard let mark = pieces.lastIndex(where: { $0.part == part && $0.isMark }) else { return nil }
        var text: [UInt8] = []
        for piece in pieces[(mark + 1)...] where piece.part == part { text += bytes[piece.range] }
        return text.isEmpty ? nil : DisplayText.oneLine(text)
    }

    /// Runs `body` with a `missive_text_out` whose three sinks collect here and whose statuses are
    /// `MISSIVE_FAILED`: the call of a `missive.text.v1` texts function. Gives what it returned and the
    /// answers, which count only when it returned `MISSIVE_OK` (else the caller asks the separate functions).
    /// `push` and `words` say whether the type has those functions: a part it lacks is not read. Without
    /// `wantingPush`, push_status starts as `MISSIVE_ABSENT`, which lets the plugin skip the push text, and
    /// the push part is not read either.
    static func collectingAll(
        push: Bool, words: Bool, wantingPush: Bool, _ body: (UnsafeMutablePointer<missive_text_out>) -> Int32
    ) -> (status: Int32, texts: PluginTexts) {
        var texts = PluginTexts()
        texts.bytes.reserveCapacity(128)
        texts.pieces.reserveCapacity(8)
        let status = withUnsafeMutablePointer(to: &texts) { storage in
            var digestSink = PartSink(texts: storage, part: .digest)
            var pushSink = PartSink(texts: storage, part: .push)
            var wordsSink = PartSink(texts: storage, part: .words)
            return withUnsafeMutablePointer(to: &digestSink) { digestContext in
                withUnsafeMutablePointer(to: &pushSink) { pushContext in
                    withUnsafeMutablePointer(to: &wordsSink) { wordsContext in
                        var out = missive_text_out(
                            struct_size: UInt32(MemoryLayout<missive_text_out>.size),
                            digest_status: MISSIVE_FAILED, push_status: wantingPush ? MISSIVE_FAILED : MISSIVE_ABSENT,
                            words_status: MISSIVE_FAILED,
                            digest: missive_sink(context: UnsafeMutableRawPointer(digestContext), write: collectPart),
                            push_content: missive_sink(context: UnsafeMutableRawPointer(pushContext), write: collectPart),
                            searchable_words: missive_sink(context: UnsafeMutableRawPointer(wordsContext), write: collectPart))
                        let status = body(&out)
                        storage.pointee.digestStatus = out.digest_status
                        storage.pointee.pushStatus = push && wantingPush ? out.push_status : nil
                        storage.pointee.wordsStatus = words ? out.words_status : nil
                        return status
                    }
                }
            }
        }
        return (status, texts)
    }

    /// Runs `body` with one sink that collects `part`: the call of that part's own function.
    static func collecting(_ part: Part, _ body: (UnsafePointer<missive_sink>) -> Int32) -> PluginTexts {
        var texts = PluginTexts()
        withUnsafeMutablePointer(to: &texts) { storage in
            var partSink = PartSink(texts: storage, part: part)
            let status = withUnsafeMutablePointer(to: &partSink) { context in
                var sink = missive_sink(context: UnsafeMutableRawPointer(context), write: collectPart)
                return body(&sink)
            }
            switch part {
            case .digest: storage.pointee.digestStatus = status
            case .push: storage.pointee.pushStatus = status
            case .words: storage.pointee.wordsStatus = status
            }
        }
        return texts
    }

    /// Keeps one write: its bytes, if any, and its piece.
    fileprivate mutating func append(_ piece: Piece, _ buffer: UnsafeBufferPointer<UInt8>?) {
        if let buffer { bytes.append(contentsOf: buffer) }
        pieces.append(piece)
    }
}

/// The context of one of the sinks of ``PluginTexts``: where it collects, and for which part.
private struct PartSink {
    let texts: UnsafeMutablePointer<PluginTexts>
    let part: PluginTexts.Part
}

/// The `write` of the text sinks: appends the bytes to the shared buffer and notes the piece; a write of
/// no bytes from a NULL pointer is the reason mark.
private func collectPart(_ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int) {
    guard let context, length >= 0 else { return }
    let sink = context.assumingMemoryBound(to: PartSink.self).pointee
    let start = sink.texts.pointee.bytes.count
    guard let bytes else {
        sink.texts.pointee.append(PluginTexts.Piece(part: sink.part, isMark: length == 0, range: start..<start), nil)
        return
    }
    sink.texts.pointee.append(
        PluginTexts.Piece(part: sink.part, isMark: false, range: start..<(start + length)), UnsafeBufferPointer(start: bytes, count: length))
}
