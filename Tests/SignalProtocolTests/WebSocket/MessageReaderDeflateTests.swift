import SignalProtocol
import TestSupport
import Testing

/// A stand-in inflater: each compressed byte inflates to `factor` copies of
/// itself, and the message end adds "!"; it records the calls it gets.
struct RepeatingInflater: WebSocketMessageInflating {
    var factor = 1
    var finished = 0

    mutating func inflate(_ compressed: [UInt8], into output: inout [UInt8], limit: Int) throws(WebSocketProtocolError)
    {
        for byte in compressed {
            guard output.count + factor <= limit else { throw WebSocketProtocolError(.messageTooBig, "over") }
            output += repeatElement(byte, count: factor)
        }
    }

    mutating func finishMessage(into output: inout [UInt8], limit: Int) throws(WebSocketProtocolError) {
        finished += 1
        guard output.count < limit else { throw WebSocketProtocolError(.messageTooBig, "over") }
        output.append(UInt8(ascii: "!"))
    }
}

/// Runs a permessage-deflate reader over `chunks` with `inflater`.
func runDeflateReader(
    _ chunks: [[UInt8]], inflater: inout RepeatingInflater, maxMessageBytes: Int = 1 << 20,
    perMessageDeflate: Bool = true
) -> ReaderRun {
    var reader = WebSocketMessageReader(
        role: .server, maxMessageBytes: maxMessageBytes, perMessageDeflate: perMessageDeflate)
    var run = ReaderRun()
    for (chunkIndex, chunk) in chunks.enumerated() {
        reader.append(contentsOf: chunk)
        do {
            while let event = try reader.next(inflater: &inflater) { run.events.append(event) }
        } catch {
            run.error = error
            run.errorChunk = chunkIndex
            return run
        }
    }
    return run
}

@Suite("WebSocketMessageReader: permessage-deflate", .blocking)
struct MessageReaderDeflateTests {
    static let rsv1 = WebSocketFrameHeader.rsv1

    @Test func compressedFragmentsGoThroughTheInflaterAndUncompressedOnesDoNot() {
        var inflater = RepeatingInflater(factor: 2)
        let stream =
            clientFrame(.text, utf8Bytes("ab"), fin: false, reservedBits: Self.rsv1)
            + clientFrame(.ping, utf8Bytes("p"))
            + clientFrame(.continuation, utf8Bytes("c"))
            + clientFrame(.binary, [1, 2])
        for chunks in [[stream], byteByByte(stream)] {
            inflater.finished = 0
            let run = runDeflateReader(chunks, inflater: &inflater)
            #expect(run.error == nil)
            #expect(run.events == [.ping(utf8Bytes("p")), textMessage("aabbcc!"), binaryMessage([1, 2])])
            #expect(inflater.finished == 1)
        }
    }

    @Test func rsv1IsRefusedWithoutNegotiation() {
        var inflater = RepeatingInflater()
        let run = runDeflateReader(
            [clientFrame(.text, utf8Bytes("a"), reservedBits: Self.rsv1)], inflater: &inflater,
            perMessageDeflate: false)
        expectFailure(run, 1002)
        expectFailure(runReader([clientFrame(.binary, [1], reservedBits: Self.rsv1)]), 1002)
    }

    @Test func rsv1OnAContinuationFails() {
        for first in [Self.rsv1, 0] {
            var inflater = RepeatingInflater()
            let run = runDeflateReader(
                [
                    clientFrame(.text, utf8Bytes("a"), fin: false, reservedBits: first)
                        + clientFrame(.continuation, utf8Bytes("b"), reservedBits: Self.rsv1)
                ], inflater: &inflater)
            expectFailure(run, 1002)
            #expect(run.events.isEmpty)
        }
    }

    @Test("RSV1 on a control frame fails", arguments: [WebSocketOpcode.ping, .pong, .close])
    func rsv1OnControlFrames(_ opcode: WebSocketOpcode) {
        var inflater = RepeatingInflater()
        expectFailure(runDeflateReader([clientFrame(opcode, [], reservedBits: Self.rsv1)], inflater: &inflater), 1002)
    }

    @Test func theLimitAppliesToInflatedBytes() {
        var inflater = RepeatingInflater(factor: 10)
        let run = runDeflateReader(
            [clientFrame(.binary, patternPayload(20), reservedBits: Self.rsv1)],
            inflater: &inflater, maxMessageBytes: 100)
        expectFailure(run, 1009)
        var fitting = RepeatingInflater(factor: 10)
        let ok = runDeflateReader(
            [clientFrame(.binary, patternPayload(9), reservedBits: Self.rsv1)],
            inflater: &fitting, maxMessageBytes: 100)
        #expect(ok.error == nil)
        #expect(ok.events.count == 1)
    }

    @Test func compressedWireBytesAreBoundedToo() {
        var inflater = RepeatingInflater()
        let reader = WebSocketMessageReader(role: .server, maxMessageBytes: 100, perMessageDeflate: true)
        #expect(reader.maxCompressedBytes == 1224)
        let header = Array(clientFrame(.binary, patternPayload(1225), reservedBits: Self.rsv1).prefix(8))
        expectFailure(runDeflateReader([header], inflater: &inflater, maxMessageBytes: 100), 1009)
    }

    @Test func inflatedTextIsValidatedAsUTF8() {
        var inflater = RepeatingInflater()
        let run = runDeflateReader([clientFrame(.text, [0xC3], reservedBits: Self.rsv1)], inflater: &inflater)
        expectFailure(run, 1007)
    }

    @Test func aReaderWithoutInflaterFailsACompressedMessage() {
        var reader = WebSocketMessageReader(role: .server, maxMessageBytes: 100, perMessageDeflate: true)
        reader.append(contentsOf: clientFrame(.binary, [1], reservedBits: Self.rsv1))
        #expect(throws: WebSocketProtocolError(.protocolError, "compressed message without permessage-deflate")) {
            try reader.next()
        }
    }
}
