import COpenSSL
import SignalSystem

/// A private key that signs JWTs: an EC key on P-256 (ES256, APNs provider
/// tokens from Apple's `.p8` file) or an RSA key of at least 2048 bits
/// (RS256, the `private_key` of a Google service account).
///
/// `@unchecked Sendable` because the key is never modified after `init`, and
/// OpenSSL allows one `EVP_PKEY` to be used by several threads at once as long
/// as none modifies it; every signature or check makes its own `EVP_MD_CTX`.
public final class SigningKey: @unchecked Sendable {
    /// Internal for the other files of this type; never handed out or changed.
    let key: OpaquePointer
    /// What the key signs with, from its type.
    public let algorithm: JWTAlgorithm
    /// The public half as a SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`),
    /// for whoever checks the signatures.
    public let publicKeyPEM: String

    /// The RSA modulus size below which a key is refused (RFC 7518 §3.3).
    static let minimumRSABits: Int32 = 2048

    /// Reads an unencrypted private key PEM: PKCS #8 (`BEGIN PRIVATE KEY`,
    /// what Apple and Google hand out) or a traditional `BEGIN EC PRIVATE KEY`
    /// or `BEGIN RSA PRIVATE KEY`.
    public convenience init(pem: String) throws(CryptoError) {
        try self.init(pemBytes: Array(pem.utf8))
    }

    /// Reads the private key PEM in the file at `path`.
    public convenience init(contentsOfFile path: String) throws(CryptoError) {
        guard let bytes = FileContents.read(path) else {
            throw CryptoError(code: .key, message: "cannot read the key file \(path)")
        }
        try self.init(pemBytes: bytes)
    }

    private init(pemBytes: [UInt8]) throws(CryptoError) {
        ERR_clear_error()
        guard !pemBytes.isEmpty else { throw CryptoError(code: .key, message: "the key PEM is empty") }
        guard let key = PEM.readPrivateKey(pemBytes) else { throw Self.unreadable(pemBytes) }
        // Until `self.key` is set, deinit does not run: a refused key is freed here.
        let algorithm: JWTAlgorithm
        let publicKeyPEM: String
        do throws(CryptoError) {
            algorithm = try Self.algorithm(of: key)
            guard let pem = PEM.text({ PEM_write_bio_PUBKEY($0, key) }) else {
                throw CryptoError.fromQueue(.key, "cannot encode the public key")
            }
            publicKeyPEM = pem
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
        self.algorithm = algorithm
        self.publicKeyPEM = publicKeyPEM
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Why `pem` held no private key, by what it seems to hold instead.
    private static func unreadable(_ pem: [UInt8]) -> CryptoError {
        switch PEM.firstLabel(pem) {
        case nil:
            ERR_clear_error()
            return CryptoError(code: .key, message: "not a PEM private key: no \"-----BEGIN …-----\" line")
        case "ENCRYPTED PRIVATE KEY":
            ERR_clear_error()
            return CryptoError(code: .key, message: "the private key is encrypted; store it unencrypted (openssl pkey)")
        case let label? where label == "PRIVATE KEY" || label == "EC PRIVATE KEY" || label == "RSA PRIVATE KEY":
            return CryptoError.fromQueue(.key, "cannot read the \(label) PEM")
        case let label?:
            ERR_clear_error()
            return CryptoError(code: .key, message: "the PEM holds a \(label), not a private key")
        }
    }

    /// ES256 for P-256, RS256 for RSA of at least 2048 bits; any other key
    /// is refused, naming what it is.
    private static func algorithm(of key: OpaquePointer) throws(CryptoError) -> JWTAlgorithm {
        let type = EVP_PKEY_get_base_id(key)
        switch type {
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 80)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
                throw CryptoError.fromQueue(.key, "the EC key has no named curve; ES256 needs P-256")
            }
            let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // OpenSSL names the curve "prime256v1"; "P-256" is its NIST name.
            var nid = OBJ_sn2nid(curve)
            if nid == NID_undef { nid = EC_curve_nist2nid(curve) }
            guard nid == NID_X9_62_prime256v1 else {
                throw CryptoError(
                    code: .key, message: "the EC key is on \(curve), not P-256 (prime256v1); ES256 needs P-256")
            }
            return .es256
        case EVP_PKEY_RSA:
            let bits = EVP_PKEY_get_bits(key)
            guard bits >= minimumRSABits else {
                throw CryptoError(
                    code: .key,
                    message: "the RSA key has \(bits) bits; RS256 needs at least \(minimumRSABits)")
            }
            return .rs256
        default:
            let name = OBJ_nid2sn(type).map { String(cString: $0) } ?? "type \(type)"
            throw CryptoError(code: .key, message: "the key is \(name), neither EC on P-256 (ES256) nor RSA (RS256)")
        }
    }
}
