/// Where a media message's bytes live and what they are.
///
/// At least one of ``remoteURL`` and ``localPath`` is set.
public struct MediaReference: Sendable, Hashable, Codable {
    /// The URL the media can be downloaded from, if uploaded.
    public var remoteURL: String?
    /// The path of a local copy, if there is one.
    public var localPath: String?
    /// The MIME type, for example `image/png`.
    public var mimeType: String
    /// The size in bytes, when known.
    public var sizeBytes: Int64?

    /// Creates a media reference.
    public init(remoteURL: String? = nil, localPath: String? = nil, mimeType: String, sizeBytes: Int64? = nil) {
        self.remoteURL = remoteURL
        self.localPath = localPath
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
    }

    /// Why this reference is not well formed, or `nil` when it is.
    ///
    /// A well-formed reference has a location (URL or path), a `type/subtype` MIME type and no negative size.
    public var problem: String? {
        if (remoteURL ?? "").isEmpty && (localPath ?? "").isEmpty {
            return "media reference has neither a remote URL nor a local path"
        }
        let parts = mimeType.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count != 2 || parts.contains(where: \.isEmpty) || mimeType.contains(where: \.isWhitespace) {
            return "media MIME type '\(mimeType)' is not of the form type/subtype"
        }
        if let sizeBytes, sizeBytes < 0 {
            return "media size \(sizeBytes) is negative"
        }
        return nil
    }
}
