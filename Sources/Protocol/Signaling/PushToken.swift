/// Where a device's VoIP pushes go.
public enum PushPlatform: String, Hashable, Sendable, CaseIterable {
    /// Apple's PushKit VoIP push through APNs (iOS).
    case apnsVoip = "apns-voip"
    /// A high-priority FCM data message (Android).
    case fcm
}

/// Which APNs service a token belongs to: a build signed for development
/// gets sandbox tokens, an App Store or TestFlight build production ones.
public enum PushEnvironment: String, Hashable, Sendable, CaseIterable {
    case production, sandbox
}

/// A device's push token as it registers it (`registerPushToken`, or `PUT
/// /v1/users/{uid}/devices/{deviceId}/push-token`), validated: an APNs
/// token is hex (kept lower-case), an FCM token the characters FCM uses.
public struct PushRegistration: Hashable, Sendable {
    public var platform: PushPlatform
    public var token: String
    /// The app's bundle id (APNs only); pushes go to topic `<topic>.voip`.
    /// Without it the server's configured `push.apns.bundleId` applies.
    public var topic: String?
    /// APNs only; production unless told otherwise.
    public var environment: PushEnvironment?
    /// APNs only: the app's regular remote-notification token
    /// (`didRegisterForRemoteNotificationsWithDeviceToken`), for the
    /// missed-call alert. A VoIP token cannot show a notification, so
    /// without this an iOS device gets no alert. Hex, kept lower-case.
    public var alertToken: String?

    /// APNs device tokens are 32 bytes today; Apple reserves the right to
    /// lengthen them, so up to 100 bytes are taken.
    public static let apnsTokenHexDigits = 64 ... 200
    /// FCM registration tokens run to about 160 characters; the bound only
    /// keeps nonsense out.
    public static let fcmTokenLength = 32 ... 4096
    /// Bundle ids are at most 155 characters.
    public static let topicLength = 1 ... 155

    /// A registration after validation; throws `ERR_VALIDATION` naming what is wrong.
    public init(
        platform: PushPlatform, token: String, topic: String? = nil,
        environment: PushEnvironment? = nil, alertToken: String? = nil
    ) throws(SignalError) {
        switch platform {
        case .apnsVoip:
            guard Self.isAPNsToken(token) else {
                throw SignalError(
                    .validation,
                    "an apns-voip token must be an even number of \(Self.apnsTokenHexDigits.lowerBound) to \(Self.apnsTokenHexDigits.upperBound) hex digits"
                )
            }
            if let alertToken {
                guard Self.isAPNsToken(alertToken) else {
                    throw SignalError(
                        .validation,
                        "alertToken must be an even number of \(Self.apnsTokenHexDigits.lowerBound) to \(Self.apnsTokenHexDigits.upperBound) hex digits"
                    )
                }
            }
            if let topic {
                guard Self.topicLength.contains(topic.utf8.count), topic.utf8.allSatisfy(Self.isTopicByte) else {
                    throw SignalError(
                        .validation,
                        "topic must be an app's bundle id: \(Self.topicLength.upperBound) characters at most of A-Z a-z 0-9 . -"
                    )
                }
            }
            self.token = token.lowercased()
            self.alertToken = alertToken?.lowercased()
        case .fcm:
            guard Self.fcmTokenLength.contains(token.utf8.count), token.utf8.allSatisfy(Self.isFCMTokenByte) else {
                throw SignalError(
                    .validation,
                    "an fcm token must be \(Self.fcmTokenLength.lowerBound) to \(Self.fcmTokenLength.upperBound) characters of A-Z a-z 0-9 : _ - ."
                )
            }
            // An FCM token shows notifications itself: it needs no second token.
            guard topic == nil, environment == nil, alertToken == nil else {
                throw SignalError(.validation, "topic, environment and alertToken apply to apns-voip tokens only")
            }
            self.token = token
        }
        self.platform = platform
        self.topic = topic
        self.environment = environment
    }

    /// Parses the members of a `registerPushToken` frame or a REST body.
    public init(fields: JSONFields) throws(SignalError) {
        let platform = try fields.enumeration("platform", PushPlatform.self)
        try self.init(
            platform: platform, token: try fields.string("token"), topic: try fields.optionalString("topic"),
            environment: try fields.optionalEnumeration("environment", PushEnvironment.self),
            alertToken: try fields.optionalString("alertToken"))
    }

    /// The members a client sends.
    public var members: [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = [
            ("platform", .string(platform.rawValue)),
            ("token", .string(token)),
        ]
        if let topic { members.append(("topic", .string(topic))) }
        if let environment { members.append(("environment", .string(environment.rawValue))) }
        if let alertToken { members.append(("alertToken", .string(alertToken))) }
        return members
    }

    private static func isAPNsToken(_ token: String) -> Bool {
        let digits = token.utf8
        return apnsTokenHexDigits.contains(digits.count) && digits.count % 2 == 0 && digits.allSatisfy(isHexDigit)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "a") ... UInt8(ascii: "f"),
            UInt8(ascii: "A") ... UInt8(ascii: "F"):
            return true
        default:
            return false
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
            UInt8(ascii: "A") ... UInt8(ascii: "Z"):
            return true
        default:
            return false
        }
    }

    private static func isTopicByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }

    private static func isFCMTokenByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte)
            || [UInt8(ascii: ":"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ".")].contains(byte)
    }
}

/// A push token as the server holds it: whose device it is and when it was
/// registered.
public struct RegisteredPushToken: Hashable, Sendable {
    public var uid: String
    public var deviceId: String
    public var registration: PushRegistration
    /// When it was registered (ms since the Unix epoch).
    public var updatedAt: Int64

    public init(uid: String, deviceId: String, registration: PushRegistration, updatedAt: Int64) {
        self.uid = uid
        self.deviceId = deviceId
        self.registration = registration
        self.updatedAt = updatedAt
    }

    /// The wire form: `{"uid","deviceId","platform","token","topic"?,"environment"?,"alertToken"?,"updatedAt"}`.
    public var json: JSONValue {
        .object(
            [("uid", .string(uid)), ("deviceId", .string(deviceId))] + registration.members
                + [("updatedAt", .integer(updatedAt))])
    }

    public init(json: JSONValue) throws(SignalError) {
        let fields = JSONFields(json)
        self.init(
            uid: try fields.string("uid"), deviceId: try fields.string("deviceId"),
            registration: try PushRegistration(fields: fields), updatedAt: try fields.integer("updatedAt"))
    }
}
