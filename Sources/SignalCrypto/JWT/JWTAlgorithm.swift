/// The JWS algorithms (RFC 7518 §3.1) a ``SigningKey`` signs with, spelled as
/// in a JWT header's `alg`.
public enum JWTAlgorithm: String, Sendable {
    /// ECDSA on P-256 with SHA-256: APNs provider tokens.
    case es256 = "ES256"
    /// RSASSA-PKCS1-v1_5 with SHA-256: Google OAuth JWT-bearer assertions (FCM).
    case rs256 = "RS256"
}
