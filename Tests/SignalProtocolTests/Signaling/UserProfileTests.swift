import SignalProtocol
import TestSupport
import Testing

/// Profiles, do-not-disturb and the parties' names on the wire.
@Suite(.blocking) struct UserProfileTests {
    private func refusal(_ json: String) -> String? {
        do {
            _ = try UserProfile(fields: JSONFields(try JSONValue.parse(Array(json.utf8))))
            return nil
        } catch let error as SignalError {
            return error.code == .validation ? error.message : "\(error)"
        } catch {
            return "\(error)"
        }
    }

    @Test func aProfileNeedsANameAndTakesOnlyHttpsAvatars() {
        #expect(refusal(#"{"name":"Alice","avatarUrl":"https://img.example/a.png","metadata":{"k":1}}"#) == nil)
        #expect(refusal(#"{"name":"\#(String(repeating: "é", count: 100))"}"#) == nil, "100 characters, not bytes")
        #expect(refusal(#"{"name":"\#(String(repeating: "x", count: 101))"}"#)?.hasPrefix("name") == true)
        #expect(refusal(#"{"name":""}"#)?.hasPrefix("name") == true)
        #expect(refusal(#"{"name":"Eve\u0007"}"#)?.hasPrefix("name") == true)
        #expect(refusal(#"{"avatarUrl":"https://img.example/a.png"}"#)?.hasPrefix("name") == true)
        for url in [
            "http://img.example/a.png", "https://", "https:///path", "javascript:alert(1)",
            "https://img.example/a b.png", "https://img.example/" + String(repeating: "a", count: 2030),
        ] {
            #expect(refusal(#"{"name":"A","avatarUrl":"\#(url)"}"#)?.hasPrefix("avatarUrl") == true, "\(url)")
        }
        #expect(refusal(#"{"name":"A","avatarUrl":"HTTPS://IMG.EXAMPLE/A.PNG"}"#) == nil)
        #expect(refusal(#"{"name":"A","metadata":[1]}"#)?.hasPrefix("metadata") == true)
    }

    @Test func doNotDisturbParsesItsModeAndUntil() throws {
        func parse(_ json: String) throws -> DoNotDisturb {
            try DoNotDisturb(fields: JSONFields(try JSONValue.parse(Array(json.utf8))))
        }
        #expect(try parse(#"{"mode":"busy"}"#) == DoNotDisturb(mode: .busy))
        #expect(try parse(#"{"mode":"silent","until":5000}"#) == DoNotDisturb(mode: .silent, until: 5000))
        #expect(throws: SignalError.self) { try parse(#"{"mode":"off","until":5000}"#) }
        #expect(throws: SignalError.self) { try parse(#"{"mode":"loud"}"#) }
        #expect(throws: SignalError.self) { try parse(#"{"mode":"busy","until":0}"#) }
        let setting = DoNotDisturb(mode: .busy, until: 5000)
        #expect(setting.mode(at: 4999) == .busy && setting.mode(at: 5000) == .off)
        #expect(DoNotDisturb(mode: .silent).mode(at: .max) == .silent)
    }

    @Test func partiesCarryTheirNamesAndACallItsSilenceOnlyWhenSet() throws {
        var call = Call(
            sessionId: "s", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
            initiatedAt: 1, timeoutMs: 30_000)
        #expect(call.json["initiator"] == .object([("uid", .string("alice"))]))
        #expect(call.json["silent"] == nil)
        call.initiatorName = "Alice"
        call.initiatorAvatarUrl = "https://img.example/a.png"
        call.receiverName = "Bob"
        call.silent = true
        #expect(
            call.json["initiator"]
                == .object([
                    ("uid", .string("alice")), ("name", .string("Alice")),
                    ("avatarUrl", .string("https://img.example/a.png")),
                ]))
        #expect(call.json["receiver"] == .object([("uid", .string("bob")), ("name", .string("Bob"))]))
        #expect(call.json["silent"] == .bool(true))
        #expect(try Call(json: call.json) == call)
    }

    @Test func aUserRecordReadsBack() throws {
        let record = UserRecord(
            uid: "bob", profile: try UserProfile(name: "Bob", metadata: .object([("team", .string("red"))])),
            doNotDisturb: DoNotDisturb(mode: .busy, until: 9), updatedAt: 7)
        #expect(try UserRecord(json: record.json) == record)
        let bare = UserRecord(uid: "carol", updatedAt: 1)
        #expect(
            bare.json
                == .object([
                    ("uid", .string("carol")), ("doNotDisturb", .object([("mode", .string("off"))])),
                    ("updatedAt", .integer(1)),
                ]))
        #expect(try UserRecord(json: bare.json) == bare)
    }
}
