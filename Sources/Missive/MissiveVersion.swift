/// The version of this Missive library.
///
/// Bump it at each release, together with the tag and `CHANGELOG.md`; the loader gives it to every plugin's
/// entry as the host's version.
public enum MissiveVersion {
    /// The version, as `major.minor.patch`.
    public static let string = "0.7.0"
}
