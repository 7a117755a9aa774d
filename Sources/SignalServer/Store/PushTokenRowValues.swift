import SignalProtocol

/// A push token row's values as either store reads them, so that SQLite
/// and PostgreSQL refuse a platform or environment this build does not
/// know, and skip that row, with the same words.
struct PushTokenRowValues {
    var uid: String
    var deviceId: String
    var platform: String?
    var token: String?
    var topic: String?
    var environment: String?
    var alertToken: String?
    var updatedAt: Int64

    /// The stored token, or nil for a row this build cannot read (edited by
    /// hand), which `store` ("call store") logs as skipped: one bad row must
    /// not stop a start.
    func decoded(by store: String) -> RegisteredPushToken? {
        do throws(SignalError) {
            guard let known = PushPlatform(rawValue: platform ?? "") else {
                throw SignalError(.validation, "unknown platform \(platform ?? "")")
            }
            let environment = try environment.map { (raw) throws(SignalError) -> PushEnvironment in
                guard let value = PushEnvironment(rawValue: raw) else {
                    throw SignalError(.validation, "unknown environment \(raw)")
                }
                return value
            }
            let registration = try PushRegistration(
                platform: known, token: token ?? "", topic: topic,
                environment: environment, alertToken: alertToken)
            return RegisteredPushToken(uid: uid, deviceId: deviceId, registration: registration, updatedAt: updatedAt)
        } catch {
            Log.warning("\(store): skipping the push token of \(uid)/\(deviceId): \(error.message)")
            return nil
        }
    }
}
