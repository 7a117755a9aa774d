import FuzzSupport
import SignalProtocol

// Input: a JSON text. What parses stays within the nesting limit, and
// writing it out gives a text that parses back to the same value and is
// written out the same again.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let value = try? JSONValue.parse(inputBytes(data, size)) else { return 0 }
    require(value.depth <= JSONValue.maxDepth, "nesting \(value.depth) passed the limit")
    var written: [UInt8] = []
    value.write(into: &written)
    let reparsed: JSONValue
    do {
        reparsed = try JSONValue.parse(written)
    } catch {
        fatalError("the written form \(value.serialized) does not parse: \(error)")
    }
    require(reparsed == value, "\(value.serialized) parses back as \(reparsed.serialized)")
    var rewritten: [UInt8] = []
    reparsed.write(into: &rewritten)
    require(rewritten == written, "writing is not stable: \(reparsed.serialized)")
    return 0
}
