import Foundation
import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// Profiles and do-not-disturb over real sockets: set over REST or by a
    /// device, shown in every call object, kept across a restart.
    @Suite("SignalingIntegration: users", .blocking)
    struct UserTests {
        static let alice = #"{"name":"Alice","avatarUrl":"https://img.example/alice.png","metadata":{"team":"blue"}}"#

        @Test("a profile set over REST names its user in results, events, histories and the REST call")
        func profilesNameTheParties() throws {
            let h = try Harness()
            defer { h.finish() }
            let put = try h.rest("PUT", "/v1/users/alice", body: Self.alice)
            #expect(put.status == 200, "\(put)")
            #expect(put.json?["name"] == .string("Alice") && put.json?["metadata"]?["team"] == .string("blue"))
            #expect(put.json?["doNotDisturb"] == .object([("mode", .string("off"))]))
            #expect(try h.rest("PUT", "/v1/users/bob", body: #"{"name":"Bob"}"#).status == 200)
            let got = try h.rest("GET", "/v1/users/alice")
            #expect(got.status == 200 && got.json == put.json, "\(got)")

            let a1 = try h.device("alice", "a1")
            let b1 = try h.device("bob", "b1")
            let placed = try a1.initiate(to: "bob").call()
            let initiator = JSONValue.object([
                ("uid", .string("alice")), ("name", .string("Alice")),
                ("avatarUrl", .string("https://img.example/alice.png")),
            ])
            #expect(placed.json["initiator"] == initiator)
            #expect(placed.json["receiver"] == .object([("uid", .string("bob")), ("name", .string("Bob"))]))
            let heard = try b1.waitForEvent(placed.sessionId, .initiated)
            #expect(heard.json["initiator"] == initiator)
            #expect(try b1.reject(placed.sessionId).ok)
            #expect(try b1.logs().data?["logs"]?[0]?["initiator"] == initiator)
            #expect(try h.rest("GET", "/v1/calls/\(placed.sessionId)").json?["initiator"] == initiator)

            // Deleted: later calls name nobody; the call placed before keeps its names.
            #expect(try h.rest("DELETE", "/v1/users/alice").status == 204)
            #expect(try h.rest("GET", "/v1/users/alice").status == 404)
            #expect(try h.rest("DELETE", "/v1/users/alice").status == 404)
            let later = try a1.initiate(to: "bob").call()
            #expect(later.json["initiator"] == .object([("uid", .string("alice"))]))
            #expect(try h.rest("GET", "/v1/calls/\(placed.sessionId)").json?["initiator"] == initiator)
        }

        @Test("bad profiles and settings are refused with ERR_VALIDATION and 400; an API key is needed")
        func refusals() throws {
            let h = try Harness()
            defer { h.finish() }
            for body in [
                #"{"avatarUrl":"https://img.example/a.png"}"#, #"{"name":""}"#,
                #"{"name":"A","avatarUrl":"http://img.example/a.png"}"#, #"{"name":"A","metadata":"x"}"#, "[]", "{",
            ] {
                let response = try h.rest("PUT", "/v1/users/alice", body: body)
                #expect(response.status == 400 && response.errorCode == "ERR_VALIDATION", "\(body): \(response)")
            }
            #expect(try h.rest("PUT", "/v1/users/not%20valid", body: #"{"name":"A"}"#).status == 400)
            #expect(try h.rest("PUT", "/v1/users/alice", body: #"{"name":"A"}"#, apiKey: nil).status == 401)
            #expect(try h.rest("GET", "/v1/users/alice", apiKey: "wrong").status == 401)
            for body in [#"{"mode":"loud"}"#, #"{"mode":"off","until":99999999999999}"#, #"{"mode":"busy","until":1}"#]
            {
                let response = try h.rest("PUT", "/v1/users/bob/do-not-disturb", body: body)
                #expect(response.status == 400 && response.errorCode == "ERR_VALIDATION", "\(body): \(response)")
            }
            let b1 = try h.device("bob", "b1")
            let past = try b1.request("setDoNotDisturb", [("mode", .string("busy")), ("until", .integer(1))])
            #expect(past.code == "ERR_VALIDATION", "\(past)")
            #expect(try h.rest("GET", "/v1/users/bob").status == 404, "nothing was stored")
        }

        @Test("do-not-disturb: busy from a device answers as busy; silent from REST rings quietly; off rings again")
        func doNotDisturb() throws {
            let h = try Harness()
            defer { h.finish() }
            let a1 = try h.device("alice", "a1")
            let b1 = try h.device("bob", "b1")
            let set = try b1.request("setDoNotDisturb", [("mode", .string("busy"))])
            #expect(set.data == .object([("doNotDisturb", .object([("mode", .string("busy"))]))]), "\(set)")
            let busy = try a1.initiate(to: "bob")
            #expect(try busy.call().status == .busy && busy.ringing == 0)
            #expect(try b1.waitForEvent(try busy.call().sessionId, .busy).endReason == .busy)
            let missed = try b1.logs([("callStatus", "missed")])
            #expect(missed.data?["logs"]?[0]?["sessionId"] == .string(try busy.call().sessionId), "\(missed)")

            // A device arriving hears the setting in its auth result.
            let b2 = try h.track(Device.connect(port: h.port))
            let auth = try b2.auth(uid: "bob", deviceId: "b2")
            #expect(auth.data?["doNotDisturb"] == .object([("mode", .string("busy"))]), "\(auth)")

            let until = Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000
            let silent = try h.rest(
                "PUT", "/v1/users/bob/do-not-disturb", body: #"{"mode":"silent","until":\#(until)}"#)
            #expect(silent.json?["doNotDisturb"] == .object([("mode", .string("silent")), ("until", .integer(until))]))
            let quiet = try a1.initiate(to: "bob")
            #expect(try quiet.call().status == .initiated && quiet.ringing == 2)
            #expect(try quiet.call().json["silent"] == .bool(true))
            #expect(try b1.waitForEvent(try quiet.call().sessionId, .initiated).json["silent"] == .bool(true))
            #expect(try a1.cancel(try quiet.call().sessionId).ok)

            #expect(try b2.request("setDoNotDisturb", [("mode", .string("off"))]).ok)
            #expect(try h.rest("GET", "/v1/users/bob").status == 404, "off with no profile keeps nothing")
            let loud = try a1.initiate(to: "bob").call()
            #expect(loud.status == .initiated && loud.json["silent"] == nil)
        }

        @Test("profiles and do-not-disturb survive a restart of the binary")
        func survivesRestart() throws {
            try withRingd { ringd in
                #expect(try rest(port: ringd.port, "PUT", "/v1/users/alice", body: Self.alice).status == 200)
                #expect(
                    try rest(port: ringd.port, "PUT", "/v1/users/bob/do-not-disturb", body: #"{"mode":"busy"}"#)
                        .status == 200)
                try ringd.restart()
                let a1 = try Device.open(port: ringd.port, uid: "alice", deviceId: "a1")
                defer { a1.close() }
                let call = try a1.initiate(to: "bob").call()
                #expect(call.status == .busy && call.initiatorName == "Alice", "\(call)")
            }
        }
    }
}
