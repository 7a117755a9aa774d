import FuzzSupport
import SignalCompression
import SignalProtocol

// Input: one byte choosing the chunk size, one of options (bit 0: read as
// the client end; bits 1-2: the message limit; bit 3: context takeover;
// bit 4: borrow zlib streams from a cache, as the server does without
// takeover), then the bytes of a connection with permessage-deflate, read
// through the server's inflater. Read whole and in chunks, the events must
// agree and both must fail or neither; the close code may differ, as a
// chunk's inflated bytes may fail UTF-8 validation before a later chunk
// would pass the limit.

let limits = [125, 1000, 4096, 65536]

func run(_ chunks: [ArraySlice<UInt8>], options: UInt8) -> MessageReaderRun {
    var inflater: MessageDecompressor? = MessageDecompressor(
        contextTakeover: options & 8 != 0,
        cache: options & 16 != 0 ? CompressionStreamCache() : nil)
    return MessageReaderRun(
        chunks, role: options & 1 == 0 ? .server : .client,
        maxMessageBytes: limits[Int(options >> 1) & 3], perMessageDeflate: true,
        inflater: &inflater)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = inputBytes(data, size)
    guard input.count >= 2 else { return 0 }
    let stream = input.dropFirst(2)
    let whole = run([stream], options: input[1])
    let split = run(chunks(stream, size: chunkSize(input[0])), options: input[1])
    require(
        whole.events == split.events && (whole.error == nil) == (split.error == nil),
        "the split changed the outcome: \(whole) vs \(split)")
    return 0
}
