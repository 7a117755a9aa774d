/// The daemon's version, reported by `/healthz`.
public enum RingdVersion {
    public static let current = "0.1.0"
}
