import SignalClient
import SignalProtocol

/// What `ringctl push` was asked: a token to set, or (nil) to remove the
/// device's token.
struct PushRequest {
    var registration: PushRegistration?

    init(_ arguments: Arguments, settings: Settings) throws(Failure) {
        // A token belongs to a device id: one ringd made up for this run
        // would never connect again.
        guard settings.deviceId != nil else {
            throw arguments.usage("push needs --device ID: the token belongs to that device")
        }
        guard !arguments.flag("--remove") else {
            if ["--topic", "--environment", "--alert-token"].contains(where: { arguments.value($0) != nil }) {
                throw arguments.usage("--remove takes no --topic, --environment or --alert-token")
            }
            return
        }
        let name = arguments.positional(0) ?? ""
        guard let platform = PushPlatform(rawValue: name) else {
            let platforms = PushPlatform.allCases.map(\.rawValue).joined(separator: " or ")
            throw arguments.usage("PLATFORM must be \(platforms), not \"\(name)\"")
        }
        var environment: PushEnvironment?
        if let text = arguments.value("--environment") {
            guard let parsed = PushEnvironment(rawValue: text) else {
                throw arguments.usage("--environment must be sandbox or production, not \"\(text)\"")
            }
            environment = parsed
        }
        do throws(SignalError) {
            registration = try PushRegistration(
                platform: platform, token: arguments.positional(1) ?? "",
                topic: arguments.value("--topic"), environment: environment,
                alertToken: arguments.value("--alert-token"))
        } catch {
            throw arguments.usage(error.message)
        }
    }
}

/// `ringctl push`: sets or removes the push token of the device ringctl logs
/// in as, over the WebSocket, as the app on that device would.
enum PushCommand {
    static func run(_ request: PushRequest, settings: Settings, console: Console) async throws(Failure) {
        let client = try await settings.connect(for: .push, reconnect: false)
        let device = "\(client.uid)/\(client.deviceId)"
        do throws(ClientError) {
            if let registration = request.registration {
                let token = try await client.registerPushToken(registration)
                console.report(
                    "push token of \(device) set (\(token.registration.platform.rawValue))", event: "pushToken",
                    [("pushToken", token.json)])
            } else {
                let removed = try await client.unregisterPushToken()
                console.report(
                    removed ? "push token of \(device) removed" : "\(device) had no push token",
                    event: "pushTokenRemoved",
                    [
                        ("uid", .string(client.uid)),
                        ("deviceId", .string(client.deviceId)),
                        ("removed", .bool(removed)),
                    ])
            }
        } catch {
            await client.close()
            throw Failure(error, server: settings.server)
        }
        await client.close()
    }
}
