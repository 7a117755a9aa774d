import Foundation
import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// `signal` over real sockets: relayed to the other party's device in an
    /// ongoing call and to nobody else, in order; refused for everyone and
    /// every state it is not for. And `getIceServers` with minted TURN credentials.
    @Suite("SignalingIntegration: signal relay and ICE servers", .blocking)
    struct SignalRelayTests {
        /// alice (a1, a2) calls bob (b1, b2) from a1; b2 accepts; carol (c1) looks on.
        static func ongoingCall(
            _ h: Harness
        ) throws -> (
            sessionId: String, a1: Device, a2: Device, b1: Device, b2: Device,
            c1: Device
        ) {
            let a1 = try h.device("alice", "a1"), a2 = try h.device("alice", "a2")
            let b1 = try h.device("bob", "b1"), b2 = try h.device("bob", "b2"), c1 = try h.device("carol", "c1")
            let call = try a1.initiate(to: "bob", "video").call()
            #expect(call.initiatorDevice == "a1")
            let accepted = try b2.accept(call.sessionId).call()
            #expect(accepted.status == .ongoing && accepted.acceptedBy == "b2" && accepted.initiatorDevice == "a1")
            for device in [a1, a2, b1, b2] { _ = try device.drainEvents() }
            return (call.sessionId, a1, a2, b1, b2, c1)
        }

        static func payload(_ kind: String, _ index: Int = 0) -> JSONValue {
            .object([("kind", .string(kind)), ("n", .integer(Int64(index)))])
        }

        @Test("delivered to the peer device in the call only, in order, both ways")
        func deliveredToThePeerDeviceOnly() throws {
            let h = try Harness()
            defer { h.finish() }
            let (sid, a1, a2, b1, b2, c1) = try Self.ongoingCall(h)

            for index in 0 ..< 20 {
                let reply = try a1.signal(sid, Self.payload("candidate", index))
                #expect(reply.ok && reply.data?["delivered"] == .bool(true), "\(reply)")
            }
            let offer = try b2.nextSignal()
            #expect(
                offer
                    == .object([
                        ("type", .string("signal")), ("sessionId", .string(sid)),
                        ("from", .object([("uid", .string("alice")), ("deviceId", .string("a1"))])),
                        ("payload", Self.payload("candidate", 0)),
                    ]))
            var received = [offer]
            for _ in 1 ..< 20 { received.append(try b2.nextSignal()) }
            #expect(received.map { $0["payload"]?["n"]?.integerValue } == (0 ..< 20).map { Int64($0) })

            #expect(try b2.signal(sid, Self.payload("answer")).data?["delivered"] == .bool(true))
            #expect(try a1.nextSignal()["payload"] == Self.payload("answer"))
            // Nobody else heard anything, and no call changed.
            for device in [a1, a2, b1, c1] { #expect(try device.drainSignals().isEmpty, "\(device)") }
            try expectNone([a1, a2, b1, b2, c1])
        }

        @Test("refused: third parties, other devices, ringing, ended, unknown calls, bad payloads")
        func refusals() throws {
            let h = try Harness()
            defer { h.finish() }
            let a1 = try h.device("alice", "a1"), a2 = try h.device("alice", "a2")
            let b1 = try h.device("bob", "b1"), c1 = try h.device("carol", "c1")
            let ringing = try a1.initiate(to: "bob").call()
            let sid = ringing.sessionId
            #expect(try a1.signal(sid, Self.payload("offer")).code == "ERR_CALL_NOT_STARTED")
            #expect(try b1.signal(sid, Self.payload("offer")).code == "ERR_CALL_NOT_STARTED")
            #expect(try c1.signal(sid, Self.payload("offer")).code == "ERR_CALL_NOT_A_PART")

            _ = try b1.accept(sid).call()
            let other = try a2.signal(sid, Self.payload("offer"))
            #expect(other.code == "ERR_CALL_OTHER_DEVICE" && other.message.contains("a1"), "\(other)")
            #expect(try c1.signal(sid, Self.payload("offer")).code == "ERR_CALL_NOT_A_PART")
            #expect(
                try a1.signal("0123456789abcdef0123456789abcdef", Self.payload("offer")).code
                    == "ERR_CALL_SESSION_NOT_FOUND")

            let tooLarge = JSONValue.object([("sdp", .string(String(repeating: "x", count: 16_384)))])
            let large = try a1.signal(sid, tooLarge)
            #expect(large.code == "ERR_VALIDATION" && large.message.contains("16384"), "\(large)")
            #expect(
                try a1.request("signal", [("sessionId", .string(sid)), ("payload", .string("offer"))]).code
                    == "ERR_VALIDATION")
            #expect(try a1.request("signal", [("payload", Self.payload("offer"))]).code == "ERR_VALIDATION")
            for device in [b1, a2, c1] { #expect(try device.drainSignals().isEmpty, "\(device)") }

            _ = try a1.end(sid).call()
            #expect(try a1.signal(sid, Self.payload("offer")).code == "ERR_CALL_TERMINATED")
            #expect(try b1.signal(sid, Self.payload("offer")).code == "ERR_CALL_TERMINATED")
            #expect(try c1.signal(sid, Self.payload("offer")).code == "ERR_CALL_NOT_A_PART")
            #expect(try b1.drainSignals().isEmpty)
        }

        @Test("a peer device that is away is told delivered false; the signal is not kept for it")
        func anAbsentPeerHearsNothingLater() throws {
            let h = try Harness()
            defer { h.finish() }
            let (sid, a1, _, _, b2, _) = try Self.ongoingCall(h)
            b2.close()
            // The server hears of the close on b2's loop, in its own time:
            // signal until it says the device is away (each answer is one
            // request's; 5 s bound), then no more signals were delivered.
            let deadline = monotonicSeconds() + 5
            var reply = try a1.signal(sid, Self.payload("offer"))
            while reply.ok, reply.data?["delivered"] == .bool(true), monotonicSeconds() < deadline {
                reply = try a1.signal(sid, Self.payload("offer"))
            }
            #expect(reply.ok && reply.data?["delivered"] == .bool(false), "\(reply)")
            let back = try h.device("bob", "b2")
            #expect(try back.activeCall()?.status == .ongoing)
            #expect(try back.drainSignals().isEmpty)
            #expect(try a1.signal(sid, Self.payload("offer", 1)).data?["delivered"] == .bool(true))
            #expect(try back.nextSignal()["payload"] == Self.payload("offer", 1))
        }

        @Test("getIceServers: configured servers as they are, TURN credentials minted per user")
        func iceServers() throws {
            let secret = "turn-shared-secret-for-tests"
            let h = try Harness { config in
                config.webrtc.iceServers = [
                    IceServer(urls: ["stun:127.0.0.1:3478"]),
                    IceServer(urls: ["turn:127.0.0.1:3478?transport=udp"]),
                    IceServer(
                        urls: ["turns:turn.example.com:5349"], username: "fixed",
                        credential: "pw"),
                ]
                config.webrtc.turnSecret = secret
                config.webrtc.turnCredentialSeconds = 600
            }
            defer { h.finish() }
            let a1 = try h.device("alice", "a1")
            let before = Int64(Date.now.timeIntervalSince1970)
            let reply = try a1.request("getIceServers")
            let after = Int64(Date.now.timeIntervalSince1970)
            let data = try #require(reply.data, "\(reply)")
            guard case .iceServers(let list) = try ResultData(json: data, answering: .getIceServers) else {
                Issue.record("not ICE servers: \(reply)")
                return
            }
            #expect(list.iceServers.count == 3)
            #expect(list.iceServers[0] == IceServer(urls: ["stun:127.0.0.1:3478"]))
            #expect(
                list.iceServers[2]
                    == IceServer(urls: ["turns:turn.example.com:5349"], username: "fixed", credential: "pw"))
            let turn = list.iceServers[1]
            let username = try #require(turn.username)
            let parts = username.split(separator: ":")
            #expect(parts.count == 2 && parts[1] == "alice")
            let expiry = try #require(Int64(parts[0]))
            #expect((before + 600 ... after + 600).contains(expiry))
            #expect(list.expiresAt == expiry * 1000)
            // The TURN REST API form: base64(HMAC-SHA1(secret, username)), here by OpenSSL's command line.
            #expect(turn.credential == (try Self.opensslHMACSHA1(key: secret, message: username)))
        }

        @Test("getIceServers without configuration: an empty list that never expires")
        func noIceServers() throws {
            let h = try Harness()
            defer { h.finish() }
            let reply = try h.device("alice", "a1").request("getIceServers")
            #expect(reply.data == .object([("iceServers", .array([])), ("expiresAt", .null)]), "\(reply)")
        }

        /// base64 of HMAC-SHA1, computed by the `openssl` program rather than
        /// by ringd's code.
        static func opensslHMACSHA1(key: String, message: String) throws -> String {
            let result = try Command.run(
                "/bin/sh",
                [
                    "-c", "printf %s \"$1\" | openssl dgst -sha1 -hmac \"$2\" -binary | base64",
                    "sh", message, key,
                ])
            #expect(result.status == 0)
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
