import FuzzSupport
import SignalProtocol

// Input: a text frame from a client. A refusal keeps only a valid id; a
// frame that parses is encoded to bytes that parse back to the same frame.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let frame: ClientFrame
    do {
        frame = try ClientFrame.parse(inputBytes(data, size))
    } catch {
        if let id = error.id {
            require(ClientFrame.idBytes.contains(id.utf8.count), "a refusal kept the invalid id \(id)")
        }
        return 0
    }
    let encoded = frame.encoded
    do {
        let again = try ClientFrame.parse(encoded)
        require(again == frame, "\(frame) round-trips as \(again)")
    } catch {
        fatalError("the encoded frame \(String(decoding: encoded, as: UTF8.self)) is refused: \(error)")
    }
    return 0
}
