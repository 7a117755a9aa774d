import COpenSSL

/// Conversions between the two encodings of an ECDSA P-256 signature: the
/// DER `SEQUENCE { r INTEGER, s INTEGER }` OpenSSL produces and checks, and
/// the fixed 64 bytes r‖s a JWS carries (RFC 7518 §3.4).
enum ECDSASignature {
    /// The byte length of r and of s on P-256.
    static let scalarLength = 32

    /// r‖s, each left-padded to 32 bytes; nil unless `der` is one DER
    /// signature whose r and s fit.
    static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            var cursor = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return nil }
            defer { ECDSA_SIG_free(signature) }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(signature, &r, &s)
            var raw = [UInt8](repeating: 0, count: 2 * scalarLength)
            let written = raw.withUnsafeMutableBufferPointer { out -> Bool in
                guard let base = out.baseAddress else { return false }
                return BN_bn2binpad(r, base, Int32(scalarLength)) == Int32(scalarLength)
                    && BN_bn2binpad(s, base + scalarLength, Int32(scalarLength)) == Int32(scalarLength)
            }
            return written ? raw : nil
        }
    }

    /// The DER encoding of r‖s; nil unless `raw` is exactly 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 2 * scalarLength, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let (r, s) = raw.withUnsafeBufferPointer { buffer -> (OpaquePointer?, OpaquePointer?) in
            guard let base = buffer.baseAddress else { return (nil, nil) }
            return (BN_bin2bn(base, Int32(scalarLength), nil), BN_bin2bn(base + scalarLength, Int32(scalarLength), nil))
        }
        // ECDSA_SIG_set0 takes r and s only when it succeeds.
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { out -> Int32 in
            var cursor = out.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
