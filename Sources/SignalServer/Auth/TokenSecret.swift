import SignalProtocol
import SignalSystem
#if canImport(Glibc)
import Glibc
#endif

/// The HMAC key for tokens: `auth.tokenSecret` when configured, otherwise a
/// random 256-bit key generated on first start and kept (mode 0600) in the
/// data directory, so tokens survive restarts. Start-up only.
public enum TokenSecret {
    /// The file name of the generated secret inside the data directory.
    public static let fileName = "token-secret"

    /// The configured secret, or the one kept in `directory` (created if missing).
    public static func load(configured: String?, directory: String) throws(ConfigError) -> [UInt8] {
        if let configured {
            guard configured.utf8.count >= 16 else {
                throw ConfigError("\"auth.tokenSecret\" must be at least 16 bytes long")
            }
            return Array(configured.utf8)
        }
        let path = directory + "/" + fileName
        if let text = FileContents.read(path) {
            guard let secret = decodeHex(String(decoding: text, as: UTF8.self).trimmingWhitespace()
                .filter { !$0.isNewline }), secret.count >= 16 else {
                throw ConfigError("\(path): not a hex-encoded secret; delete it to generate a new one")
            }
            return secret
        }
        var generator = SystemRandomNumberGenerator()
        let secret = (0 ..< 32).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
        let hex = secret.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        do {
            try FileSystem.makeDirectories(directory)
            try FileSystem.writeNew(path, contents: Array((hex + "\n").utf8), mode: 0o600)
        } catch {
            throw ConfigError("\(path): cannot create the token secret: \(error)")
        }
        return secret
    }

    private static func decodeHex(_ text: String) -> [UInt8]? {
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
