"""Checks ringd's webhook signatures with implementations that are not ringd's.

Reads one JSON object on stdin: {"body": "<base64 of the raw body>",
"headers": {"webhook-id": ..., ...}, "secrets": ["whsec_...", ...]}. Verifies
webhook-signature with the Standard Webhooks library once for each secret
alone (as a receiver that holds only that one would), makes sure the library
refuses a changed body and a secret that was not used, and checks
X-CometChat-Signature with hmac against the first secret. Prints one line per
check, "ok ..." or "FAIL ...", and exits 1 if any failed.
"""

import base64
import hashlib
import hmac
import json
import os
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def main() -> int:
    request = json.load(sys.stdin)
    body = base64.b64decode(request["body"])
    headers = request["headers"]
    secrets = request["secrets"]
    failures = 0

    def report(passed: bool, what: str) -> None:
        nonlocal failures
        print(("ok " if passed else "FAIL ") + what)
        failures += 0 if passed else 1

    for index, secret in enumerate(secrets, start=1):
        try:
            parsed = Webhook(secret).verify(body, headers)
            report(parsed == json.loads(body), f"webhook-signature verifies with secret {index}")
        except WebhookVerificationError as error:
            report(False, f"webhook-signature verifies with secret {index}: {error}")
        try:
            Webhook(secret).verify(body + b" ", headers)
            report(False, f"a changed body is refused with secret {index}")
        except WebhookVerificationError:
            report(True, f"a changed body is refused with secret {index}")

    unused = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    try:
        Webhook(unused).verify(body, headers)
        report(False, "a secret that was not used is refused")
    except WebhookVerificationError:
        report(True, "a secret that was not used is refused")

    key = base64.b64decode(secrets[0][len("whsec_"):] + "==")
    expected = hmac.new(key, body, hashlib.sha256).hexdigest()
    report(hmac.compare_digest(expected, headers["X-CometChat-Signature"]),
           "X-CometChat-Signature is the hex HMAC of the body with secret 1")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
