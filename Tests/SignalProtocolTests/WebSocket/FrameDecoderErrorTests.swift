import SignalProtocol
import TestSupport
import Testing

/// Raw header bytes: the first byte from its fields, the second with the mask
/// bit and a 7-bit length, then any extended length and mask key.
func rawHeader(
    fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, masked: Bool, length7: UInt8,
    extended: [UInt8] = []
) -> [UInt8] {
    var out: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode, (masked ? 0x80 : 0) | length7]
    out += extended
    if masked { out += [testMaskKey.b0, testMaskKey.b1, testMaskKey.b2, testMaskKey.b3] }
    return out
}

/// A protocol violation visible in the first two header bytes.
struct TwoByteViolation: CustomTestStringConvertible, Sendable {
    var name: String
    var role: WebSocketRole
    var first: UInt8
    var second: UInt8
    var allowedReservedBits: UInt8 = 0

    var testDescription: String { name }
}

/// Masked for the server role, unmasked for the client role.
func maskBit(_ role: WebSocketRole) -> UInt8 { role == .server ? 0x80 : 0 }

let twoByteViolations: [TwoByteViolation] = {
    var cases: [TwoByteViolation] = [
        TwoByteViolation(name: "unmasked frame to a server", role: .server, first: 0x81, second: 0x05),
        TwoByteViolation(name: "unmasked empty frame to a server", role: .server, first: 0x82, second: 0x00),
        TwoByteViolation(name: "masked frame to a client", role: .client, first: 0x81, second: 0x85),
        TwoByteViolation(name: "masked ping to a client", role: .client, first: 0x89, second: 0x80),
    ]
    for role in [WebSocketRole.server, .client] {
        let m = maskBit(role)
        let who = role == .server ? "server" : "client"
        for rsv: UInt8 in 1 ... 7 {
            cases.append(
                TwoByteViolation(name: "\(who): RSV \(rsv) on text", role: role, first: 0x81 | rsv << 4, second: m | 1))
        }
        cases.append(
            TwoByteViolation(
                name: "\(who): RSV2 with only RSV1 allowed", role: role,
                first: 0x81 | 0x20, second: m | 1, allowedReservedBits: WebSocketFrameHeader.rsv1))
        cases.append(
            TwoByteViolation(
                name: "\(who): RSV1 on ping even when allowed", role: role,
                first: 0x89 | 0x40, second: m, allowedReservedBits: WebSocketFrameHeader.rsv1))
        for opcode: UInt8 in [0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            cases.append(
                TwoByteViolation(name: "\(who): opcode \(opcode)", role: role, first: 0x80 | opcode, second: m | 1))
            cases.append(
                TwoByteViolation(name: "\(who): opcode \(opcode) unfinished", role: role, first: opcode, second: m))
        }
        for opcode: UInt8 in [0x8, 0x9, 0xA] {
            cases.append(
                TwoByteViolation(
                    name: "\(who): control \(opcode) length 126", role: role, first: 0x80 | opcode, second: m | 126))
            cases.append(
                TwoByteViolation(
                    name: "\(who): control \(opcode) length 127", role: role, first: 0x80 | opcode, second: m | 127))
            cases.append(
                TwoByteViolation(name: "\(who): control \(opcode) fin=0", role: role, first: opcode, second: m | 1))
            cases.append(
                TwoByteViolation(name: "\(who): control \(opcode) fin=0 empty", role: role, first: opcode, second: m))
        }
    }
    return cases
}()

/// A header that is only judged wrong once its extended length is read.
struct LengthViolation: CustomTestStringConvertible, Sendable {
    var name: String
    var length7: UInt8
    var extended: [UInt8]

    var testDescription: String { name }
}

