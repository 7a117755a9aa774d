import SignalProtocol

/// Compact JWS JSON Web Tokens (RFC 7519): APNs provider tokens and Google
/// OAuth JWT-bearer assertions.
public enum JSONWebToken {
    /// `base64url(header).base64url(claims).base64url(signature)`, unpadded,
    /// signed by `key` with its algorithm.
    ///
    /// The header is `{"alg":…,"typ":"JWT","kid":…}`, `kid` only when given.
    /// Apple documents only `alg` and `kid` for APNs, Google shows `alg` and
    /// `typ`; `typ` is optional (RFC 7519 §5.1) and APNs accepts it (common
    /// APNs clients send it), so one header shape serves both.
    public static func sign(claims: JSONValue, keyId: String?, key: SigningKey) throws(CryptoError) -> String {
        guard claims.objectMembers != nil else {
            throw CryptoError(code: .sign, message: "the claims of a JWT must be a JSON object")
        }
        var header: [(key: String, value: JSONValue)] = [
            ("alg", .string(key.algorithm.rawValue)),
            ("typ", .string("JWT")),
        ]
        if let keyId { header.append(("kid", .string(keyId))) }
        let signingInput = encode(.object(header)) + "." + encode(claims)
        let signature = try key.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64.encodeURL(signature)
    }

    /// `base64url(header).base64url(claims).base64url(signature)`, signed
    /// HS256 (HMAC-SHA256 with the shared `secret`; header
    /// `{"alg":"HS256","typ":"JWT"}`): LiveKit's access tokens.
    public static func sign(claims: JSONValue, hmacSHA256 secret: [UInt8]) throws(CryptoError) -> String {
        guard claims.objectMembers != nil else {
            throw CryptoError(code: .sign, message: "the claims of a JWT must be a JSON object")
        }
        let signingInput = encode(.object([("alg", .string("HS256")), ("typ", .string("JWT"))])) + "." + encode(claims)
        let signature = try Crypto.hmacSHA256(key: secret, message: Array(signingInput.utf8))
        return signingInput + "." + Base64.encodeURL(signature)
    }

    /// The parts of a compact JWT, or nil unless it has three canonical
    /// base64url parts whose first two are JSON objects. Checks no signature:
    /// pass `signature` and `signingInput` to ``SigningKey/verify(_:of:)``.
    public static func decode(
        _ token: String
    )
        -> (header: JSONValue, claims: JSONValue, signature: [UInt8], signingInput: [UInt8])?
    {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64.decodeURL(String(decoding: parts[0], as: UTF8.self)),
            let claimsBytes = Base64.decodeURL(String(decoding: parts[1], as: UTF8.self)),
            let signature = Base64.decodeURL(String(decoding: parts[2], as: UTF8.self)),
            let header = try? JSONValue.parse(headerBytes), header.objectMembers != nil,
            let claims = try? JSONValue.parse(claimsBytes), claims.objectMembers != nil
        else {
            return nil
        }
        let signingInput = Array(token.utf8.prefix(parts[0].count + 1 + parts[1].count))
        return (header, claims, signature, signingInput)
    }

    private static func encode(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        value.write(into: &bytes)
        return Base64.encodeURL(bytes)
    }
}
