import COpenSSL

/// PEM in and out of memory BIOs: key files are read as bytes beforehand, so
/// one code path serves a `.p8` file and a key pasted from a JSON document.
enum PEM {
    /// The first private key in `bytes` (PKCS #8 or a traditional EC or RSA
    /// key), or nil with the reasons on the OpenSSL error queue.
    static func readPrivateKey(_ bytes: [UInt8]) -> OpaquePointer? {
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { return nil }
        return bytes.withUnsafeBytes { buffer -> OpaquePointer? in
            // A read-only BIO over the array's own storage: nothing is copied,
            // and it is freed before the storage can go away.
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            // Without a callback of its own OpenSSL would ask for the
            // passphrase of an encrypted key on the terminal, stalling a server
            // at start-up; failing the read refuses such keys instead.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
        }
    }

    /// The label of the first `-----BEGIN <label>-----` line in `bytes`, to
    /// say what a file holds when it is not a usable key: OpenSSL 3 reports
    /// little more than "unsupported" for a certificate or a public key.
    static func firstLabel(_ bytes: [UInt8]) -> String? {
        let begin = Array("-----BEGIN ".utf8)
        let dashes = Array("-----".utf8)
        guard let start = find(begin, in: bytes[...]) else { return nil }
        let rest = bytes[(start + begin.count)...].prefix(80)
        guard let end = find(dashes, in: rest) else { return nil }
        let label = rest[..<end]
        guard !label.isEmpty, label.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: label, as: UTF8.self)
    }

    private static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (haystack.startIndex ... haystack.endIndex - needle.count).first { start in
            haystack[start ..< start + needle.count].elementsEqual(needle)
        }
    }

    /// The text `write` puts into a memory BIO, or nil if it fails.
    static func text(_ write: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        let pending = Int(BIO_ctrl_pending(bio))
        let bytes = [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            count = Int(max(0, BIO_read(bio, buffer.baseAddress, Int32(pending))))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
