import CMissivePlugin

/// Raw results, as the plugin gave them, for the conformance checks: hosts use the checked and repaired
/// accessors of ``PluginContent`` instead.
extension PluginContent {
    /// The status and bytes `encode` gave, unchecked.
    package func rawEncode() -> (status: Int32, bytes: [UInt8]) { let result = type.encode(handle); return (result.status, result.bytes) }
    /// The status and bytes `digest` gave, unchecked.
    package func rawDigest() -> (status: Int32, bytes: [UInt8]) { let result = type.digest(handle); return (result.status, result.bytes) }
    /// The status and bytes `push_content` gave, or `nil` when the type has no such function.
    package func rawPushContent() -> (status: Int32, bytes: [UInt8])? { type.pushContent(handle).map { ($0.status, $0.bytes) } }
    /// The status and pieces `searchable_words` gave, or `nil` when the type has no such function.
    package func rawSearchableWords() -> (status: Int32, pieces: [[UInt8]])? { type.searchableWords(handle).map { ($0.status, $0.pieces) } }
    /// What the `missive.text.v1` texts function gave, called afresh (not the kept answer): its return
    /// status, then each part's status and output (the words as pieces) as the separate functions' raw
    /// results give theirs, `nil` for a part the type has no function for. `nil` when the type offers no
    /// usable text extension.
    package func rawTexts() -> RawTexts? {
        guard let (returned, texts) = type.allTexts(handle, wantingPush: true) else { return nil }
        guard returned == MISSIVE_OK else { return RawTexts(status: returned, digest: nil, push: nil, words: nil) }
        var words: [[UInt8]] = []
        texts.forEachPiece(of: .words) { words.append(Array($0)) }
        return RawTexts(
            status: returned, digest: texts.digestStatus.map { ($0, Array(texts.joined(.digest))) },
            push: texts.pushStatus.map { ($0, Array(texts.joined(.push))) }, words: texts.wordsStatus.map { ($0, words) })
    }

    /// What one call of a `missive.text.v1` texts function gave; see ``rawTexts()``.
    package struct RawTexts {
        /// What the texts function returned; the parts are `nil` unless it is `MISSIVE_OK`.
        package let status: Int32
        package let digest: (status: Int32, bytes: [UInt8])?
        package let push: (status: Int32, bytes: [UInt8])?
        package let words: (status: Int32, pieces: [[UInt8]])?
    }
    /// The status and bytes the `missive.view.v1` view function gave (for a failure, the output before the
    /// reason mark, the mark's place and the reason all run together), or `nil` when the type offers no usable
    /// view extension.
    package func rawView() -> (status: Int32, bytes: [UInt8])? { type.view(handle).map { ($0.status, $0.bytes) } }
}
