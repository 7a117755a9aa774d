import FuzzSupport
import SignalProtocol

// Input: one byte choosing the chunk size, one of options (bit 0: read as
// the client end; bits 1-2: the message limit), then the bytes of a
// connection without permessage-deflate. Read whole and in chunks, the
// events and the close code must agree.

let limits = [125, 1000, 4096, 65536]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = inputBytes(data, size)
    guard input.count >= 2 else { return 0 }
    let options = input[1]
    let role: WebSocketRole = options & 1 == 0 ? .server : .client
    let limit = limits[Int(options >> 1) & 3]
    let stream = input.dropFirst(2)
    var inflater = WebSocketNoInflation()
    let whole = MessageReaderRun(
        [stream], role: role, maxMessageBytes: limit, perMessageDeflate: false,
        inflater: &inflater)
    let split = MessageReaderRun(
        chunks(stream, size: chunkSize(input[0])), role: role, maxMessageBytes: limit,
        perMessageDeflate: false, inflater: &inflater)
    require(whole == split, "the split changed the outcome: \(whole) vs \(split)")
    return 0
}
