import SignalSystem
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The one syscall helper: EINTR is retried, EAGAIN is "would block", any
/// other failure is an error naming the call.
@Suite(.blocking) struct SystemCallTests {
    @Test func retriesEINTRUntilTheCallCompletes() throws {
        var attempts = 0
        let result = try syscall("fake") { () -> Int32 in
            attempts += 1
            if attempts < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        guard case .processed(let value) = result else {
            Issue.record("expected a result, got \(result)")
            return
        }
        #expect(value == 42 && attempts == 3)
    }

    @Test func reportsEAGAINAsWouldBlock() throws {
        let result = try syscall("fake") { () -> Int32 in
            errno = EAGAIN
            return -1
        }
        guard case .wouldBlock = result else {
            Issue.record("expected wouldBlock, got \(result)")
            return
        }
    }

    @Test func throwsOtherFailuresNamingTheCall() {
        #expect(throws: SystemError(call: "fake", code: ECONNRESET)) {
            _ = try syscall("fake") { () -> Int32 in
                errno = ECONNRESET
                return -1
            }
        }
        let error = SystemError(call: "connect", code: ECONNREFUSED)
        #expect(error.description == "connect failed: Connection refused (errno \(ECONNREFUSED))")
    }

    @Test func expectingAResultTurnsWouldBlockIntoAnError() {
        #expect(throws: SystemError(call: "accept", code: EAGAIN)) {
            _ = try syscallExpectingResult("accept") { () -> Int32 in
                errno = EAGAIN
                return -1
            }
        }
    }

    @Test func aRealCallFailsWithItsErrno() {
        #expect(throws: SystemError(call: "close", code: EBADF)) {
            _ = try syscallExpectingResult("close") { close(-1) }
        }
    }

    @Test func aDescriptorIsClosedOnce() throws {
        var pair: [Int32] = [0, 0]
        _ = try syscallExpectingResult("socketpair") { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) }
        defer { closeDescriptor(pair[1]) }
        let reader = FileDescriptor(pair[0])
        #expect(reader.isOpen)
        reader.close()
        #expect(!reader.isOpen && reader.rawValue == -1)
        reader.close()
        // The peer sees its other end gone. (Asking the number itself would
        // be a race: another thread of the test process may reuse it.)
        var byte: UInt8 = 1
        #expect(send(pair[1], &byte, 1, Int32(MSG_NOSIGNAL)) == -1 && errno == EPIPE, "the descriptor is closed")
    }
}

extension SystemError: Equatable {
    public static func == (lhs: SystemError, rhs: SystemError) -> Bool { lhs.call == rhs.call && lhs.code == rhs.code }
}
