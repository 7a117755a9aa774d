/// The fuzzer's input as an array.
public func inputBytes(_ data: UnsafePointer<UInt8>, _ size: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: data, count: size))
}

/// `bytes` cut into consecutive chunks of `size` bytes (the last one may be
/// shorter), as an incremental parser would receive them from a socket.
public func chunks(_ bytes: ArraySlice<UInt8>, size: Int) -> [ArraySlice<UInt8>] {
    require(size > 0, "chunk size \(size)")
    return stride(from: bytes.startIndex, to: bytes.endIndex, by: size).map { start in
        bytes[start ..< min(start + size, bytes.endIndex)]
    }
}

/// The chunk size an input's leading byte selects: 1 to 256 bytes, so that
/// byte-by-byte feeding is as likely as bulk.
public func chunkSize(_ byte: UInt8) -> Int { Int(byte) + 1 }
