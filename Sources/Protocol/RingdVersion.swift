/// The version of ringd and its tools (`/healthz`, `ringd --version`,
/// `ringctl --version`): one number for the daemon and the client that
/// ship together.
public enum RingdVersion {
    public static let current = "0.1.0"
}
