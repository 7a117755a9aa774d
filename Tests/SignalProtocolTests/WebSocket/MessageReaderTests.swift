import SignalProtocol
import TestSupport
import Testing

func binaryMessage(_ payload: [UInt8]) -> WebSocketMessageReader.Event {
    .message(WebSocketMessage(kind: .binary, payload: payload))
}

func textMessage(_ text: String) -> WebSocketMessageReader.Event { .message(.text(text)) }

func textMessage(_ payload: [UInt8]) -> WebSocketMessageReader.Event {
    .message(WebSocketMessage(kind: .text, payload: payload))
}

/// Expects `run` to have failed with `code`.
func expectFailure(_ run: ReaderRun, _ code: UInt16, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(run.error?.closeCode.rawValue == code, "events: \(run.events)", sourceLocation: sourceLocation)
}

@Suite("WebSocketMessageReader: messages", .blocking)
struct MessageReaderTests {
    @Test func singleFrameMessages() {
        let stream =
            clientFrame(.text, utf8Bytes("Hello")) + clientFrame(.binary, [0, 1, 0xFF])
            + clientFrame(.text, []) + clientFrame(.binary, [])
        let run = runReader([stream])
        #expect(run.error == nil)
        #expect(run.events == [textMessage("Hello"), binaryMessage([0, 1, 0xFF]), textMessage(""), binaryMessage([])])
    }

    @Test func fragmentedTextIsReassembled() {
        let stream = clientFrame(.text, utf8Bytes("Hel"), fin: false) + clientFrame(.continuation, utf8Bytes("lo"))
        let run = runReader([stream])
        #expect(run.error == nil)
        #expect(run.events == [textMessage("Hello")])
    }

    @Test func fragmentedBinaryWithEmptyFragmentsIsReassembled() {
        let stream =
            clientFrame(.binary, [], fin: false) + clientFrame(.continuation, [1, 2], fin: false)
            + clientFrame(.continuation, [], fin: false) + clientFrame(.continuation, [3])
        let run = runReader([stream])
        #expect(run.error == nil)
        #expect(run.events == [binaryMessage([1, 2, 3])])
    }

    /// A fragmented text, a fragmented binary with pings and pongs between the
    /// fragments, and a close at the end.
    static let interleaved: (bytes: [UInt8], events: [WebSocketMessageReader.Event]) = {
        let big = patternPayload(70_000)
        var bytes = clientFrame(.text, utf8Bytes("a€"), fin: false)
        bytes += clientFrame(.ping, utf8Bytes("p1"))
        bytes += clientFrame(.continuation, utf8Bytes("b"), fin: false)
        bytes += clientFrame(.pong, utf8Bytes("p2"))
        bytes += clientFrame(.ping, [])
        bytes += clientFrame(.continuation, utf8Bytes("c😀"))
        bytes += clientFrame(.pong, [0xFF, 0x00])
        bytes += clientFrame(.binary, Array(big[..<40_000]), fin: false)
        bytes += clientFrame(.ping, patternPayload(125))
        bytes += clientFrame(.continuation, Array(big[40_000...]))
        bytes += clientFrame(.close, WebSocketFrameEncoder.closePayload(code: .goingAway, reason: "done"))
        let events: [WebSocketMessageReader.Event] = [
            .ping(utf8Bytes("p1")), .pong(utf8Bytes("p2")), .ping([]), textMessage("a€bc😀"),
            .pong([0xFF, 0x00]), .ping(patternPayload(125)), binaryMessage(big),
            .close(code: .goingAway, reason: "done"),
        ]
        return (bytes, events)
    }()

    @Test func controlFramesBetweenFragmentsAreReportedInOrder() {
        let run = runReader([Self.interleaved.bytes])
        #expect(run.error == nil)
        #expect(run.events == Self.interleaved.events)
    }

    @Test func interleavedStreamByteByByte() {
        let run = runReader(byteByByte(Self.interleaved.bytes))
        #expect(run.error == nil)
        #expect(run.events == Self.interleaved.events)
    }

    @Test("interleaved stream in seeded random splits", arguments: 1 ... 12)
    func interleavedStreamRandomSplits(seed: Int) {
        let run = runReader(randomSplit(Self.interleaved.bytes, seed: UInt64(seed)))
        #expect(run.error == nil, "seed \(seed)")
        #expect(run.events == Self.interleaved.events, "seed \(seed)")
    }

    @Test func clientRoleReadsUnmaskedFrames() {
        let stream =
            serverFrame(.text, utf8Bytes("hi"), fin: false) + serverFrame(.ping, [7])
            + serverFrame(.continuation, utf8Bytes("!"))
        let run = runReader(byteByByte(stream), role: .client)
        #expect(run.error == nil)
        #expect(run.events == [.ping([7]), textMessage("hi!")])
    }

    @Test func decoderErrorsPropagateWithTheirCode() {
        expectFailure(runReader([serverFrame(.text, utf8Bytes("x"))], role: .server), 1002)
        expectFailure(runReader([clientFrame(.text, utf8Bytes("x"))], role: .client), 1002)
        expectFailure(runReader([clientFrame(.text, utf8Bytes("x"), reservedBits: 0b100)]), 1002)
        expectFailure(runReader([[0x83, 0x80, 0, 0, 0, 0]]), 1002)
        expectFailure(runReader([[0x09, 0x80, 0, 0, 0, 0]]), 1002)
    }

