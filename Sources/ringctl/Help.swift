/// The `--help` texts.
enum Help {
    /// The help of `command`, or of ringctl itself.
    static func text(for command: Subcommand?) -> String {
        switch command {
        case nil: main
        case .answer: answer
        case .call: call
        case .logs: logs
        case .token: token
        case .revoke: revoke
        case .status: status
        case .push: push
        case .user: user
        }
    }

    /// The global options, shown by every help.
    private static let globalOptions = """
        global options (before or after the command; flag, else variable, else default):
          --server URL      ringd's address (RINGCTL_SERVER; ws://127.0.0.1:8787);
                            wss://HOST:PORT speaks TLS, checked against the system's roots.
                            Several (nodes of a cluster): URL,URL… or --server again;
                            tried in order, one that is down is skipped, and a lost
                            connection moves on to the next
          --ca-file PATH    trust the CA (or self-signed certificate) in PATH for wss://
                            (RINGCTL_CA_FILE), e.g. data/tls-cert.pem from make cert
          --insecure        do not check the wss:// certificate at all (a throwaway
                            development certificate only; prints a warning)
          --as UID          who you are, with the auth key (RINGCTL_UID)
          --auth-key KEY    development auth key (RINGCTL_AUTH_KEY; ringd-dev-auth-key)
          --token TOKEN     log in with a minted token instead of --as (RINGCTL_TOKEN)
          --api-key KEY     REST API key, for token and revoke (RINGCTL_API_KEY; ringd-dev-api-key)
          --device ID       this device's id (default: ringd assigns one)
          --compress        offer permessage-deflate; used when ringd has ws.compression on
          --json            one JSON object per line on stdout for every event and outcome,
                            e.g. {"event":"ended","outcome":"ended","call":{…},"exitCode":0}
          -h, --help        this help
          --version         ringctl's version
        """

    /// The exit statuses of the call commands.
    private static let callExitCodes = """
        exit codes:
          0    the call connected and ended normally (other commands: success)
          1    server or network error: ringd unreachable, credentials refused, a failed
               request, or a call ended by connection loss or server shutdown
          2    usage error
          3    rejected
          4    busy
          5    unanswered (no answer before the ring timeout)
          6    cancelled
          130  interrupted: a second Ctrl-C (or SIGTERM) quits without waiting for ringd
        """

    /// The exit statuses of the other commands.
    private static let plainExitCodes = """
        exit codes: 0 success, 1 server or network error, 2 usage error, 130 interrupted
        """

    /// The help of ringctl itself.
    private static let main = """
        usage: ringctl [global options] COMMAND [options]

        A command-line client of ringd, the two-party ringing server.

        commands:
          answer            wait for calls and accept, reject or decline them as busy
          call UID          ring a user and follow the call until it ends
          logs              your call history as a table
          token UID         mint an auth token for a user (REST API key needed)
          revoke UID        revoke every token of a user (REST API key needed)
          status            server health and, with a user, that user's active call
          push PLATFORM TOKEN  set this device's push token (--remove: remove it)
          user set|get UID  a user's profile: the name calls show (REST API key needed)

        answer, call, logs and push need a user: --as UID (or RINGCTL_UID), or --token.
        `ringctl COMMAND --help` shows a command's options.

        \(globalOptions)

        --json events: waiting, incoming, ringing, connected, ended (with outcome and
        exitCode), missed, reconnecting, reconnected, signal (what the other device in
        the call relayed: sessionId, from, payload), stopped, error (with code, message
        and exitCode), log and logs, token, revoked, health, activeCall, pushToken,
        pushTokenRemoved.

        \(callExitCodes)

        examples:
          ringctl --as bob answer                 # in one terminal
          ringctl --as alice call bob             # in another
          ringctl --as alice logs --status missed
          ringctl --json --as bob answer --auto-accept --hangup-after 5 --once
          ringctl token bob --ttl 3600
          ringctl --server ws://node-a:8787,ws://node-b:8787 --as bob answer
        """

