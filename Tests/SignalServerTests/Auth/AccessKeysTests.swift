import Testing

@testable import SignalServer

/// Keys are matched by digest: only the exact bytes pass, whatever the
/// candidate's length relative to the key.
@Suite(.blocking) struct AccessKeysTests {
    @Test func onlyTheExactKeyMatches() throws {
        let keys = try AccessKeys(authKeys: ["short", "a-much-longer-auth-key-0123456789"], apiKeys: ["api-key-1"])
        #expect(keys.isAuthKey("short") && keys.isAuthKey("a-much-longer-auth-key-0123456789"))
        #expect(keys.isAPIKey("api-key-1"))
        for wrong in [
            "", "shor", "short ", "shortx", "a-much-longer-auth-key-012345678", "api-key-1", "SHORT",
            String(repeating: "s", count: 10_000),
        ] {
            #expect(!keys.isAuthKey(wrong), "\(wrong.prefix(20))")
        }
        #expect(!keys.isAPIKey("short") && !keys.isAPIKey("api-key-") && !keys.isAPIKey("api-key-12"))
        #expect(try !AccessKeys(authKeys: [], apiKeys: []).isAuthKey(""))
    }
}
