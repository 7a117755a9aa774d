import SignalProtocol
import TestSupport
import Testing

/// `initiateCall`'s ring timeout in seconds (`timeout`) or milliseconds
/// (`timeoutMs`), and the call's `timeout` and `timeoutMs` on the wire.
@Suite(.blocking) struct RingTimeoutTests {
    static func parse(_ text: String) throws(ClientFrame.ParseError) -> ClientRequest {
        try ClientFrame.parse(Array(text.utf8)).request
    }

    static func initiate(_ timeout: String) -> String {
        #"{"type":"initiateCall","id":"1","receiverId":"bob","callType":"audio"\#(timeout)}"#
    }

    @Test func eachFormParsesAndEncodesAsItself() throws {
        let forms: [(String, RingTimeout?)] = [
            (#","timeout":30"#, .seconds(30)), (#","timeoutMs":200"#, .milliseconds(200)),
            (#","timeout":1"#, .seconds(1)), (#","timeout":300"#, .seconds(300)),
            (#","timeoutMs":50"#, .milliseconds(50)), (#","timeoutMs":300000"#, .milliseconds(300_000)),
            (#","timeoutMs":5000"#, .milliseconds(5000)), ("", nil),
            (#","timeout":null,"timeoutMs":250"#, .milliseconds(250)),
        ]
        for (member, timeout) in forms {
            let request = ClientRequest.initiateCall(
                receiverId: "bob", callType: .audio, timeout: timeout, metadata: nil)
            #expect(try Self.parse(Self.initiate(member)) == request, "\(member)")
            let encoded = String(decoding: ClientFrame(id: "1", request: request).encoded, as: UTF8.self)
            #expect(try Self.parse(encoded) == request)
            if !member.contains("null") { #expect(encoded == Self.initiate(member)) }
        }
        #expect(RingTimeout.seconds(30).inMilliseconds == 30_000 && RingTimeout.milliseconds(200).inMilliseconds == 200)
        let literal: RingTimeout = 45
        #expect(literal == .seconds(45), "a literal is seconds, as timeout always was")
        #expect(RingTimeout.seconds(.max).inMilliseconds == .max && RingTimeout.seconds(.min).inMilliseconds == .min)
    }

    @Test func outOfRangeOrBothAreRefusedNamingTheField() {
        let seconds = SignalError(.validation, "timeout must be an integer from 1 to 300 seconds")
        let milliseconds = SignalError(.validation, "timeoutMs must be an integer from 50 to 300000 milliseconds")
        let refusals: [(String, SignalError)] = [
            (#","timeout":0"#, seconds), (#","timeout":301"#, seconds), (#","timeout":-5"#, seconds),
            (#","timeoutMs":49"#, milliseconds), (#","timeoutMs":300001"#, milliseconds),
            (#","timeoutMs":0"#, milliseconds),
            (#","timeoutMs":0.5"#, SignalError(.validation, "timeoutMs must be an integer")),
            (#","timeoutMs":"200""#, SignalError(.validation, "timeoutMs must be an integer")),
            (
                #","timeout":1,"timeoutMs":1000"#,
                SignalError(.validation, "give timeout (seconds) or timeoutMs (milliseconds), not both")
            ),
        ]
        for (member, error) in refusals {
            #expect(throws: ClientFrame.ParseError(id: "1", error: error), "\(member)") {
                try Self.parse(Self.initiate(member))
            }
        }
    }

    /// `timeout` stays whole seconds, rounded up, beside the exact `timeoutMs`.
    @Test func theCallShowsWholeSecondsRoundedUpAndTheExactMilliseconds() throws {
        for (milliseconds, seconds) in [(200, 1), (1000, 1), (1001, 2), (45_000, 45), (299_999, 300), (50, 1)]
            as [(Int64, Int64)]
        {
            let call = Call(
                sessionId: "s", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
                initiatedAt: 1_000, timeoutMs: milliseconds)
            #expect(call.json["timeout"] == .integer(seconds) && call.json["timeoutMs"] == .integer(milliseconds))
            #expect(call.ringDeadline == 1_000 + milliseconds)
            #expect(try Call(json: call.json) == call)
        }
    }

    /// A server that predates `timeoutMs` sends only `timeout`.
    @Test func aCallWithoutTimeoutMsRangForItsSeconds() throws {
        guard case .object(let members) = ClientFrameTests.call.json else {
            Issue.record("a call is an object")
            return
        }
        let old = JSONValue.object(members.filter { $0.key != "timeoutMs" })
        #expect(try Call(json: old).timeoutMs == 45_000)
        let huge = JSONValue.object(
            members.filter { $0.key != "timeoutMs" && $0.key != "timeout" }
                + [("timeout", .integer(.max))])
        #expect(throws: SignalError(.validation, "timeout must be a number of seconds")) { try Call(json: huge) }
    }
}