let lengthViolations: [LengthViolation] = [
    LengthViolation(name: "126 encoding 0", length7: 126, extended: [0x00, 0x00]),
    LengthViolation(name: "126 encoding 5", length7: 126, extended: [0x00, 0x05]),
    LengthViolation(name: "126 encoding 125", length7: 126, extended: [0x00, 0x7D]),
    LengthViolation(name: "127 encoding 0", length7: 127, extended: [0, 0, 0, 0, 0, 0, 0, 0]),
    LengthViolation(name: "127 encoding 125", length7: 127, extended: [0, 0, 0, 0, 0, 0, 0, 0x7D]),
    LengthViolation(name: "127 encoding 126", length7: 127, extended: [0, 0, 0, 0, 0, 0, 0, 0x7E]),
    LengthViolation(name: "127 encoding 65535", length7: 127, extended: [0, 0, 0, 0, 0, 0, 0xFF, 0xFF]),
    LengthViolation(name: "127 with high bit set", length7: 127, extended: [0x80, 0, 0, 0, 0, 0, 0, 0x01]),
    LengthViolation(name: "127 all ones", length7: 127, extended: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
    LengthViolation(name: "127 high bit only", length7: 127, extended: [0x80, 0, 0, 0, 0, 0, 0, 0]),
]

@Suite("WebSocketFrameDecoder: errors", .blocking)
struct FrameDecoderErrorTests {
    @Test("violations judged from the first two bytes fail with 1002 at once", arguments: twoByteViolations)
    func failsOnFirstTwoBytes(_ violation: TwoByteViolation) throws {
        var decoder = WebSocketFrameDecoder(role: violation.role, allowedReservedBits: violation.allowedReservedBits)
        decoder.append(contentsOf: [violation.first])
        let afterOneByte = try decoder.next()
        #expect(afterOneByte == nil)
        decoder.append(contentsOf: [violation.second])
        do {
            let event = try decoder.next()
            Issue.record("expected an error, got \(String(describing: event))")
        } catch {
            #expect(error.closeCode == .protocolError)
            #expect(error.closeCode.rawValue == 1002)
            #expect(error.reason.utf8.count < 123)
        }
        // After an error the decoder reports nothing more, even given bytes.
        decoder.append(contentsOf: clientFrame(.text, utf8Bytes("late")) + serverFrame(.text, utf8Bytes("late")))
        let afterError = try decoder.next()
        #expect(afterError == nil)
        let again = try decoder.next()
        #expect(again == nil)
    }

    @Test("the same violations fail within a whole frame, every split", arguments: twoByteViolations)
    func failsWithinAWholeFrame(_ violation: TwoByteViolation) {
        var frame = [violation.first, violation.second]
        if violation.second & 0x80 != 0 { frame += [1, 2, 3, 4] }
        frame += [UInt8](repeating: 0x41, count: Int(min(violation.second & 0x7F, 125)))
        for seed in 0 ..< 6 {
            let run = runDecoder(
                randomSplit(frame, seed: UInt64(seed)), role: violation.role,
                allowedReservedBits: violation.allowedReservedBits)
            #expect(run.error?.closeCode == .protocolError)
            #expect(run.frames.isEmpty)
            #expect(run.headers.isEmpty)
        }
    }

    @Test("non-minimal and oversized lengths fail with 1002", arguments: lengthViolations)
    func lengthEncodingViolations(_ violation: LengthViolation) throws {
        for role in [WebSocketRole.server, .client] {
            let header = rawHeader(
                opcode: 0x2, masked: role == .server, length7: violation.length7, extended: violation.extended)
            var decoder = WebSocketFrameDecoder(role: role)
            // All but the last header byte: undecidable yet, so no event and no error.
            decoder.append(contentsOf: header.dropLast())
            let partial = try decoder.next()
            #expect(partial == nil)
            decoder.append(contentsOf: header.suffix(1))
            do {
                let event = try decoder.next()
                Issue.record("expected an error, got \(String(describing: event))")
            } catch {
                #expect(error.closeCode == .protocolError)
            }
            let afterError = try decoder.next()
            #expect(afterError == nil)
        }
    }

    static let minimalLengths: [(UInt8, [UInt8], Int)] = [
        (126, [0x00, 0x7E], 126),
        (126, [0xFF, 0xFF], 65_535),
        (127, [0, 0, 0, 0, 0, 1, 0, 0], 65_536),
        (127, [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], Int(Int64.max)),
    ]

    @Test("minimal extended lengths are accepted", arguments: minimalLengths)
    func minimalLengthsAccepted(length7: UInt8, extended: [UInt8], length: Int) throws {
        var decoder = WebSocketFrameDecoder(role: .client)
        decoder.append(contentsOf: rawHeader(opcode: 0x2, masked: false, length7: length7, extended: extended))
        let event = try decoder.next()
        #expect(event == .header(WebSocketFrameHeader(opcode: .binary, payloadLength: length)))
    }

    @Test func reservedBitsAcceptedWhenAllowed() throws {
        for rsv: UInt8 in 1 ... 7 {
            let frame = clientFrame(.binary, [9, 8, 7], reservedBits: rsv)
            let allowed = runDecoder([frame], role: .server, allowedReservedBits: rsv)
            #expect(allowed.error == nil)
            #expect(allowed.frames.map(\.header.reservedBits) == [rsv])
            let all = runDecoder([frame], role: .server, allowedReservedBits: 0b111)
            #expect(all.error == nil)
            let none = runDecoder([frame], role: .server)
            #expect(none.error?.closeCode == .protocolError)
        }
    }

    @Test func allowedReservedBitsCanChangeBetweenFrames() throws {
        var decoder = WebSocketFrameDecoder(role: .client)
        decoder.allowedReservedBits = WebSocketFrameHeader.rsv1
        decoder.append(contentsOf: serverFrame(.text, [0x41], reservedBits: WebSocketFrameHeader.rsv1))
        let header = try decoder.next()
        #expect(
            header
                == .header(
                    WebSocketFrameHeader(reservedBits: WebSocketFrameHeader.rsv1, opcode: .text, payloadLength: 1)))
        _ = try decoder.next()
        decoder.allowedReservedBits = 0
        decoder.append(contentsOf: serverFrame(.text, [0x41], reservedBits: WebSocketFrameHeader.rsv1))
        #expect(throws: WebSocketProtocolError.self) { try decoder.next() }
    }

    @Test func errorAfterValidFramesKeepsEarlierFrames() {
        let good = clientFrame(.text, utf8Bytes("fine")) + clientFrame(.ping, utf8Bytes("p"))
        let bad: [UInt8] = [0x83, 0x80, 1, 2, 3, 4]  // opcode 3
        for chunks in [[good + bad], byteByByte(good + bad), randomSplit(good + bad, seed: 7)] {
            let run = runDecoder(chunks, role: .server)
            #expect(run.frames.map(\.payload) == [utf8Bytes("fine"), utf8Bytes("p")])
            #expect(run.error?.closeCode == .protocolError)
        }
    }

    @Test func byteByByteUnmaskedFrameFailsOnSecondByte() {
        let frame = serverFrame(.text, utf8Bytes("Hello"))
        let run = runDecoder(byteByByte(frame), role: .server)
        #expect(run.error?.closeCode == .protocolError)
        #expect(run.errorChunk == 1)
    }

    @Test func byteByByteMaskedFrameToClientFailsOnSecondByte() {
        let frame = clientFrame(.binary, patternPayload(200))
        let run = runDecoder(byteByByte(frame), role: .client)
        #expect(run.error?.closeCode == .protocolError)
        #expect(run.errorChunk == 1)
    }

    @Test func definedOpcodesAreAccepted() {
        for opcode: WebSocketOpcode in [.text, .binary, .ping, .pong, .close] {
            let run = runDecoder([clientFrame(opcode, [])], role: .server)
            #expect(run.error == nil, "\(opcode)")
            #expect(run.frames.map(\.header.opcode) == [opcode])
        }
        let continuation = runDecoder([clientFrame(.continuation, [1])], role: .server)
        #expect(continuation.error == nil)  // message-level rules belong to the reader
    }

    @Test func controlFrameOf125BytesIsAccepted() {
        for opcode: WebSocketOpcode in [.ping, .pong, .close] {
            let run = runDecoder([clientFrame(opcode, patternPayload(125))], role: .server)
            #expect(run.error == nil)
            #expect(run.frames.first?.payload == patternPayload(125))
        }
    }
}
