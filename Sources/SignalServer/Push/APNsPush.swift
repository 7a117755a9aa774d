import Foundation
import SignalProtocol

/// VoIP pushes to APNs (HTTP/2, token-based authentication): the request
/// for a ringing call, and what an answer means.
enum APNsPush {
    /// The largest VoIP payload APNs takes.
    static let maxPayloadBytes = 5120

    /// The payload: an empty `aps` (a VoIP push shows nothing by itself; the
    /// app reports the call to CallKit) and what the app needs to do so.
    /// `callerName` comes from the call's metadata when it has one, and is
    /// left out if it would make the payload too large.
    static func payload(for call: Call) -> [UInt8] {
        let members: [(key: String, value: JSONValue)] = [
            ("aps", .object([])),
            ("sessionId", .string(call.sessionId)),
            ("callerUid", .string(call.initiator)),
            ("callType", .string(call.callType.rawValue)),
            ("initiatedAt", .integer(call.initiatedAt)),
            ("ringTimeout", .integer(Int64(call.timeout))),
        ]
        var bytes: [UInt8] = []
        if let name = call.callerName {
            JSONValue.object(members + [("callerName", .string(name))]).write(into: &bytes)
            if bytes.count <= maxPayloadBytes { return bytes }
            bytes = []
        }
        JSONValue.object(members).write(into: &bytes)
        return bytes
    }

    /// The POST for `token`; `jwt` is the current provider token. The push
    /// expires when the call stops ringing, so a phone that comes back
    /// later is not rung for a call long over.
    static func request(for call: Call, token: RegisteredPushToken, settings: PushSettings,
                        jwt: String) -> OutboundRequest {
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
        return OutboundRequest(url: "\(base)/3/device/\(token.registration.token)", headers: headers,
                               body: payload(for: call), timeout: settings.timeout, caFile: settings.caFile)
    }

    /// `<bundle id>.voip`, from the token's topic or the configured bundle id.
    static func topic(for token: RegisteredPushToken, settings: PushSettings) -> String {
        let bundle = token.registration.topic ?? settings.apns.bundleId ?? ""
        return bundle.hasSuffix(".voip") ? bundle : bundle + ".voip"
    }

    /// What APNs' answer means (its `reason` names the case).
    static func answer(_ response: OutboundResponse) -> PushAnswer {
        if let error = response.error, response.status == nil || response.status == 200 {
            return .retry(error.description)
        }
        guard let status = response.status else { return .retry("no answer") }
        let reason = (try? JSONValue.parse(response.body))?["reason"]?.stringValue ?? "HTTP \(status)"
        switch status {
        case 200: return .sent
        case 410: return .purge(reason)
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic": return .purge(reason)
        case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken": return .renewCredentials(reason)
        case 429, 500 ... 599: return .retry("\(status) \(reason)", after: response.retryAfter)
        default: return .failed("\(status) \(reason)")
        }
    }
}

extension Call {
    /// The caller's display name, when the call's metadata carries one as
    /// `callerName` (CometChat's apps put it there).
    var callerName: String? { metadata?["callerName"]?.stringValue }
}
