import SignalProtocol
import TestSupport
import Testing

let rfcMaskKey = WebSocketMaskKey(0x37, 0xFA, 0x21, 0x3D)

@Suite("WebSocketFrameEncoder", .blocking)
struct FrameEncoderTests {
    // MARK: RFC 6455 §5.7 examples

    @Test func unmaskedHello() {
        #expect(
            WebSocketFrameEncoder.frame(.text, payload: utf8Bytes("Hello")) == [
                0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F,
            ])
    }

    @Test func maskedHello() {
        let frame = WebSocketFrameEncoder.frame(.text, payload: utf8Bytes("Hello"), maskKey: rfcMaskKey)
        #expect(frame == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func fragmentedUnmaskedHello() {
        #expect(
            WebSocketFrameEncoder.frame(.text, payload: utf8Bytes("Hel"), fin: false) == [0x01, 0x03, 0x48, 0x65, 0x6C])
        #expect(WebSocketFrameEncoder.frame(.continuation, payload: utf8Bytes("lo")) == [0x80, 0x02, 0x6C, 0x6F])
    }

    @Test func pingAndMaskedPong() {
        #expect(
            WebSocketFrameEncoder.frame(.ping, payload: utf8Bytes("Hello")) == [
                0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F,
            ])
        let pong = WebSocketFrameEncoder.frame(.pong, payload: utf8Bytes("Hello"), maskKey: rfcMaskKey)
        #expect(pong == [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func binary256Bytes() {
        let payload = patternPayload(256)
        let frame = WebSocketFrameEncoder.frame(.binary, payload: payload)
        #expect(Array(frame.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
        #expect(Array(frame.dropFirst(4)) == payload)
        #expect(WebSocketFrameEncoder.header(.binary, payloadLength: 256) == [0x82, 0x7E, 0x01, 0x00])
    }

    @Test func binary64KiB() {
        let payload = patternPayload(65_536)
        let frame = WebSocketFrameEncoder.frame(.binary, payload: payload)
        #expect(Array(frame.prefix(10)) == [0x82, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00])
        #expect(frame.count == 10 + 65_536)
        #expect(Array(frame.dropFirst(10)) == payload)
        #expect(WebSocketFrameEncoder.header(.binary, payloadLength: 65_536) == [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])
    }

    @Test(
        "header bytes at the length-encoding boundaries",
        arguments: [
            (0, [UInt8(0x00)]), (125, [0x7D]), (126, [0x7E, 0x00, 0x7E]), (65_535, [0x7E, 0xFF, 0xFF]),
            (65_536, [0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00]), (70_000, [0x7F, 0, 0, 0, 0, 0, 0x01, 0x11, 0x70]),
            (Int(Int64.max), [0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ])
    func headerLengths(length: Int, lengthBytes: [UInt8]) {
        #expect(WebSocketFrameEncoder.header(.binary, payloadLength: length) == [0x82] + lengthBytes)
        let unmasked = WebSocketFrameHeader(opcode: .binary, payloadLength: length)
        #expect(unmasked.encodedSize == 1 + lengthBytes.count)
        let masked = WebSocketFrameHeader(opcode: .binary, maskKey: rfcMaskKey, payloadLength: length)
        var out: [UInt8] = []
        masked.encode(into: &out)
        #expect(out == [0x82, lengthBytes[0] | 0x80] + lengthBytes.dropFirst() + [0x37, 0xFA, 0x21, 0x3D])
        #expect(masked.encodedSize == out.count)
    }

    @Test func headerFlags() {
        #expect(WebSocketFrameEncoder.header(.text, payloadLength: 1, fin: false) == [0x01, 0x01])
        #expect(
            WebSocketFrameEncoder.header(.text, payloadLength: 1, reservedBits: WebSocketFrameHeader.rsv1) == [
                0xC1, 0x01,
            ])
        #expect(
            WebSocketFrameEncoder.header(.binary, payloadLength: 0, fin: false, reservedBits: 0b111) == [0x72, 0x00])
        #expect(WebSocketFrameEncoder.header(.close, payloadLength: 2) == [0x88, 0x02])
        #expect(WebSocketFrameEncoder.header(.pong, payloadLength: 0) == [0x8A, 0x00])
        #expect(WebSocketFrameEncoder.frame(.binary, payload: [], reservedBits: 0b001) == [0x92, 0x00])
    }

    // MARK: Masking

    @Test func maskKeyAppliesAtAnyOffset() {
        let payload = patternPayload(37)
        var whole = payload
        rfcMaskKey.apply(to: &whole)
        for cut in 0 ... payload.count {
            var head = Array(payload[..<cut]), tail = Array(payload[cut...])
            rfcMaskKey.apply(to: &head)
            rfcMaskKey.apply(to: &tail, startingAt: cut)
            #expect(head + tail == whole, "cut at \(cut)")
        }
        #expect(whole.enumerated().allSatisfy { $0.element == payload[$0.offset] ^ rfcMaskKey[$0.offset] })
        var twice = whole
        rfcMaskKey.apply(to: &twice)
        #expect(twice == payload)
        #expect(
            [rfcMaskKey[0], rfcMaskKey[1], rfcMaskKey[2], rfcMaskKey[3], rfcMaskKey[4]] == [
                0x37, 0xFA, 0x21, 0x3D, 0x37,
            ])
    }

    @Test func maskedPayloadDiffersFromPlainText() {
        let payload = patternPayload(200)
        let frame = WebSocketFrameEncoder.frame(.binary, payload: payload, maskKey: rfcMaskKey)
        let body = Array(frame.suffix(200))
        #expect(body != payload)
        #expect(body.enumerated().allSatisfy { $0.element == payload[$0.offset] ^ rfcMaskKey[$0.offset] })
    }

    // MARK: Round trips

    @Test(
        "encode then decode", arguments: [0, 1, 2, 3, 4, 5, 100, 125, 126, 127, 1_000, 65_535, 65_536, 70_000, 131_073])
    func roundTrip(length: Int) {
        var rng = SplitMix64(seed: UInt64(length))
        let payload = rng.bytes(length)
        let opcodes: [WebSocketOpcode] =
            length <= 125 ? [.text, .binary, .continuation, .ping, .pong, .close] : [.text, .binary, .continuation]
        for opcode in opcodes {
            for fin in opcode.isControl ? [true] : [true, false] {
                let key = WebSocketMaskKey(rng.bytes(1)[0], rng.bytes(1)[0], rng.bytes(1)[0], rng.bytes(1)[0])
                let masked = WebSocketFrameEncoder.frame(opcode, payload: payload, fin: fin, maskKey: key)
                let server = runDecoder(randomSplit(masked, seed: UInt64(length) &+ 5), role: .server)
                #expect(server.error == nil)
                #expect(
                    server.frames == [
                        DecodedFrame(
                            header: WebSocketFrameHeader(fin: fin, opcode: opcode, maskKey: key, payloadLength: length),
                            payload: payload)
                    ])

                let plain = WebSocketFrameEncoder.frame(opcode, payload: payload, fin: fin)
                let client = runDecoder([plain], role: .client)
                #expect(client.error == nil)
                #expect(
                    client.frames == [
                        DecodedFrame(
                            header: WebSocketFrameHeader(fin: fin, opcode: opcode, payloadLength: length),
                            payload: payload)
                    ])

                // header(...) plus the raw payload equals frame(...) unmasked.
                #expect(WebSocketFrameEncoder.header(opcode, payloadLength: length, fin: fin) + payload == plain)
            }
        }
    }

    @Test func randomKeyIsUsableAndRoundTrips() {
        let key = WebSocketMaskKey.random()
        let frame = WebSocketFrameEncoder.frame(.text, payload: utf8Bytes("random key"), maskKey: key)
        let run = runReader([frame])
        #expect(run.events == [textMessage("random key")])
        #expect(Array(frame[2 ..< 6]) == [key.b0, key.b1, key.b2, key.b3])
    }

    // MARK: Close payloads

    @Test func closePayloadLayout() {
        #expect(WebSocketFrameEncoder.closePayload(code: .normalClosure, reason: "") == [0x03, 0xE8])
        #expect(WebSocketFrameEncoder.closePayload(code: .goingAway, reason: "bye") == [0x03, 0xE9, 0x62, 0x79, 0x65])
        #expect(
            WebSocketFrameEncoder.closePayload(code: WebSocketCloseCode(rawValue: 4999), reason: "é") == [
                0x13, 0x87, 0xC3, 0xA9,
            ])
    }

    @Test(
        "long reasons are cut to 125 bytes at a character boundary",
        arguments: [
            (String(repeating: "a", count: 200), 125),
            (String(repeating: "a", count: 123), 125),
            (String(repeating: "a", count: 124), 125),
            (String(repeating: "é", count: 100), 124),  // 2-byte: 61 fit (122), the 62nd would need 124
            (String(repeating: "€", count: 100), 125),  // 3-byte: exactly 41 fit
            (String(repeating: "😀", count: 40), 122),  // 4-byte: 30 fit (120)
            ("a" + String(repeating: "😀", count: 40), 123),  // 1 + 30 × 4
            ("ab" + String(repeating: "€", count: 50), 124),  // 2 + 40 × 3
            (String(repeating: "a", count: 122) + "é", 124),  // 122 + 2 would be 124 of 123: cut
            (String(repeating: "a", count: 121) + "é", 125),  // 121 + 2 = 123: fits
        ])
    func closePayloadTruncation(reason: String, expectedCount: Int) {
        let payload = WebSocketFrameEncoder.closePayload(code: .normalClosure, reason: reason)
        #expect(payload.count == expectedCount)
        #expect(payload.count <= 125)
        #expect(Array(payload.prefix(2)) == [0x03, 0xE8])
        let cut = Array(payload.dropFirst(2))
        #expect(UTF8Validator.isValid(cut))
        #expect(Array(reason.utf8).starts(with: cut))
        // The result is a valid close frame for a reader.
        let run = runReader([clientFrame(.close, payload)])
        #expect(run.events == [.close(code: .normalClosure, reason: String(decoding: cut, as: UTF8.self))])
    }

    @Test func closePayloadIsMaximalForRandomReasons() {
        var rng = SplitMix64(seed: 2024)
        let pieces = ["a", "é", "€", "😀", "\u{10FFFF}", "z", "ß"]
        for _ in 0 ..< 300 {
            let reason = (0 ..< rng.int(in: 0 ... 80)).map { _ in pieces[rng.int(in: 0 ... pieces.count - 1)] }.joined()
            let payload = WebSocketFrameEncoder.closePayload(code: .internalError, reason: reason)
            let cut = Array(payload.dropFirst(2))
            let full = Array(reason.utf8)
            #expect(payload.count <= 125)
            #expect(UTF8Validator.isValid(cut))
            #expect(full.starts(with: cut))
            if cut.count < full.count {
                // The next scalar would not have fitted.
                let next = String(decoding: full[cut.count...], as: UTF8.self).unicodeScalars.first!
                #expect(2 + cut.count + String(next).utf8.count > 125, "\(reason)")
            }
        }
    }
}
