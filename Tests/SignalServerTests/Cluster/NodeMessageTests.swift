import SignalProtocol
import Testing

@testable import SignalCore
@testable import SignalServer

/// The body a transaction sends a node: each frame once, deliveries and
/// closes in order, and nothing a build cannot read delivered in part.
@Suite struct NodeMessageTests {
    @Test func framesAndClosesKeepTheirOrderAndEachFrameIsWrittenOnce() throws {
        var message = NodeMessage()
        let event = Array(#"{"type":"call","call":{"note":"é \"quoted\" \n"}}"#.utf8)
        message.send(
            event, to: [DeviceAddress(node: 3, loop: 0, connection: 7), DeviceAddress(node: 3, loop: 1, connection: 9)])
        message.close(DeviceAddress(node: 3, loop: 1, connection: 9), code: .replaced, reason: "replaced")
        message.send(Array(#"{"type":"result"}"#.utf8), to: [DeviceAddress(node: 3, loop: 0, connection: 7)])
        #expect(message.frames.count == 2)
        let deliveries = try #require(NodeMessage.deliveries(from: message.body))
        #expect(
            deliveries.map(\.0) == [
                DeviceAddress(loop: 0, connection: 7), DeviceAddress(loop: 1, connection: 9),
                DeviceAddress(loop: 1, connection: 9), DeviceAddress(loop: 0, connection: 7),
            ])
        guard case .frame(let first) = deliveries[0].1, case .close(let code, let reason) = deliveries[2].1 else {
            Issue.record("\(deliveries)")
            return
        }
        #expect(first == event)
        #expect(code == .replaced && reason == "replaced")
    }

    @Test(arguments: [
        "", "[]", #"{"frames":[]}"#, #"{"frames":["x"],"to":[[0,1,1]]}"#, #"{"frames":["x"],"to":[[0,-1,0]]}"#,
        #"{"frames":["x"],"to":[[0,1,70000,"r"]]}"#, #"{"frames":[1],"to":[[0,1,0]]}"#,
        #"{"frames":["x"],"to":[["0",1,0]]}"#,
    ])
    func aBodyThisBuildCannotReadDeliversNothing(body: String) {
        #expect(NodeMessage.deliveries(from: body) == nil)
    }

    @Test func lockKeysAreTheSameOnEveryNodeAndDifferPerUser() {
        // FNV-1a 64 of "alice": a fixed value, so every build of every node locks the same key.
        #expect(PostgresConnection.lockKey("alice") == Int64(bitPattern: 0x508b_2abb_65a0_3907))
        #expect(PostgresConnection.lockKey("alice") != PostgresConnection.lockKey("alicf"))
    }
}