    @Test func pingAndPongPayloadsArePreservedByteExact() {
        var rng = SplitMix64(seed: 99)
        for length in [0, 1, 2, 3, 4, 5, 64, 124, 125] {
            let payload = rng.bytes(length)
            let stream = clientFrame(.ping, payload) + clientFrame(.pong, payload)
            for chunks in [[stream], byteByByte(stream)] {
                let run = runReader(chunks)
                #expect(run.error == nil)
                #expect(run.events == [.ping(payload), .pong(payload)])
            }
        }
        let allByteValues = (0 ... 124).map { UInt8($0 * 2 + 1) }  // includes invalid UTF-8 bytes
        #expect(runReader([clientFrame(.ping, allByteValues)]).events == [.ping(allByteValues)])
    }
}

@Suite("WebSocketMessageReader: fragmentation errors", .blocking)
struct MessageReaderFragmentationTests {
    @Test func continuationWithoutAStartFails() {
        expectFailure(runReader([clientFrame(.continuation, utf8Bytes("x"))]), 1002)
        expectFailure(runReader([clientFrame(.continuation, [], fin: false)]), 1002)
    }

    @Test func continuationAfterACompletedMessageFails() {
        let stream = clientFrame(.text, utf8Bytes("done")) + clientFrame(.continuation, utf8Bytes("more"))
        let run = runReader([stream])
        #expect(run.events == [textMessage("done")])
        expectFailure(run, 1002)
    }

    @Test(
        "a new data frame while a fragmented message is open fails",
        arguments: [
            (WebSocketOpcode.text, WebSocketOpcode.text), (.text, .binary), (.binary, .text), (.binary, .binary),
        ])
    func newMessageWhileOpen(first: WebSocketOpcode, second: WebSocketOpcode) {
        for secondFin in [true, false] {
            let stream =
                clientFrame(first, utf8Bytes("a"), fin: false) + clientFrame(.ping, [])
                + clientFrame(second, utf8Bytes("b"), fin: secondFin)
            let run = runReader([stream])
            #expect(run.events == [.ping([])])
            expectFailure(run, 1002)
            // The error comes with the second frame's header, before its payload.
            let headerOnly = runReader([Array(stream.dropLast(1))])
            expectFailure(headerOnly, 1002)
        }
    }
}

@Suite("WebSocketMessageReader: size limit", .blocking)
struct MessageReaderSizeTests {
    @Test(
        "a frame header announcing more than the limit fails with 1009 before any payload",
        arguments: [(100, 101), (100, 126), (125, 65_536), (1_000, 70_000), (0, 1), (65_535, 65_536)])
    func headerOverLimit(limit: Int, length: Int) {
        for opcode: WebSocketOpcode in [.text, .binary] {
            let frame = clientFrame(opcode, patternPayload(length, salt: 1))
            let headerSize = frame.count - length
            let run = runReader([Array(frame[..<headerSize])], maxMessageBytes: limit)
            expectFailure(run, 1009)
            #expect(run.events.isEmpty)
        }
    }

    @Test func messageAtTheLimitIsAccepted() {
        let payload = patternPayload(100)
        let run = runReader([clientFrame(.binary, payload)], maxMessageBytes: 100)
        #expect(run.error == nil)
        #expect(run.events == [binaryMessage(payload)])
        let empty = runReader([clientFrame(.text, [])], maxMessageBytes: 0)
        #expect(empty.events == [textMessage("")])
    }

    @Test func sumAcrossFragmentsIsLimited() {
        let first = clientFrame(.binary, patternPayload(60), fin: false)
        let ping = clientFrame(.ping, patternPayload(125))  // control frames do not count
        let overflowing = clientFrame(.continuation, patternPayload(41))
        let headerSize = overflowing.count - 41
        let run = runReader([first + ping, Array(overflowing[..<headerSize])], maxMessageBytes: 100)
        expectFailure(run, 1009)
        #expect(run.errorChunk == 1)
        #expect(run.events == [.ping(patternPayload(125))])

        let fitting =
            clientFrame(.continuation, patternPayload(20), fin: false) + clientFrame(.continuation, patternPayload(20))
        let ok = runReader([first + ping + fitting], maxMessageBytes: 100)
        #expect(ok.error == nil)
        #expect(
            ok.events == [
                .ping(patternPayload(125)), binaryMessage(patternPayload(60) + patternPayload(20) + patternPayload(20)),
            ])

        let manySmall = (0 ..< 11).map {
            clientFrame($0 == 0 ? .text : .continuation, utf8Bytes("0123456789"), fin: false)
        }
        expectFailure(runReader(manySmall, maxMessageBytes: 105), 1009)
    }

    @Test func limitResetsBetweenMessages() {
        let stream = (0 ..< 5).flatMap { _ in clientFrame(.binary, patternPayload(80)) }
        let run = runReader([stream], maxMessageBytes: 100)
        #expect(run.error == nil)
        #expect(run.events.count == 5)
    }
}

@Suite("WebSocketMessageReader: after an error", .blocking)
struct MessageReaderFailureTests {
    @Test("stays failed: later valid frames are not reported")
    func staysFailed() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageBytes: 1024)
        let key = WebSocketMaskKey(1, 2, 3, 4)
        reader.append(contentsOf: WebSocketFrameEncoder.frame(.text, payload: [0xC0, 0x80], maskKey: key))
        reader.append(contentsOf: WebSocketFrameEncoder.frame(.text, payload: Array("ok".utf8), maskKey: key))
        #expect(throws: WebSocketProtocolError.self) { try reader.next() }
        #expect(try reader.next() == nil)
    }
}
