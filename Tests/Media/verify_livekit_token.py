"""Checks a media token ringd minted with LiveKit's own verifier.

Reads one JSON object on stdin: {"token", "apiKey", "apiSecret", "room",
"identity", "name"}. Verifies the token with livekit.api.TokenVerifier
(signature, issuer, validity window), checks its grant joins exactly that
room as that identity with that display name (null: none) and may publish
and subscribe, and that a verifier holding another
secret refuses it. Prints one line per check, "ok ..." or "FAIL ...", and
exits 1 if any failed.
"""

import json
import sys

from livekit.api import TokenVerifier


def main() -> int:
    request = json.load(sys.stdin)
    failures = 0

    def report(passed: bool, what: str) -> None:
        nonlocal failures
        print(("ok " if passed else "FAIL ") + what)
        if not passed:
            failures += 1

    claims = TokenVerifier(request["apiKey"], request["apiSecret"]).verify(request["token"])
    report(True, "the token verifies with the API key and secret")
    report(claims.identity == request["identity"], "the identity is the party's uid")
    report((claims.name or None) == request.get("name"), "the name is the party's profile name")
    video = claims.video
    report(video.room == request["room"] and video.room_join, "the grant joins the call's room")
    report(video.can_publish and video.can_subscribe, "the grant publishes and subscribes")
    try:
        TokenVerifier(request["apiKey"], request["apiSecret"] + "-other").verify(request["token"])
        report(False, "another secret is refused")
    except Exception:
        report(True, "another secret is refused")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
