import SignalCore
import SignalProtocol

/// Who a push says is calling: the one choice of the caller's name and
/// picture that the ring pushes and the missed-call alerts share, and the
/// alert's words.
///
/// The name is the caller's profile name, as the call carries it (a
/// snapshot taken when the call was placed: `initiatorName`). The
/// call's `metadata.callerName` is written by the caller, who could ring
/// as "Your Bank": it names the caller only with `push.trustCallerMetadata`,
/// and then before the profile (a deployment that turns it on wants each
/// call's own label). Without a name an alert names the caller's uid.
struct PushCaller: Equatable {
    /// Unicode scalars of a name a push carries at most. With control
    /// characters made spaces, a scalar takes at most 4 bytes of JSON, so
    /// even an alert, which says the name three times, stays well under
    /// APNs' 4,096 bytes (a test holds the worst case to it).
    static let maxNameScalars = 256
    /// Bytes of an avatar URL a push carries at most, a profile's longest;
    /// one with anything but printable ASCII, or a `"` or `\`, is left out
    /// (a cut URL is broken), so that it takes as many bytes of JSON.
    static let maxAvatarURLBytes = UserProfile.maxAvatarUrlBytes

    /// The English of the missed-call alert and the keys apps localize it
    /// by (docs/PUSH.md, "Missed-call alerts"): iOS reads `Localizable.strings`
    /// keys, Android string resources.
    enum AlertText {
        static let title = "Missed call"
        static func body(_ caller: String) -> String { "Missed call from \(caller)" }
        static let apnsTitleKey = "RINGD_MISSED_CALL_TITLE"
        static let apnsBodyKey = "RINGD_MISSED_CALL"
        static let fcmTitleKey = "ringd_missed_call_title"
        static let fcmBodyKey = "ringd_missed_call"
    }

    var uid: String
    var name: String?
    var avatarURL: String?

    init(of call: Call, settings: PushSettings) {
        let claimed = settings.trustCallerMetadata ? call.metadata?["callerName"]?.stringValue : nil
        uid = call.initiator
        name = claimed.flatMap(Self.cleanName) ?? call.initiatorName.flatMap(Self.cleanName)
        avatarURL = call.initiatorAvatarUrl.flatMap(Self.cleanAvatarURL)
    }

    /// What an alert calls the caller: the name, else the uid.
    var displayName: String { name ?? uid }

    /// `raw` with control characters made spaces, cut to
    /// ``maxNameScalars``, trimmed; nil when nothing is left.
    static func cleanName(_ raw: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars.prefix(maxNameScalars) {
            scalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        let name = String(scalars).trimmingWhitespace
        return name.isEmpty ? nil : name
    }

    /// `raw` when it fits a push as it is: printable ASCII but `"` and
    /// `\`, at most ``maxAvatarURLBytes``.
    static func cleanAvatarURL(_ raw: String) -> String? {
        let bytes = raw.utf8
        guard !bytes.isEmpty, bytes.count <= maxAvatarURLBytes,
            bytes.allSatisfy({ (0x21 ... 0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else { return nil }
        return raw
    }
}

extension String {
    /// Without leading and trailing white space.
    fileprivate var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first ... last])
    }
}
