import SignalCore
import SignalProtocol

/// Messages to FCM HTTP v1: the ring and, when the call stops ringing,
/// the data message that stops the ringing screen; the missed-call alert,
/// a notification message Android shows itself; and what an answer means.
enum FCMPush {
    enum Kind: String, Sendable {
        case incomingCall = "incoming_call"
        case callCancelled = "call_cancelled"
        case missedCall = "missed_call"

        init(_ kind: PushMachine.Kind) {
            switch kind {
            case .ring: self = .incomingCall
            case .cancel: self = .callCancelled
            case .alert: self = .missedCall
            }
        }
    }

    /// How long FCM keeps a `call_cancelled` for a phone that is offline.
    static let cancelTTLSeconds = 60

    /// The `messages:send` body. Every `data` value is a string, as FCM
    /// requires; the ring lives only as long as the call rings (`ttl`), at
    /// `now` (ms). The caller is named as ``PushCaller`` says.
    static func message(_ kind: Kind, for call: Call, token: String, settings: PushSettings, now: Int64) -> [UInt8] {
        let caller = PushCaller(of: call, settings: settings)
        var data: [(key: String, value: JSONValue)] = [
            ("type", .string(kind.rawValue)),
            ("sessionId", .string(call.sessionId)),
            ("callerUid", .string(call.initiator)),
            ("callType", .string(call.callType.rawValue)),
        ]
        var members: [(key: String, value: JSONValue)] = [("token", .string(token))]
        var android: [(key: String, value: JSONValue)] = [("priority", .string("high"))]
        switch kind {
        case .incomingCall:
            data.append(("initiatedAt", .string(String(call.initiatedAt))))
            data.append(("ringTimeout", .string(String(call.timeout))))
            if let name = caller.name { data.append(("callerName", .string(name))) }
            if let avatar = caller.avatarURL { data.append(("callerAvatarUrl", .string(avatar))) }
            android.append(("ttl", .string("\(max(1, (call.ringDeadline - now + 999) / 1000))s")))
        case .callCancelled:
            data.append(("status", .string(call.status.rawValue)))
            android.append(("ttl", .string("\(cancelTTLSeconds)s")))
        case .missedCall:
            if let name = caller.name { data.append(("callerName", .string(name))) }
            let name = caller.displayName
            members.append(
                (
                    "notification",
                    .object([
                        ("title", .string(PushCaller.AlertText.title)),
                        ("body", .string(PushCaller.AlertText.body(name))),
                    ])
                ))
            android.append(("ttl", .string("\(APNsPush.alertTTLSeconds)s")))
            // The tag makes a second alert for the call replace the first;
            // the keys let the app word it in the phone's language.
            android.append(
                (
                    "notification",
                    .object([
                        ("tag", .string(call.sessionId)),
                        ("sound", .string("default")),
                        ("title_loc_key", .string(PushCaller.AlertText.fcmTitleKey)),
                        ("body_loc_key", .string(PushCaller.AlertText.fcmBodyKey)),
                        ("body_loc_args", .array([.string(name)])),
                    ])
                ))
        }
        members.append(("data", .object(data)))
        members.append(("android", .object(android)))
        var bytes: [UInt8] = []
        JSONValue.object([("message", .object(members))]).write(into: &bytes)
        return bytes
    }

    static func request(
        _ kind: Kind, for call: Call, token: RegisteredPushToken, project: String,
        accessToken: String, settings: PushSettings, now: Int64
    ) -> OutboundRequest {
        OutboundRequest(
            url: "\(settings.fcm.baseURL)/v1/projects/\(project)/messages:send",
            headers: [("authorization", "Bearer \(accessToken)"), ("content-type", "application/json")],
            body: message(kind, for: call, token: token.registration.token, settings: settings, now: now),
            timeout: settings.timeout, caFile: settings.caFile)
    }

    /// What FCM's answer means: its `error.status` and the `FcmError`
    /// detail's `errorCode` name the case.
    static func answer(_ response: OutboundResponse) -> PushAnswer {
        // A 200 whose body was cut short was still taken: sending it again
        // would ring twice.
        if let error = response.error, response.status == nil {
            return .retry(error.description)
        }
        guard let status = response.status else { return .retry("no answer") }
        let error = (try? JSONValue.parse(response.body))?["error"]
        var code = error?["status"]?.stringValue ?? "HTTP \(status)"
        if case .array(let details)? = error?["details"] {
            for detail in details { if let errorCode = detail["errorCode"]?.stringValue { code = errorCode } }
        }
        let message = error?["message"]?.stringValue ?? ""
        let reason = message.isEmpty ? code : "\(code): \(message)"
        switch status {
        case 200: return .sent
        case 404 where code == "UNREGISTERED": return .purge(reason)
        // INVALID_ARGUMENT also covers a malformed message; only one that
        // blames the token removes it. A bare 404 (a wrong project) or
        // SENDER_ID_MISMATCH (another project's service account) is the
        // configuration's fault, not the token's: purging would wipe every token.
        case 400 where code == "INVALID_ARGUMENT" && message.lowercased().contains("token"): return .purge(reason)
        case 401: return .renewCredentials(reason)
        case 429, 500 ... 599: return .retry("\(status) \(reason)", after: response.retryAfter)
        default: return .failed("\(status) \(reason)")
        }
    }
}