    /// The help of `ringctl answer`.
    private static let answer = """
        usage: ringctl [global options] answer [options]

        Waits for calls to the user. Each ring prints
          incoming video call from alice · session <id> — [a]ccept [r]eject [b]usy
        and is answered by one key press on a terminal (a, r or b; h hangs up a
        connected call), by a line (a, r, b or h and Enter) otherwise, or by a flag.
        A ring that is cancelled, answered on another device or times out is
        reported, and waiting goes on; so is a call that came and went while the
        connection to ringd was down (`missed … (cancelled)`), once ringctl resumes. Ctrl-C ends a connected call (telling ringd)
        and exits with its outcome; otherwise it exits 0, leaving a ringing call
        ringing (another device may still answer it).

        options:
          --auto-accept           accept every call at once
          --accept-after SECONDS  accept every call after SECONDS
          --auto-reject           reject every call
          --busy                  decline every call as busy
          --reason TEXT           what a rejection (by key or flag) tells the caller,
                                  up to 140 characters ("In a meeting")
          --hangup-after SECONDS  hang up SECONDS after a call connects
          --once                  exit after the first call is over, with its outcome:
                                  accepted and ended 0, rejected 3, busy 4,
                                  timed out 5, cancelled by the caller 6,
                                  answered on another device 0

        \(globalOptions)

        \(callExitCodes)

        examples:
          ringctl --as bob answer
          ringctl --as bob answer --accept-after 2 --hangup-after 10 --once
          ringctl --as bob --json answer --busy
        """

    /// The help of `ringctl call`.
    private static let call = """
        usage: ringctl [global options] call UID [options]

        Rings UID and follows the call: shows the ringing with the seconds elapsed,
        `connected · session <id>` when UID accepts, and how it ended, e.g.
        `ended · 12.4 s · by alice (hangup)`, `rejected by bob`, `busy · bob is in
        another call`, `no answer after 45 s`, `cancelled by alice`.
        Ctrl-C while ringing cancels the call; Ctrl-C in the call hangs up; either
        way ringd confirms before ringctl exits. A second Ctrl-C quits at once.
        A lost connection (or a restart of ringd) is retried for 10 s, on the next
        server when several are given; ringctl then resumes, hearing what it
        missed, and says `reconnected · connected · session <id>` when the call
        goes on (`reconnected to ws://… · …` with several servers).
        The call request carries a client call id, sent again as it was when the
        connection drops before ringd answers, so a retry never places a second
        call: ringd answers with the call the first request placed.

        options:
          --type audio|video      the call type (default video)
          --timeout SECONDS       ring at most SECONDS, 0.05–300, to the millisecond
                                  (default: ringd's, 45)
          --metadata JSON         a JSON object sent with the call (at most 4 KiB)
          --hangup-after SECONDS  hang up SECONDS after the call connects
          --client-call-id ID     the client call id (1–64 of A-Z a-z 0-9 . _ - @;
                                  default: a new random one): run ringctl again with
                                  the same ID, while the call is live or within its
                                  ring timeout, to follow that call, not place another

        \(globalOptions)

        \(callExitCodes)

        examples:
          ringctl --as alice call bob
          ringctl --as alice call bob --type audio --timeout 20
          ringctl --as alice call bob --timeout 0.2; echo "exit $?"    # 5: unanswered
          ringctl --as alice call bob --metadata '{"topic":"standup"}' --hangup-after 30
          ringctl --as alice --json call bob; echo "exit $?"
          ringctl --as alice call bob --client-call-id standup-42   # again: the same call
        """

