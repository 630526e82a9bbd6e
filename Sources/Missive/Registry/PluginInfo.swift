/// Who provided a plugin: its declared identity and the file it was loaded from.
public struct PluginInfo: Sendable, Hashable, CustomStringConvertible {
    /// The plugin's name.
    public let name: String
    /// The plugin's version.
    public let version: String
    /// Who made it.
    public let vendor: String
    /// The ABI version the plugin reported, as `major.minor`.
    public let abiVersion: String
    /// The path it was loaded from.
    public let path: String

    /// `name version (path)`.
    public var description: String { "\(name) \(version) (\(path))" }

    /// `ABI 1.0, Swift 6.3.1`, or `ABI 1.0, no Swift runtime` for a plugin that records no compiler.
    static func buildDescription(abi: String, swift: String?) -> String {
        "ABI \(abi), " + (swift.map { "Swift \($0)" } ?? "no Swift runtime")
    }
}
