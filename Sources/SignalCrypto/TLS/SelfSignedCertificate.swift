import COpenSSL

/// A freshly generated ECDSA P-256 key and a self-signed X.509 certificate
/// for it, in PEM: a development certificate that clients trust by naming it
/// as their CA file (`ringctl --ca-file`).
public struct SelfSignedCertificate: Sendable {
    /// The certificate, PEM-encoded.
    public let certificatePEM: String
    /// The private key (PKCS #8), PEM-encoded. Keep it secret.
    public let privateKeyPEM: String

    /// The names a development certificate covers by default.
    public static let localhostNames = ["DNS:localhost", "IP:127.0.0.1", "IP:::1"]

    /// Generates a key and a certificate for CN `localhost` covering
    /// `subjectAltNames` (OpenSSL syntax: `DNS:…`, `IP:…`), valid from
    /// `validFrom` to `validUntil` seconds relative to now (negative values
    /// lie in the past, which tests use for expired certificates).
    public static func generate(
        subjectAltNames: [String] = localhostNames,
        validFrom: Int = -60,
        validUntil: Int = 365 * 24 * 3600
    ) throws(TLSError) -> SelfSignedCertificate {
        ERR_clear_error()
        let key = try generateKey()
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw failure("cannot create a certificate") }
        defer { X509_free(certificate) }
        guard X509_set_version(certificate, 2) == 1,
            setRandomSerial(certificate),
            X509_gmtime_adj(X509_getm_notBefore(certificate), validFrom) != nil,
            X509_gmtime_adj(X509_getm_notAfter(certificate), validUntil) != nil,
            X509_set_pubkey(certificate, key) == 1,
            let name = X509_get_subject_name(certificate),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "localhost", -1, -1, 0) == 1,
            X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, "ringd development", -1, -1, 0) == 1,
            X509_set_issuer_name(certificate, name) == 1
        else {
            throw failure("cannot fill in the certificate")
        }
        var extensions = [
            (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
            (NID_key_usage, "critical,digitalSignature,keyCertSign"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_key_identifier, "hash"),
        ]
        if !subjectAltNames.isEmpty {
            extensions.append((NID_subject_alt_name, subjectAltNames.joined(separator: ",")))
        }
        for (nid, value) in extensions {
            try addExtension(nid, value, to: certificate)
        }
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw failure("cannot sign the certificate") }
        let certificatePEM = try pem { PEM_write_bio_X509($0, certificate) }
        let privateKeyPEM = try pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
        return SelfSignedCertificate(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM)
    }

    private static func generateKey() throws(TLSError) -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw failure("cannot generate a key") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else {
            throw failure("cannot generate a P-256 key")
        }
        return key
    }

    private static func setRandomSerial(_ certificate: OpaquePointer) -> Bool {
        guard let number = BN_new() else { return false }
        defer { BN_free(number) }
        return BN_rand(number, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1
            && BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
    }

    private static func addExtension(_ nid: Int32, _ value: String, to certificate: OpaquePointer) throws(TLSError) {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, certificate, certificate, nil, nil, 0)
        guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
            throw failure("cannot add the certificate extension \"\(value)\"")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(certificate, ext, -1) == 1 else {
            throw failure("cannot add the certificate extension \"\(value)\"")
        }
    }

    /// What `write` puts into a memory buffer, as text.
    private static func pem(_ write: (OpaquePointer) -> Int32) throws(TLSError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("cannot encode PEM") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw failure("cannot encode PEM") }
        let pending = Int(BIO_ctrl_pending(bio))
        let bytes = [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            count = Int(max(0, BIO_read(bio, buffer.baseAddress, Int32(pending))))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func failure(_ message: String) -> TLSError {
        TLSError.fromQueue(TLSError.configurationCode, message)
    }
}
