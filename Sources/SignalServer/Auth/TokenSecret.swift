import SignalProtocol
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The HMAC key for tokens: `auth.tokenSecret` when configured, otherwise a
/// random 256-bit key generated on first start and kept (mode 0600) in the
/// data directory (made 0700 if missing), so tokens survive restarts. With
/// no data directory (a store in memory) the generated key is kept nowhere:
/// tokens last as long as the process, like everything it stored.
/// Start-up only.
///
/// A kept file that group or others may access is refused, not fixed: the
/// secret may have been read already, and whoever has it can mint a token
/// for any user. Whether to keep it (chmod) or replace it (delete, which
/// invalidates every token) is the operator's call, not a silent chmod's.
public enum TokenSecret {
    /// The file name of the generated secret inside the data directory.
    public static let fileName = "token-secret"

    /// The configured secret, or the one kept in `directory` (created if
    /// missing), or with no directory a new one.
    public static func load(configured: String?, directory: String?) throws(ConfigError) -> [UInt8] {
        if let configured {
            guard configured.utf8.count >= 16 else {
                throw ConfigError("\"auth.tokenSecret\" must be at least 16 bytes long")
            }
            return Array(configured.utf8)
        }
        guard let directory else { return generate() }
        if let secret = try kept(in: directory) { return secret }
        let secret = generate()
        let path = directory + "/" + fileName
        do {
            try FileSystem.makeDirectories(directory, mode: 0o700)
            try FileSystem.writeNew(path, contents: Array((hex(secret) + "\n").utf8), mode: 0o600)
        } catch {
            throw ConfigError("\(path): cannot create the token secret: \(error)")
        }
        return secret
    }

    /// The secret an earlier start generated and kept in `directory`; nil
    /// when there is none. Throws for a file that is shared or not a secret.
    public static func kept(in directory: String) throws(ConfigError) -> [UInt8]? {
        let path = directory + "/" + fileName
        try refuseIfShared(path)
        guard let text = FileContents.read(path) else { return nil }
        guard
            let secret = decodeHex(
                String(decoding: text, as: UTF8.self).trimmingWhitespace()
                    .filter { !$0.isNewline }), secret.count >= 16
        else {
            throw ConfigError("\(path): not a hex-encoded secret; delete it to generate a new one")
        }
        return secret
    }

    /// `secret` in lowercase hex, as the file keeps it.
    static func hex(_ secret: [UInt8]) -> String {
        secret.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    /// A new random 256-bit secret.
    static func generate() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0 ..< 32).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
    }

    /// Throws when the file at `path` exists with any group or other
    /// permission bit. Checked by path before reading: whoever could swap the
    /// file in between can write the data directory, and has the store anyway.
    private static func refuseIfShared(_ path: String) throws(ConfigError) {
        guard let problem = SecretFileMode.problem(path, groupMayRead: false) else { return }
        throw ConfigError(
            "\(path): \(problem) to the token secret, which signs every token; run `chmod 600 \(path)` to keep "
                + "it, or delete it to generate a new one (every token issued so far then stops working)")
    }

    static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index ... index + 1], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }
}