    /// The help of `ringctl logs`.
    private static let logs = """
        usage: ringctl [global options] logs [options]

        The user's call history, newest first: time (local), direction (in/out),
        the other party, type, status, duration, and `missed` for incoming calls
        that were not answered (unanswered, cancelled or busy).

        options:
          --status S              only calls with status S (initiated, ongoing, ended,
                                  rejected, busy, cancelled, unanswered) or missed ones
          --direction incoming|outgoing
          --with UID              only calls with UID
          --type audio|video
          --limit N               at most N calls, 1–100 (default 30); with --all, per page
          --all                   every call, page after page

        \(globalOptions)

        \(plainExitCodes)

        examples:
          ringctl --as alice logs
          ringctl --as bob logs --status missed --all
          ringctl --as alice --json logs --with bob --limit 5
        """

    /// The help of `ringctl token`.
    private static let token = """
        usage: ringctl [global options] token UID [--ttl SECONDS]

        Mints an auth token for UID through the REST API (POST /v1/users/UID/tokens,
        with the API key). Prints the token and, on a terminal, when it expires;
        `--json` gives both. Log in with it: ringctl --token TOKEN …

        options:
          --ttl SECONDS           the token's lifetime (default: ringd's, 24 h)

        \(globalOptions)

        \(plainExitCodes)

        examples:
          ringctl token bob
          TOKEN=$(ringctl token bob --ttl 3600) && ringctl --token "$TOKEN" answer
        """

    /// The help of `ringctl revoke`.
    private static let revoke = """
        usage: ringctl [global options] revoke UID

        Revokes every token issued to UID so far through the REST API (DELETE
        /v1/users/UID/tokens, with the API key). Open connections stay open.

        \(globalOptions)

        \(plainExitCodes)

        examples:
          ringctl revoke bob
          ringctl --server ws://ringd.example:8787 --api-key "$KEY" revoke bob
        """

    /// The help of `ringctl status`.
    private static let status = """
        usage: ringctl [global options] status

        Shows ringd's health (GET /healthz) and, when a user is given (--as, --token
        or their variables), that user's active call.

        \(globalOptions)

        \(plainExitCodes)

        examples:
          ringctl status
          ringctl --as bob status
          ringctl --json status
        """

    /// The help of `ringctl user`.
    private static let user = """
        usage: ringctl [global options] user set UID --name NAME [--avatar-url URL]
               ringctl [global options] user get UID

        Sets or shows a user's profile through the REST API (PUT and GET
        /v1/users/UID, with the API key): calls placed after carry the name and picture
        in their initiator and receiver, and pushes show the caller's name
        (docs/PROTOCOL.md). `get` also shows the user's do-not-disturb.

        options:
          --name NAME             the display name, 1 to 100 characters (set)
          --avatar-url URL        an https URL of the user's picture (set)

        \(globalOptions)

        \(plainExitCodes)

        examples:
          ringctl user set alice --name "Alice Martin" --avatar-url https://cdn.example.com/alice.png
          ringctl user get alice --json
        """

    /// The help of `ringctl push`.
    private static let push = """
        usage: ringctl [global options] push PLATFORM TOKEN [--topic BUNDLE_ID] [--environment ENV]
                                             [--alert-token HEX]
               ringctl [global options] push --remove

        Sets the push token of the device ringctl logs in as (--as UID --device ID), as
        the app on that device would: while the device is not connected, ringd pushes
        its calls to it (docs/PUSH.md). PLATFORM is apns-voip (PushKit's token, in hex)
        or fcm (the FCM registration token).

        options:
          --topic BUNDLE_ID       apns-voip: the app's bundle id (default: ringd's
                                  push.apns.bundleId)
          --environment ENV       apns-voip: sandbox for a development build
                                  (default: production)
          --alert-token HEX       apns-voip: the app's regular APNs token, for
                                  missed-call alerts
          --remove                remove the device's token instead

        \(globalOptions)

        \(plainExitCodes)

        examples:
          ringctl --as bob --device bob-iphone push apns-voip 5f0c2a9e…2a1f --topic com.example.app
          ringctl --as bob --device bob-pixel push fcm "$FCM_TOKEN"
          ringctl --as bob --device bob-iphone push --remove
        """
}
