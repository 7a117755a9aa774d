import Foundation
import SignalCore
import SignalProtocol

/// Pushes to APNs (HTTP/2, token-based authentication): the VoIP push
/// for a ringing call, the missed-call alert, and what an answer means.
enum APNsPush {
    /// The largest VoIP payload APNs takes.
    static let maxPayloadBytes = 5120
    /// The largest payload of any other push, the alert's.
    static let maxAlertPayloadBytes = 4096
    /// How long APNs keeps a missed-call alert for a phone that is off.
    static let alertTTLSeconds: Int64 = 86_400

    /// The payload: an empty `aps` (a VoIP push shows nothing by itself; the
    /// app reports the call to CallKit) and what the app needs to do so,
    /// with `callerName` and `callerAvatarUrl` when ``PushCaller`` knows
    /// them. Its size is bounded by construction: a session id, a uid of at
    /// most 100 characters, a name and an avatar URL within PushCaller's
    /// bounds stay well under ``maxPayloadBytes`` (a test holds the worst
    /// case to it).
    static func payload(for call: Call, caller: PushCaller) -> [UInt8] {
        var members: [(key: String, value: JSONValue)] = [
            ("aps", .object([])),
            ("sessionId", .string(call.sessionId)),
            ("callerUid", .string(call.initiator)),
            ("callType", .string(call.callType.rawValue)),
            ("initiatedAt", .integer(call.initiatedAt)),
            ("ringTimeout", .integer(Int64(call.timeout))),
        ]
        if let name = caller.name { members.append(("callerName", .string(name))) }
        if let avatar = caller.avatarURL { members.append(("callerAvatarUrl", .string(avatar))) }
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        return bytes
    }

    /// The POST for `token`; `jwt` is the current provider token. The push
    /// expires when the call stops ringing, so a phone that comes back
    /// later is not rung for a call long over.
    static func request(
        for call: Call, token: RegisteredPushToken, settings: PushSettings,
        jwt: String
    ) -> OutboundRequest {
        let base = token.registration.environment == .sandbox ? settings.apns.sandboxURL : settings.apns.productionURL
        let headers = [
            ("authorization", "bearer \(jwt)"),
            ("apns-topic", topic(for: token, settings: settings)),
            ("apns-push-type", "voip"),
            ("apns-priority", "10"),
            ("apns-expiration", String((call.ringDeadline + 999) / 1000)),
            ("apns-id", UUID().uuidString.lowercased()),
            ("apns-collapse-id", call.sessionId),
            ("content-type", "application/json"),
        ]
        return OutboundRequest(
            url: "\(base)/3/device/\(token.registration.token)", headers: headers,
            body: payload(for: call, caller: PushCaller(of: call, settings: settings)), timeout: settings.timeout,
            caFile: settings.caFile)
    }

    /// The missed-call alert's payload: `aps.alert` in English and with the
    /// keys an app localizes it by, the default sound, and the call's ids.
    /// Under ``maxAlertPayloadBytes`` by construction, as ``payload(for:caller:)``.
    static func alertPayload(for call: Call, caller: PushCaller) -> [UInt8] {
        let name = caller.displayName
        let alert: JSONValue = .object([
            ("title", .string(PushCaller.AlertText.title)),
            ("body", .string(PushCaller.AlertText.body(name))),
            ("title-loc-key", .string(PushCaller.AlertText.apnsTitleKey)),
            ("loc-key", .string(PushCaller.AlertText.apnsBodyKey)),
            ("loc-args", .array([.string(name)])),
        ])
        var members: [(key: String, value: JSONValue)] = [
            ("aps", .object([("alert", alert), ("sound", .string("default"))])),
            ("type", .string(FCMPush.Kind.missedCall.rawValue)),
            ("sessionId", .string(call.sessionId)),
            ("callerUid", .string(call.initiator)),
            ("callType", .string(call.callType.rawValue)),
        ]
        if let name = caller.name { members.append(("callerName", .string(name))) }
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        return bytes
    }

    /// The alert's POST, to the device's alert token on the app's own topic
    /// (not `.voip`): shown by iOS itself, replacing an earlier alert for
    /// the same call (`apns-collapse-id`), kept a day for a phone that is
    /// off. Nil when the device has no alert token.
    static func alertRequest(
        for call: Call, token: RegisteredPushToken, settings: PushSettings, jwt: String, now: Int64
    ) -> OutboundRequest? {
        guard let alertToken = token.registration.alertToken else { return nil }
        let base = token.registration.environment == .sandbox ? settings.apns.sandboxURL : settings.apns.productionURL
        let headers = [
            ("authorization", "bearer \(jwt)"),
            ("apns-topic", alertTopic(for: token, settings: settings)),
            ("apns-push-type", "alert"),
            ("apns-priority", "10"),
            ("apns-expiration", String(now / 1000 + alertTTLSeconds)),
            ("apns-id", UUID().uuidString.lowercased()),
            ("apns-collapse-id", call.sessionId),
            ("content-type", "application/json"),
        ]
        return OutboundRequest(
            url: "\(base)/3/device/\(alertToken)", headers: headers,
            body: alertPayload(for: call, caller: PushCaller(of: call, settings: settings)),
            timeout: settings.timeout, caFile: settings.caFile)
    }

    /// `<bundle id>.voip`, from the token's topic or the configured bundle id.
    static func topic(for token: RegisteredPushToken, settings: PushSettings) -> String {
        let bundle = token.registration.topic ?? settings.apns.bundleId ?? ""
        return bundle.hasSuffix(".voip") ? bundle : bundle + ".voip"
    }

    /// The bundle id itself, from the token's topic or the configured one.
    static func alertTopic(for token: RegisteredPushToken, settings: PushSettings) -> String {
        let bundle = token.registration.topic ?? settings.apns.bundleId ?? ""
        return bundle.hasSuffix(".voip") ? String(bundle.dropLast(".voip".count)) : bundle
    }

    /// What APNs' answer means (its `reason` names the case).
    static func answer(_ response: OutboundResponse) -> PushAnswer {
        // A 200 whose body was cut short was still taken: sending it again
        // would ring twice.
        if let error = response.error, response.status == nil {
            return .retry(error.description)
        }
        guard let status = response.status else { return .retry("no answer") }
        let reason = (try? JSONValue.parse(response.body))?["reason"]?.stringValue ?? "HTTP \(status)"
        switch status {
        case 200: return .sent
        case 410: return .purge(reason)
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic": return .purge(reason)
        case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken":
            return .renewCredentials(reason)
        case 429, 500 ... 599: return .retry("\(status) \(reason)", after: response.retryAfter)
        default: return .failed("\(status) \(reason)")
        }
    }
}
