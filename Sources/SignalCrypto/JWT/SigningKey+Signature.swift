import COpenSSL

extension SigningKey {
    /// The JWS signature of `message`: for ES256 ECDSA P-256 with SHA-256 as
    /// the raw 64 bytes r‖s (RFC 7518 §3.4), not the DER OpenSSL produces;
    /// for RS256 RSASSA-PKCS1-v1_5 with SHA-256.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        ERR_clear_error()
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.fromQueue(.sign, "cannot sign") }
        defer { EVP_MD_CTX_free(context) }
        // PKCS #1 v1.5 is OpenSSL's default padding for RSA signatures.
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            throw CryptoError.fromQueue(.sign, "cannot sign with the \(algorithm.rawValue) key")
        }
        let signature = message.withUnsafeBufferPointer { input -> [UInt8]? in
            var length = 0
            // The first call only reports the largest signature size.
            guard EVP_DigestSign(context, nil, &length, input.baseAddress, input.count) == 1 else { return nil }
            var out = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &out, &length, input.baseAddress, input.count) == 1 else { return nil }
            return Array(out.prefix(length))
        }
        guard let signature else { throw CryptoError.fromQueue(.sign, "\(algorithm.rawValue) signing failed") }
        switch algorithm {
        case .rs256:
            return signature
        case .es256:
            guard let raw = ECDSASignature.raw(fromDER: signature) else {
                throw CryptoError.fromQueue(.sign, "OpenSSL returned an ECDSA signature that is not P-256 DER")
            }
            return raw
        }
    }

    /// Whether `signature` (in JWS form, as ``sign(_:)`` returns it) is this
    /// key's signature of `message`. An ES256 signature that is not exactly
    /// 64 bytes is false.
    public func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        let encoded: [UInt8]
        switch algorithm {
        case .rs256:
            encoded = signature
        case .es256:
            guard let der = ECDSASignature.der(fromRaw: signature) else { return false }
            encoded = der
        }
        guard !encoded.isEmpty, let context = EVP_MD_CTX_new() else { return false }
        // A bad signature leaves reasons on the queue; they are no error here.
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return encoded.withUnsafeBufferPointer { signatureBytes in
            message.withUnsafeBufferPointer { input in
                EVP_DigestVerify(
                    context, signatureBytes.baseAddress, signatureBytes.count,
                    input.baseAddress, input.count) == 1
            }
        }
    }
}
