import Foundation
import SignalCore
import SignalProtocol

/// VoIP pushes to APNs (HTTP/2, token-based authentication): the request
/// for a ringing call, and what an answer means.
enum APNsPush {
    /// The largest VoIP payload APNs takes.
    static let maxPayloadBytes = 5120

    /// The payload: an empty `aps` (a VoIP push shows nothing by itself; the
    /// app reports the call to CallKit) and what the app needs to do so,
    /// with `callerName` when the call's metadata has one. Its size is
    /// bounded by construction: a session id, a uid of at most 100
    /// characters and a name of at most 256 characters, however escaped,
    /// stay well under ``maxPayloadBytes`` (a test holds the worst case to it).
    static func payload(for call: Call) -> [UInt8] {
        var members: [(key: String, value: JSONValue)] = [
            ("aps", .object([])),
            ("sessionId", .string(call.sessionId)),
            ("callerUid", .string(call.initiator)),
            ("callType", .string(call.callType.rawValue)),
            ("initiatedAt", .integer(call.initiatedAt)),
            ("ringTimeout", .integer(Int64(call.timeout))),
        ]
        if let name = call.callerName { members.append(("callerName", .string(name))) }
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
            body: payload(for: call), timeout: settings.timeout, caFile: settings.caFile)
    }

    /// `<bundle id>.voip`, from the token's topic or the configured bundle id.
    static func topic(for token: RegisteredPushToken, settings: PushSettings) -> String {
        let bundle = token.registration.topic ?? settings.apns.bundleId ?? ""
        return bundle.hasSuffix(".voip") ? bundle : bundle + ".voip"
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

extension Call {
    /// Characters of `callerName` a push carries at most, so that a long one
    /// cannot push a payload past the services' limits (APNs 5,120 bytes,
    /// FCM 4,096 bytes of data).
    static let maxCallerNameLength = 256

    /// The caller's display name, when the call's metadata carries one as
    /// `callerName` (CometChat's apps put it there), cut to ``maxCallerNameLength``.
    var callerName: String? { metadata?["callerName"]?.stringValue.map { String($0.prefix(Self.maxCallerNameLength)) } }
}
