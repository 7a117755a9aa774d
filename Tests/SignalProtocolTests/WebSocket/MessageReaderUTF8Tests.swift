import SignalProtocol
import TestSupport
import Testing

@Suite("WebSocketMessageReader: text validation", .blocking)
struct MessageReaderUTF8Tests {
    @Test("invalid UTF-8 in a text frame fails with 1007", arguments: invalidUTF8Cases)
    func invalidTextFails(_ test: UTF8Case) {
        let run = runReader([clientFrame(.text, test.bytes)])
        expectFailure(run, 1007)
        #expect(run.events.isEmpty)
    }

    @Test("invalid UTF-8 in a binary frame is fine", arguments: invalidUTF8Cases)
    func invalidBinaryIsFine(_ test: UTF8Case) {
        let run = runReader([clientFrame(.binary, test.bytes)])
        #expect(run.error == nil)
        #expect(run.events == [binaryMessage(test.bytes)])
    }

    @Test("valid UTF-8 text is accepted whole and in every two-fragment split", arguments: validUTF8Cases)
    func validTextAccepted(_ test: UTF8Case) {
        #expect(runReader([clientFrame(.text, test.bytes)]).events == [textMessage(test.bytes)])
        for cut in 0 ... test.bytes.count {
            let stream =
                clientFrame(.text, Array(test.bytes[..<cut]), fin: false)
                + clientFrame(.ping, [UInt8(cut)])
                + clientFrame(.continuation, Array(test.bytes[cut...]))
            let run = runReader([stream])
            #expect(run.error == nil, "cut at \(cut)")
            #expect(run.events == [.ping([UInt8(cut)]), textMessage(test.bytes)], "cut at \(cut)")
        }
    }

    @Test func multiByteCharactersSplitAcrossManyFragments() {
        let text = "a😀€é\u{10FFFF}z"
        let payload = utf8Bytes(text)
        // One byte per fragment.
        var stream: [UInt8] = []
        for (index, byte) in payload.enumerated() {
            stream += clientFrame(index == 0 ? .text : .continuation, [byte], fin: index == payload.count - 1)
        }
        #expect(runReader([stream]).events == [textMessage(text)])
        #expect(runReader(byteByByte(stream)).events == [textMessage(text)])
    }

    @Test("text ending inside a character fails with 1007", arguments: truncatedUTF8Cases)
    func truncatedTextFails(_ test: UTF8Case) {
        expectFailure(runReader([clientFrame(.text, test.bytes)]), 1007)
        // The same when the last fragment is empty or ends the message.
        let fragmented = clientFrame(.text, test.bytes, fin: false) + clientFrame(.continuation, [])
        expectFailure(runReader([fragmented]), 1007)
        // While the message is still open, truncation is not an error yet.
        let open = runReader([clientFrame(.text, test.bytes, fin: false)])
        #expect(open.error == nil)
        #expect(open.events.isEmpty)
    }

    @Test func invalidSequenceAcrossFragmentsFails() {
        // ED | A0 80: a surrogate only recognisable with the second fragment.
        let first = clientFrame(.text, [0x41, 0xED], fin: false)
        let second = clientFrame(.continuation, [0xA0, 0x80])
        let run = runReader([first, second])
        expectFailure(run, 1007)
        #expect(run.errorChunk == 1)
    }

    @Test func failsFastInsideAPartiallyReceivedFrame() {
        // A 1000-byte text frame whose 4th payload byte is invalid: only the
        // header and the first 4 payload bytes arrive.
        var payload = [UInt8](repeating: 0x61, count: 1_000)
        payload[3] = 0xC0
        let frame = clientFrame(.text, payload)
        let headerSize = frame.count - payload.count
        let prefix = Array(frame[..<(headerSize + 3)])
        let badByte = [frame[headerSize + 3]]
        let run = runReader([prefix, badByte])
        expectFailure(run, 1007)
        #expect(run.errorChunk == 1)  // not before the bad byte, and without the rest of the frame
    }

    @Test func failsFastByteByByteAtTheFirstInvalidByte() {
        for test in invalidUTF8Cases {
            guard case .invalid(let badIndex) = test.verdict else { continue }
            let padding = utf8Bytes("padding: ")
            let payload = padding + test.bytes + [UInt8](repeating: 0x20, count: 200)
            let frame = clientFrame(.text, payload)
            let headerSize = frame.count - payload.count
            let run = runReader(byteByByte(frame))
            expectFailure(run, 1007)
            #expect(run.errorChunk == headerSize + padding.count + badIndex, "\(test.name)")
        }
    }

    @Test func failsFastInsideAPartiallyReceivedContinuation() {
        let first = clientFrame(.text, utf8Bytes("ok "), fin: false)
        var rest = [UInt8](repeating: 0x62, count: 500)
        rest[10] = 0xFF
        let continuation = clientFrame(.continuation, rest)
        let headerSize = continuation.count - rest.count
        let run = runReader([
            first, Array(continuation[..<(headerSize + 10)]),
            Array(continuation[(headerSize + 10) ..< (headerSize + 11)]),
        ])
        expectFailure(run, 1007)
        #expect(run.errorChunk == 2)
    }

    @Test func validPrefixOfAnUnfinishedFrameDoesNotFail() {
        let frame = clientFrame(.text, utf8Bytes(String(repeating: "€", count: 100)))
        // Cut inside a character: not an error until more arrives.
        let run = runReader([Array(frame[..<(frame.count - 1)])])
        #expect(run.error == nil)
        #expect(run.events.isEmpty)
    }
}
