import SignalProtocol
import TestSupport
import Testing

func closeFrame(code: UInt16, reason: [UInt8] = []) -> [UInt8] {
    clientFrame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)] + reason)
}

let validCloseCodes: [UInt16] = [
    1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014,
    3000, 3999, 4000, 4999,
]
let invalidCloseCodes: [UInt16] = [0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535]

@Suite("WebSocketMessageReader: close frames", .blocking)
struct CloseFrameTests {
    @Test func emptyCloseHasNoCode() {
        let run = runReader([clientFrame(.close, [])])
        #expect(run.error == nil)
        #expect(run.events == [.close(code: nil, reason: "")])
    }

    @Test func oneBytePayloadFails() {
        for byte: UInt8 in [0x03, 0xE8, 0x00] {
            expectFailure(runReader([clientFrame(.close, [byte])]), 1002)
        }
    }

    @Test("valid codes are accepted", arguments: validCloseCodes)
    func validCode(_ code: UInt16) {
        let bare = runReader([closeFrame(code: code)])
        #expect(bare.error == nil)
        #expect(bare.events == [.close(code: WebSocketCloseCode(rawValue: code), reason: "")])
        let withReason = runReader(byteByByte(closeFrame(code: code, reason: utf8Bytes("bye ü€😀"))))
        #expect(withReason.events == [.close(code: WebSocketCloseCode(rawValue: code), reason: "bye ü€😀")])
    }

    @Test("invalid codes fail with 1002", arguments: invalidCloseCodes)
    func invalidCode(_ code: UInt16) {
        let run = runReader([closeFrame(code: code)])
        expectFailure(run, 1002)
        #expect(run.events.isEmpty)
        expectFailure(runReader([closeFrame(code: code, reason: utf8Bytes("reason"))]), 1002)
    }

    @Test func everyCodeIsJudgedByTheRegistryRanges() {
        let mismatches = (UInt16.min ... UInt16.max).filter { value in
            let expected =
                (1000 ... 1003).contains(value) || (1007 ... 1014).contains(value) || (3000 ... 4999).contains(value)
            return WebSocketCloseCode(rawValue: value).isValidOnWire != expected
        }
        #expect(mismatches.isEmpty)
        for value in UInt16(0) ... 5_100 {
            let run = runReader([closeFrame(code: value)])
            if WebSocketCloseCode(rawValue: value).isValidOnWire {
                #expect(run.events == [.close(code: WebSocketCloseCode(rawValue: value), reason: "")], "\(value)")
            } else {
                expectFailure(run, 1002)
            }
        }
    }

    @Test("a reason that is not valid UTF-8 fails with 1007", arguments: invalidUTF8Cases + truncatedUTF8Cases)
    func invalidReason(_ test: UTF8Case) {
        let run = runReader([closeFrame(code: 1000, reason: utf8Bytes("why: ") + test.bytes)])
        expectFailure(run, 1007)
    }

    @Test func longestReasonIsAccepted() {
        let reason = String(repeating: "r", count: 123)
        let run = runReader([closeFrame(code: 4000, reason: utf8Bytes(reason))])
        #expect(run.events == [.close(code: WebSocketCloseCode(rawValue: 4000), reason: reason)])
    }

    @Test func closeBetweenFragmentsIsReported() {
        let stream = clientFrame(.text, utf8Bytes("a"), fin: false) + closeFrame(code: 1000)
        let run = runReader([stream])
        #expect(run.events == [.close(code: .normalClosure, reason: "")])
    }

    @Test func closeCodeConstants() {
        #expect(WebSocketCloseCode.normalClosure.rawValue == 1000)
        #expect(WebSocketCloseCode.goingAway.rawValue == 1001)
        #expect(WebSocketCloseCode.protocolError.rawValue == 1002)
        #expect(WebSocketCloseCode.unsupportedData.rawValue == 1003)
        #expect(WebSocketCloseCode.noStatusReceived.rawValue == 1005)
        #expect(WebSocketCloseCode.abnormalClosure.rawValue == 1006)
        #expect(WebSocketCloseCode.invalidPayload.rawValue == 1007)
        #expect(WebSocketCloseCode.policyViolation.rawValue == 1008)
        #expect(WebSocketCloseCode.messageTooBig.rawValue == 1009)
        #expect(WebSocketCloseCode.mandatoryExtension.rawValue == 1010)
        #expect(WebSocketCloseCode.internalError.rawValue == 1011)
        #expect(WebSocketCloseCode.serviceRestart.rawValue == 1012)
        #expect(WebSocketCloseCode.tryAgainLater.rawValue == 1013)
        #expect(!WebSocketCloseCode.noStatusReceived.isValidOnWire)
        #expect(!WebSocketCloseCode.abnormalClosure.isValidOnWire)
        #expect(WebSocketCloseCode.messageTooBig.description == "1009")
    }
}
