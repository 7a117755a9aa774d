import COpenSSL

extension SigningKey {
    /// A fresh private key for `algorithm` (P-256 for ES256, RSA 2048 for
    /// RS256) as PKCS #8 PEM, the form Apple and Google hand out: for tests
    /// and mock servers, which need keys nobody has to keep secret.
    public static func generate(_ algorithm: JWTAlgorithm) throws(CryptoError) -> String {
        ERR_clear_error()
        let type = algorithm == .es256 ? "EC" : "RSA"
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw CryptoError.fromQueue(.generate, "cannot generate an \(type) key")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else {
            throw CryptoError.fromQueue(.generate, "cannot generate an \(type) key")
        }
        let parameterized =
            switch algorithm {
            case .es256: EVP_PKEY_CTX_set_group_name(context, "P-256") == 1
            case .rs256: EVP_PKEY_CTX_set_rsa_keygen_bits(context, minimumRSABits) > 0
            }
        var key: OpaquePointer?
        guard parameterized, EVP_PKEY_generate(context, &key) == 1, let key else {
            throw CryptoError.fromQueue(.generate, "cannot generate a key for \(algorithm.rawValue)")
        }
        defer { EVP_PKEY_free(key) }
        // OpenSSL 3 writes PKCS #8 here, not the traditional per-type form.
        guard let pem = PEM.text({ PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }) else {
            throw CryptoError.fromQueue(.generate, "cannot encode the generated key")
        }
        return pem
    }
}
