/// The daemon's version, reported by `/healthz`.
public enum RingdVersion {
    /// The current version.
    public static let current = "0.1.0"
}
