import SignalClient
import SignalProtocol

/// What `ringctl user` was asked: set a profile, or show a user.
struct UserRequest {
    var uid: String
    /// The profile to set; nil shows the user.
    var profile: UserProfile?

    init(_ arguments: Arguments) throws(Failure) {
        let action = arguments.positional(0) ?? ""
        uid = arguments.positional(1) ?? ""
        guard Identifier.isValid(uid) else {
            throw arguments.usage("\"\(uid)\" is not a valid uid (1–100 of A-Z a-z 0-9 . _ - @)")
        }
        switch action {
        case "set":
            guard let name = arguments.value("--name") else { throw arguments.usage("user set needs --name NAME") }
            do throws(SignalError) {
                profile = try UserProfile(name: name, avatarUrl: arguments.value("--avatar-url"))
            } catch {
                throw arguments.usage(error.message)
            }
        case "get":
            if arguments.value("--name") != nil || arguments.value("--avatar-url") != nil {
                throw arguments.usage("user get takes no --name or --avatar-url")
            }
        default:
            throw arguments.usage("ACTION must be set or get, not \"\(action)\"")
        }
    }
}

/// `ringctl user`: a user's profile through the REST API, one request.
enum UserCommand {
    static func run(_ request: UserRequest, settings: Settings, console: Console) async throws(Failure) {
        let uid = request.uid
        let record: UserRecord
        if let profile = request.profile {
            record = try await settings.rest { rest throws(ClientError) in try await rest.setProfile(profile, of: uid) }
                .answer
        } else {
            record = try await settings.rest { rest throws(ClientError) in try await rest.user(uid) }.answer
        }
        console.report(line(record), event: "user", [("user", record.json)])
    }

    /// `alice · Alice Martin · https://… · do-not-disturb busy until 14:05`.
    private static func line(_ record: UserRecord) -> String {
        var parts = [record.uid, record.profile?.name ?? "(no profile)"]
        if let avatarUrl = record.profile?.avatarUrl { parts.append(avatarUrl) }
        let setting = record.doNotDisturb
        if setting.mode != .off {
            parts.append(
                "do-not-disturb \(setting.mode.rawValue)"
                    + (setting.until.map { " until \(TimeText.local(milliseconds: $0))" } ?? ""))
        }
        return parts.joined(separator: " · ")
    }
}
